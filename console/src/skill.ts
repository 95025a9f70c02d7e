// #/skills/<id>: one skill: what it asked for and was granted, its SKILL.md, its programs, and
// a form to run it.

import { call, traceparent } from "./api";
import { h, append, section, field, checkbox, select, alertBox, uid, Child } from "./dom";
import { render } from "./markdown";
import { rememberTrace } from "./run";
import { state, atLeast } from "./state";

// mayRun says whether the key may run skills (a runner or above, as GET /v1/me says); cannotRun
// is what the run forms say instead of their button to a key that may not.
const mayRun = () => atLeast("runner");
const cannotRun = () => h("p", { class: "may-not" }, `A ${state.me?.role || "viewer"} key cannot run skills.`);

interface Detail {
  id: string;
  name: string;
  description: string;
  version?: string;
  kind: string;
  language?: string;
  status: string;
  error?: string;
  warnings?: string[];
  problems?: string[];
  sha256?: string;
  parameters?: Schema;
  requested?: Record<string, unknown>;
  requested_limits?: Record<string, unknown>;
  granted?: Record<string, unknown> & { refused?: string[]; limits?: Record<string, unknown> };
  instructions: boolean;
  resources: string[];
  programs?: string[];
  programs_granted?: Record<string, unknown> & { refused?: string[] };
  programs_problems?: string[];
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  default?: unknown;
}

export async function skillPage(main: HTMLElement, id: string, signal: AbortSignal): Promise<void> {
  const path = "/v1/skills/" + encodeURIComponent(id);
  const d = await call<Detail>("GET", path);
  append(main, [
    h("h1", { tabindex: -1 }, d.id),
    h("p", { class: "lead" }, d.name && d.name !== d.id ? d.name + ": " : "", d.description),
    h("dl", { class: "facts" },
      fact("Kind", d.kind), fact("Language", d.language), fact("Version", d.version), fact("Status", d.status),
      fact("Module sha256", d.sha256)),
    d.error ? h("p", { class: "err" }, d.error) : null,
    list("Problems", d.problems),
    list("Warnings", d.warnings),
    permissions(d),
  ]);
  const instructions = section("Instructions");
  main.append(instructions, programs(d), runForm(d, path, signal));
  if (!d.instructions) {
    instructions.append(h("p", null, "This skill has no SKILL.md."));
    return;
  }
  try {
    const doc = await call<{ content: string }>("GET", path + "/instructions", undefined, { Accept: "application/json" });
    instructions.append(h("div", { class: "md" }, render(doc.content)));
  } catch (e) {
    instructions.append(alertBox((e as Error).message));
  }
}

function fact(name: string, value: unknown): Child {
  if (value === undefined || value === null || value === "") return null;
  return [h("dt", null, name), h("dd", null, String(value))];
}

function list(title: string, items?: string[]): Child {
  if (!items || !items.length) return null;
  return h("div", { class: "notes" }, h("p", null, title + ":"), h("ul", null, items.map((p) => h("li", null, p))));
}

// show writes a permission's value as text: lists joined, files as "path (access)".
function show(v: unknown): string {
  if (v === undefined || v === null) return "none";
  if (Array.isArray(v)) {
    if (!v.length) return "none";
    return v.map((x) => (x && typeof x === "object" && "path" in x ? `${(x as any).path} (${(x as any).access || "read-only"})` : typeof x === "string" ? x : JSON.stringify(x))).join(", ");
  }
  if (typeof v === "object") {
    const e = Object.entries(v as Record<string, unknown>);
    return e.length ? e.map(([k, x]) => `${k} ${typeof x === "object" ? JSON.stringify(x) : String(x)}`).join(", ") : "none";
  }
  return String(v);
}

