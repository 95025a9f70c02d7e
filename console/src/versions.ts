// #/versions: the review queue (pending versions) first, then the versions in each other
// status; each with its permission diff, the actions its status allows, and its audit trail.

import { call } from "./api";
import { h, section, field, alertBox, time, shortDigest, uid } from "./dom";
import { state, mayChangeVersion } from "./state";

interface Event {
  action: string;
  status?: string;
  by?: string;
  at: string;
  note?: string;
}

interface Version {
  skill: string;
  user?: string;
  digest: string;
  version: string;
  status: string;
  source: string;
  grant?: Record<string, unknown>;
  diff?: string[];
  created_by: string;
  created_at: string;
  updated_by?: string;
  updated_at?: string;
  note?: string;
  events?: Event[];
}

// actions are version.Transitions: the actions each status allows. Only those the key's role may
// take are offered (state.mayChangeVersion: approve and reject need an admin, and a server with
// keys; publish, deprecate and yank a publisher); the API still decides, and a refusal it makes
// is shown in an alert.
const actions: Record<string, string[]> = {
  pending: ["approve", "reject"],
  draft: ["publish", "yank"],
  active: ["deprecate", "yank"],
  deprecated: ["publish", "yank"],
};

const groups: [string, string][] = [
  ["pending", "Review queue"],
  ["draft", "Drafts"],
  ["active", "Active"],
  ["deprecated", "Deprecated"],
  ["yanked", "Yanked"],
  ["rejected", "Rejected"],
];

const title = (a: string) => a[0].toUpperCase() + a.slice(1);

export async function versionsPage(main: HTMLElement, signal: AbortSignal, reload: () => void): Promise<void> {
  main.append(h("h1", { tabindex: -1 }, "Versions"));
  const lists = await Promise.all(groups.map(([status]) => call<{ versions: Version[]; more: boolean }>("GET", "/v1/versions?status=" + status + "&limit=100&events=true")));
  if (signal.aborted) return;
  groups.forEach(([status, name], i) => {
    const { versions, more } = lists[i];
    if (status !== "pending" && !versions.length) return;
    main.append(
      section(name,
        versions.length ? versions.map((v) => article(v, reload)) : h("p", null, status === "pending" ? "No version waits for review." : "None."),
        more ? h("p", null, "More than 100: the oldest are not shown.") : null),
    );
  });
}

function article(v: Version, reload: () => void): HTMLElement {
  const hid = uid("v");
  const note = h("input", { type: "text", autocomplete: "off" });
  const out = h("div");
  const allowed = actions[v.status] || [];
  const buttons = allowed.filter((a) => mayChangeVersion(a)).map((a) => {
    const b = h("button", { type: "button" }, title(a));
    b.addEventListener("click", async () => {
      out.replaceChildren();
      b.disabled = true;
      try {
        // The digest as the API wrote it (sha256:<hex>): the route reads its parameter unescaped.
        const digest = /^[a-z0-9]+:[0-9a-f]+$/.test(v.digest) ? v.digest : encodeURIComponent(v.digest);
        const path = `/v1/skills/${encodeURIComponent(v.skill)}/versions/${digest}/${a}`;
        await call("POST", path, { note: note.value });
        reload();
      } catch (e) {
        out.append(alertBox((e as Error).message));
        b.disabled = false;
      }
    });
    return b;
  });
  const events = v.events || [];
  return h("article", { "aria-labelledby": hid, class: "version" },
    h("h3", { id: hid }, `${v.skill} ${shortDigest(v.digest)}`),
    h("p", null, h("span", { class: "tag" }, v.status), ` version ${v.version || "?"}, from ${v.source || "?"}`, v.user ? `, user ${v.user}` : "",
      ", recorded by ", v.created_by || "the operator", " at ", time(v.created_at)),
    h("p", { class: "mono small" }, v.digest),
    v.diff && v.diff.length
      ? [h("p", null, "Asks for more than the published version:"), h("ul", { class: "diff" }, v.diff.map((d) => h("li", null, d)))]
      : h("p", null, "Asks for nothing beyond the published version."),
    buttons.length ? h("div", { class: "actions" }, field("Note", note), h("div", { class: "buttons" }, buttons)) : null,
    allowed.length && buttons.length < allowed.length ? h("p", { class: "may-not" }, whoActs(allowed.filter((a) => !mayChangeVersion(a)))) : null,
    out,
    h("details", { open: true },
      h("summary", null, `Audit trail (${events.length})`),
      events.length
        ? h("ol", { class: "audit" }, events.map((e) =>
            h("li", null, time(e.at), " ", e.by || "the operator", " ", e.action, e.status ? ` → ${e.status}` : "", e.note ? `: “${e.note}”` : "")))
        : h("p", null, "No events recorded.")),
  );
}

// whoActs says who takes the actions the key may not: "An admin approves or rejects this
// version.", "A publisher or an admin publishes or yanks this version."; approve and reject on
// a server without keys, where the API does not offer them, are the server's machine's.
function whoActs(left: string[]): string {
  const verbs = (as: string[]) => as.map((a) => (a === "publish" ? "publishes" : a + "s")).join(" or ");
  const admin = left.filter((a) => a === "approve" || a === "reject");
  const pub = left.filter((a) => a !== "approve" && a !== "reject");
  const out: string[] = [];
  if (admin.length) {
    out.push(state.me?.keyless
      ? `This server has no API keys, so it does not offer to ${admin.join(" or ")}: run skillbox ${admin.join(" or ")} on its machine, or give an admin a key.`
      : `An admin ${verbs(admin)} this version.`);
  }
  if (pub.length) out.push(`A publisher or an admin ${verbs(pub)} this version.`);
  return out.join(" ");
}
