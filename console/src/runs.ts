// #/runs: the run history, filtered and paged. The filters live in the route's query
// (#/runs?skill=...), so a filtered page can be reloaded, bookmarked and gone back to.

import { call } from "./api";
import { h, field, select, time } from "./dom";

interface Listed {
  run_id: string;
  skill: string;
  status: string;
  caller?: string;
  face?: string;
  duration_ms?: number;
  started_at?: string;
  error?: { kind: string };
}

// filters are the query parameters of GET /v1/runs the form sets, with their labels.
const filters: [string, string][] = [["skill", "Skill"], ["status", "Status"], ["caller", "Caller"], ["since", "Since"], ["until", "Until"]];

const statuses = ["running", "queued", "succeeded", "failed", "interrupted"];

// toRFC3339 turns a datetime-local value (the operator's local time) into the API's UTC time.
function toRFC3339(local: string): string {
  const d = new Date(local);
  return isNaN(d.getTime()) ? local : d.toISOString();
}

function toLocal(iso: string): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return "";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export async function runsPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  const inputs: Record<string, HTMLInputElement | HTMLSelectElement> = {
    skill: h("input", { type: "text", autocomplete: "off" }),
    status: select([["", "Any"], ...statuses.map((s): [string, string] => [s, s])]),
    caller: h("input", { type: "text", autocomplete: "off" }),
    since: h("input", { type: "datetime-local" }),
    until: h("input", { type: "datetime-local" }),
  };
  for (const [k] of filters) {
    const v = query.get(k) || "";
    inputs[k].value = k === "since" || k === "until" ? (v ? toLocal(v) : "") : v;
  }
  const form = h("form", { class: "filters" },
    filters.map(([k, label]) => field(label, inputs[k])),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    if (query.get("limit")) q.set("limit", query.get("limit")!);
    for (const [k] of filters) {
      const v = inputs[k].value.trim();
      if (v) q.set(k, k === "since" || k === "until" ? toRFC3339(v) : v);
    }
    location.hash = "#/runs" + (q.toString() ? "?" + q : "");
  });
  main.append(h("h1", { tabindex: -1 }, "Runs"), form);

  const api = new URLSearchParams();
  for (const [k] of filters) if (query.get(k)) api.set(k, query.get(k)!);
  if (query.get("cursor")) api.set("cursor", query.get("cursor")!);
  // The page size: 50, or the route's limit (#/runs?limit=10), which the pager keeps.
  api.set("limit", /^\d{1,4}$/.test(query.get("limit") || "") ? query.get("limit")! : "50");
  const page = await call<{ runs: Listed[]; next_cursor?: string }>("GET", "/v1/runs?" + api);
  if (!page.runs.length) {
    main.append(h("p", null, "No runs match."));
  } else {
    main.append(
      h("table", { class: "runs" },
        h("caption", null, "Runs, newest first"),
        h("thead", null, h("tr", null, ["Run", "Skill", "Status", "Caller", "Started", "Duration"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, page.runs.map((r) =>
          h("tr", null,
            h("td", null, h("a", { href: "#/runs/" + encodeURIComponent(r.run_id) }, r.run_id)),
            h("td", null, r.skill),
            h("td", null, r.status, r.error ? ` (${r.error.kind})` : ""),
            h("td", null, r.caller || ""),
            h("td", null, time(r.started_at)),
            h("td", { class: "num" }, r.duration_ms !== undefined && r.status !== "running" ? `${r.duration_ms.toFixed(0)} ms` : ""),
          ))),
      ),
    );
  }
  const nav: HTMLElement[] = [];
  if (query.get("cursor")) {
    const first = new URLSearchParams(query);
    first.delete("cursor");
    nav.push(h("a", { href: "#/runs" + (first.toString() ? "?" + first : "") }, "First page"));
  }
  if (page.next_cursor) {
    const next = new URLSearchParams(query);
    next.set("cursor", page.next_cursor);
    nav.push(h("a", { href: "#/runs?" + next }, "Next page"));
  }
  if (nav.length) main.append(h("p", { class: "pager" }, ...nav.flatMap((a, i) => (i ? [" · ", a] : [a]))));
}