function permissions(d: Detail): HTMLElement {
  const req = d.requested || {};
  const grant = d.granted || {};
  const names = [...new Set([...Object.keys(req), ...Object.keys(grant)])].filter((k) => k !== "refused" && k !== "limits");
  const rows: HTMLElement[] = names.map((k) => h("tr", null, h("th", { scope: "row" }, k), h("td", null, show(req[k])), h("td", null, show(grant[k]))));
  const rl = d.requested_limits || {};
  const gl = grant.limits || {};
  for (const k of [...new Set([...Object.keys(rl), ...Object.keys(gl)])]) {
    rows.push(h("tr", null, h("th", { scope: "row" }, "limits." + k), h("td", null, k in rl ? show(rl[k]) : "default"), h("td", null, show(gl[k]))));
  }
  const refused = grant.refused || [];
  return section("Permissions",
    h("table", null,
      h("caption", null, "Requested by the skill, granted by the policy"),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, "Permission"), h("th", { scope: "col" }, "Requested"), h("th", { scope: "col" }, "Granted"))),
      h("tbody", null, rows)),
    refused.length
      ? [h("p", null, "Refused, and why:"), h("ul", { class: "refused" }, refused.map((r) => h("li", null, r)))]
      : h("p", null, "Nothing it asked for was refused."),
  );
}

// programs lists the skill's programs (scripts it may run in the sandbox), the grant they run
// under, and runs one with arguments, one per line.
function programs(d: Detail): HTMLElement {
  const progs = d.programs ?? (d.resources || []).filter((r) => r.startsWith("scripts/") && /\.(py|m?js|cjs|m?ts)$/.test(r));
  if (!progs.length) return section("Programs", h("p", null, "This skill has no programs."));
  const g = d.programs_granted;
  const grant: Child = g
    ? [
        h("p", null, "They run under this grant: network ", show(g.network), "; files ", show(g.files), "; env ", show(g.env), "; secrets ", show(g.secrets), "."),
        g.refused && g.refused.length ? [h("p", null, "Refused to them, and why:"), h("ul", { class: "refused" }, g.refused.map((r) => h("li", null, r)))] : null,
      ]
    : null;
  const prog = select(progs.map((p): [string, string] => [p, p]));
  const argv = h("textarea", { rows: 3, class: "mono", spellcheck: "false" });
  const stdin = h("textarea", { rows: 3, class: "mono", spellcheck: "false" });
  const out = h("div");
  const may = mayRun();
  const form = h("form", { class: "run" },
    h("fieldset", { class: "plain", disabled: !may },
      field("Program", prog), field("Program arguments", argv, "One argument a line."), field("Standard input", stdin)),
    may ? h("button", { type: "submit" }, "Run program") : cannotRun(), out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!may) return;
    out.replaceChildren();
    const args = argv.value.split("\n").filter((l) => l !== "");
    try {
      const tp = traceparent();
      const r = await call<{ run_id: string }>("POST", `/v1/skills/${encodeURIComponent(d.id)}/scripts/${encodeURIComponent(prog.value)}/runs?async=true`,
        { args, stdin: stdin.value || undefined }, { traceparent: tp.header });
      rememberTrace(r.run_id, tp.traceId);
      location.hash = "#/runs/" + encodeURIComponent(r.run_id);
    } catch (err) {
      out.append(alertBox((err as Error).message));
    }
  });
  return section("Programs",
    h("ul", null, progs.map((p) => h("li", null, h("code", null, p)))),
    grant,
    d.programs_problems && d.programs_problems.length
      ? [h("p", null, "Why they cannot run:"), h("ul", { class: "err" }, d.programs_problems.map((p) => h("li", null, p)))]
      : null,
    form);
}

function types(s: Schema): string[] {
  return Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
}

// A control made from one parameter's schema, and how to read its value (undefined: leave the
// argument out).
interface Control {
  el: HTMLElement;
  read: () => unknown;
}

