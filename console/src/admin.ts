// #/tenants and #/cluster: for admins.

import { call } from "./api";
import { h, section, json, bytes, time, Child } from "./dom";

// table shows a list of objects as a table, a column per key of the first ones; nested values
// as JSON text.
function table(caption: string, rows: Record<string, unknown>[]): HTMLElement {
  if (!rows.length) return h("p", null, "None.");
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return h("table", null,
    h("caption", null, caption),
    h("thead", null, h("tr", null, cols.map((c) => h("th", { scope: "col" }, c.replace(/_/g, " "))))),
    h("tbody", null, rows.map((r) => h("tr", null, cols.map((c) => h("td", null, cell(r[c])))))));
}

function cell(v: unknown): Child {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return /^\d{4}-\d\d-\d\dT/.test(v) ? time(v) : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(", ");
  return h("code", null, JSON.stringify(v));
}

interface TenantInfo {
  name: string;
  skills: number;
  quota?: Record<string, unknown>;
  keys?: { name: string; role: string; user?: string }[];
  users?: string[];
}

// tenantsPage shows the tenants the key may read (GET /v1/tenants: the operator every one, a
// tenant's admin their own): skills, quota, users and keys by name and role, never a key.
export async function tenantsPage(main: HTMLElement): Promise<void> {
  main.append(h("h1", { tabindex: -1 }, "Tenants"));
  const { tenants } = await call<{ tenants: TenantInfo[] }>("GET", "/v1/tenants");
  if (!tenants.length) {
    main.append(h("p", null, "No tenant is yours to read."));
    return;
  }
  for (const t of tenants) {
    const quota = Object.entries(t.quota || {});
    main.append(
      section(t.name ? "Tenant " + t.name : "The default tenant",
        h("dl", { class: "facts" },
          h("dt", null, "Skills"), h("dd", null, String(t.skills)),
          h("dt", null, "Quota"), h("dd", null, quota.length ? quota.map(([k, v]) => `${k} ${v}`).join(", ") : "none"),
          h("dt", null, "Users"), h("dd", null, t.users && t.users.length ? t.users.join(", ") : "none")),
        t.keys && t.keys.length
          ? table(`API keys of ${t.name || "the default tenant"} (names only)`, t.keys.map((k) => ({ key: k.name, role: k.role, user: k.user || "" })))
          : h("p", null, "No API keys: the server is keyless."),
      ),
    );
  }
}

interface Presence {
  node: string;
  addr?: string;
  version?: string;
  slots: number;
  free: number;
  free_memory: number;
  at: string;
}

export async function clusterPage(main: HTMLElement): Promise<void> {
  const st = await call<any>("GET", "/v1/cluster");
  const nodes: Presence[] = st.nodes || [];
  main.append(
    h("h1", { tabindex: -1 }, "Cluster ", st.name || ""),
    h("p", null, `This node: ${st.node}; ${nodes.length} nodes; ${st.replicas} copies of each stream.`),
    section("Nodes",
      h("table", null,
        h("caption", null, "Nodes and their room"),
        h("thead", null, h("tr", null, ["Node", "Address", "Version", "Free slots", "Free memory", "Seen"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, nodes.map((n) =>
          h("tr", null, h("td", null, n.node), h("td", null, n.addr || ""), h("td", null, n.version || ""),
            h("td", { class: "num" }, `${n.free} of ${n.slots}`), h("td", { class: "num" }, bytes(n.free_memory)), h("td", null, time(n.at))))))),
    section("Queue and events",
      h("dl", { class: "facts" },
        ["queued", "queue_bytes", "events", "event_bytes", "events_unsent", "events_dropped", "held", "queue_leader", "events_leader"]
          .filter((k) => st[k] !== undefined)
          .map((k) => [h("dt", null, k.replace(/_/g, " ")), h("dd", null, /bytes/.test(k) ? bytes(st[k]) : String(st[k]))])),
      st.consumers && st.consumers.length ? table("Queue readers", st.consumers) : null),
    h("details", null, h("summary", null, "As the API answers"), h("pre", null, json(st))),
  );
}
