// #/skills: every skill the key sees, filtered as the operator types.

import { call } from "./api";
import { h, field, select } from "./dom";

interface Summary {
  id: string;
  name: string;
  description: string;
  version?: string;
  tags?: string[];
  kind: string;
  language?: string;
  status: string;
  error?: string;
}

export async function skillsPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  const { skills } = await call<{ skills: Summary[] }>("GET", "/v1/skills");
  const search = h("input", { type: "search", autocomplete: "off" });
  search.value = query.get("q") || "";
  const kinds = [...new Set(skills.map((s) => s.kind))].sort();
  const statuses = [...new Set(skills.map((s) => s.status))].sort();
  const kind = select([["", "All kinds"], ...kinds.map((k): [string, string] => [k, k])], query.get("kind") || "");
  const status = select([["", "All statuses"], ...statuses.map((k): [string, string] => [k, k])], query.get("status") || "");
  const count = h("p", { class: "count" });
  const list = h("ul", { class: "skills", "aria-label": "Skills" });
  const show = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = skills.filter((s) => {
      if (kind.value && s.kind !== kind.value) return false;
      if (status.value && s.status !== status.value) return false;
      const hay = [s.id, s.name, s.description, ...(s.tags || [])].join(" ").toLowerCase();
      return words.every((w) => hay.includes(w));
    });
    list.replaceChildren(
      ...shown.map((s) =>
        h("li", null,
          h("a", { href: "#/skills/" + encodeURIComponent(s.id) }, s.id),
          " ",
          h("span", { class: "tag" }, s.kind),
          s.status !== "active" ? [" ", h("span", { class: "tag warn" }, s.status)] : null,
          h("p", { class: "desc" }, s.name && s.name !== s.id ? s.name + ": " : "", s.description),
          s.error ? h("p", { class: "desc err" }, s.error) : null,
        ),
      ),
    );
    count.textContent = `${shown.length} of ${skills.length} skills`;
  };
  for (const el of [search, kind, status]) el.addEventListener("input", show);
  main.append(
    h("h1", { tabindex: -1 }, "Skills"),
    h("form", { role: "search", class: "filters", onsubmit: (e: Event) => e.preventDefault() },
      field("Search skills", search), field("Kind", kind), field("Status", status)),
    count,
    list,
  );
  show();
}
