// DOM helpers. Everything the console shows is built here from elements and text nodes: a
// string is always a text node (textContent), never markup, whatever it holds.

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Attrs {
  [name: string]: string | number | boolean | null | undefined | ((ev: any) => void);
}

// h makes an element. Attributes named on* with a function value become event listeners;
// true sets a boolean attribute, false/null/undefined leaves it out. Children that are strings
// become text nodes.
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (typeof v === "function") {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (v === true) {
        el.setAttribute(k, "");
      } else {
        el.setAttribute(k, String(v));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (typeof c === "string" || typeof c === "number") el.appendChild(document.createTextNode(String(c)));
    else el.appendChild(c);
  }
}

// clear removes an element's children.
export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

let ids = 0;
// uid is an id for label/aria wiring, unique in the page.
export function uid(prefix: string): string {
  ids++;
  return `${prefix}-${ids}`;
}

// field is a labelled control: <div class="field"><label for=id>label</label> control</div>.
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  if (!control.id) control.id = uid("f");
  const wrap = h("div", { class: "field" }, h("label", { for: control.id }, label), control);
  if (hint) {
    const hid = uid("hint");
    control.setAttribute("aria-describedby", hid);
    wrap.appendChild(h("p", { class: "hint", id: hid }, hint));
  }
  return wrap;
}

// checkbox is a checkbox with its label after it.
export function checkbox(label: string, checked = false): { el: HTMLElement; input: HTMLInputElement } {
  const input = h("input", { type: "checkbox", id: uid("c") });
  input.checked = checked;
  const el = h("div", { class: "field check" }, input, h("label", { for: input.id }, label));
  return { el, input };
}

// select makes a <select> of options ([value, text]) with value selected, or the first option
// when none has that value (setting a value no option has would select nothing).
export function select(options: [string, string][], value = ""): HTMLSelectElement {
  const s = h("select", null, options.map(([v, t]) => h("option", { value: v }, t)));
  if (options.some(([v]) => v === value)) s.value = value;
  return s;
}

// alertBox is an element with role alert holding msg: screen readers announce it.
export function alertBox(msg: string): HTMLElement {
  return h("p", { role: "alert", class: "alert" }, msg);
}

// section is a <section> under a heading of level 2. It is not labelled by its heading: a named
// section is a region landmark, kept for what a person looks for (a run's Result, a permission
// request), not for every part of a page.
export function section(title: string, ...children: Child[]): HTMLElement {
  return h("section", null, h("h2", null, title), ...children);
}

// pre shows a JSON value (or text) preformatted.
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

// time shows an RFC 3339 timestamp in the operator's locale, with the exact value on a <time>.
export function time(iso: string | undefined): Node {
  if (!iso) return document.createTextNode("");
  const d = new Date(iso);
  return h("time", { datetime: iso }, isNaN(d.getTime()) ? iso : d.toLocaleString());
}

// bytes shows a size in B, KiB or MiB.
export function bytes(n: number | undefined): string {
  if (n === undefined || n === null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}

// shortDigest is the first 12 hex digits of a sha256:... digest.
export function shortDigest(d: string): string {
  return d.replace(/^sha256:/, "").slice(0, 12);
}