function control(name: string, s: Schema, required: boolean): Control {
  const t = types(s).filter((x) => x !== "null");
  // The label is the parameter's name alone; whether it is required is said in its hint.
  const hint = [required ? "Required." : "", s.description || ""].filter(Boolean).join(" ") || undefined;
  if (Array.isArray(s.enum) && s.enum.length) {
    const opts: [string, string][] = s.enum.map((v, i): [string, string] => [String(i), typeof v === "string" ? v : JSON.stringify(v)]);
    const sel = select(required ? opts : [["", "(not set)"], ...opts]);
    const def = s.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(s.default));
    if (def >= 0) sel.value = String(def);
    if (required) sel.required = true;
    return { el: field(name, sel, hint), read: () => (sel.value === "" ? undefined : s.enum![Number(sel.value)]) };
  }
  if (t.length === 1 && t[0] === "boolean") {
    const c = checkbox(name, s.default === true);
    if (hint) {
      const hid = uid("hint");
      c.input.setAttribute("aria-describedby", hid);
      c.el.append(h("p", { class: "hint", id: hid }, hint));
    }
    return { el: c.el, read: () => c.input.checked };
  }
  if (t.length === 1 && (t[0] === "number" || t[0] === "integer")) {
    const input = h("input", { type: "number", step: t[0] === "integer" ? "1" : "any", required: required });
    if (typeof s.default === "number") input.value = String(s.default);
    return { el: field(name, input, hint), read: () => (input.value === "" ? undefined : Number(input.value)) };
  }
  if (t.length === 1 && t[0] === "string") {
    const input = h("input", { type: "text", required: required, autocomplete: "off" });
    if (typeof s.default === "string") input.placeholder = s.default;
    return { el: field(name, input, hint), read: () => (input.value === "" && !required ? undefined : input.value) };
  }
  const area = h("textarea", { rows: 3, required: required, class: "mono" });
  if (s.default !== undefined) area.placeholder = JSON.stringify(s.default);
  return {
    el: field(name, area, (hint ? hint + " " : "") + "A JSON value."),
    read: () => {
      if (area.value.trim() === "") return undefined;
      try {
        return JSON.parse(area.value);
      } catch (e) {
        throw new Error(`${name}: not JSON: ${(e as Error).message}`);
      }
    },
  };
}

function runForm(d: Detail, path: string, signal: AbortSignal): HTMLElement {
  if (d.kind !== "executable") {
    return section("Run", h("p", null, "This skill is instructions for an agent: it has no code to run."));
  }
  const schema = d.parameters || {};
  const required = new Set(schema.required || []);
  // Required parameters first, then the others, each group in the schema's order.
  const props = Object.entries(schema.properties || {});
  props.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
  const controls = props.map(([name, s]) => [name, control(name, s || {}, required.has(name))] as [string, Control]);
  const fields = h("div", { class: "params" }, controls.map(([, c]) => c.el));
  if (!controls.length) fields.append(h("p", null, "This skill takes no arguments."));
  const raw = checkbox("Raw JSON");
  const area = h("textarea", { rows: 6, class: "mono", spellcheck: "false" });
  area.value = "{}";
  const rawField = field("Arguments (JSON)", area);
  rawField.hidden = true;
  const out = h("div");
  const args = (): unknown => {
    const a: Record<string, unknown> = {};
    for (const [name, c] of controls) {
      const v = c.read();
      if (v !== undefined) a[name] = v;
    }
    return a;
  };
  raw.input.addEventListener("change", () => {
    if (raw.input.checked) {
      try {
        area.value = JSON.stringify(args(), null, 2);
      } catch {
        // leave what was there
      }
    }
    fields.hidden = raw.input.checked;
    for (const el of fields.querySelectorAll("input, select, textarea")) (el as HTMLInputElement).disabled = raw.input.checked;
    rawField.hidden = !raw.input.checked;
  });
  // A key that may not run sees the form, disabled, and why, instead of the Run button.
  const may = mayRun();
  const button = h("button", { type: "submit" }, "Run");
  const form = h("form", { class: "run", novalidate: false },
    h("fieldset", { class: "plain", disabled: !may }, fields, raw.el, rawField), may ? button : cannotRun(), out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!may) return;
    out.replaceChildren();
    let body: unknown;
    try {
      body = raw.input.checked ? JSON.parse(area.value || "{}") : args();
    } catch (err) {
      out.append(alertBox(raw.input.checked ? "Arguments (JSON) is not JSON: " + (err as Error).message : (err as Error).message));
      return;
    }
    button.disabled = true;
    try {
      const tp = traceparent();
      const r = await call<{ run_id: string }>("POST", path + "/runs?async=true", { args: body }, { traceparent: tp.header });
      rememberTrace(r.run_id, tp.traceId);
      if (!signal.aborted) location.hash = "#/runs/" + encodeURIComponent(r.run_id);
    } catch (err) {
      out.append(alertBox((err as Error).message));
    } finally {
      button.disabled = false;
    }
  });
  return section("Run", form);
}
