// A small stand-in for the DOM, enough for dom.ts and markdown.ts under Node: elements with
// attributes and children, text nodes, fragments; html() writes a tree back as markup with
// text escaped, so a test sees exactly what became an element and what stayed text.

class FakeNode {
  childNodes: FakeNode[] = [];
  parentNode: FakeNode | null = null;
  appendChild(n: FakeNode): FakeNode {
    if (n instanceof FakeFragment) {
      for (const c of n.childNodes) this.appendChild(c);
      n.childNodes = [];
      return n;
    }
    n.parentNode = this;
    this.childNodes.push(n);
    return n;
  }
  append(...ns: (FakeNode | string)[]): void {
    for (const n of ns) this.appendChild(typeof n === "string" ? new FakeText(n) : n);
  }
  get firstChild(): FakeNode | null {
    return this.childNodes[0] || null;
  }
  removeChild(n: FakeNode): void {
    this.childNodes = this.childNodes.filter((c) => c !== n);
  }
  get textContent(): string {
    return this.childNodes.map((c) => c.textContent).join("");
  }
}

class FakeText extends FakeNode {
  constructor(public data: string) {
    super();
  }
  get textContent(): string {
    return this.data;
  }
}

class FakeFragment extends FakeNode {}

class FakeElement extends FakeNode {
  attributes = new Map<string, string>();
  listeners: string[] = [];
  constructor(public tagName: string) {
    super();
  }
  setAttribute(k: string, v: string): void {
    this.attributes.set(k, v);
  }
  getAttribute(k: string): string | null {
    return this.attributes.get(k) ?? null;
  }
  addEventListener(type: string): void {
    this.listeners.push(type);
  }
}

export const fakeDocument = {
  createElement: (tag: string) => new FakeElement(tag),
  createTextNode: (s: string) => new FakeText(s),
  createDocumentFragment: () => new FakeFragment(),
};

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

// html writes n as markup: elements as tags, text escaped.
export function html(n: any): string {
  if (n instanceof FakeText) return esc(n.data);
  const inner = n.childNodes.map(html).join("");
  if (!(n instanceof FakeElement)) return inner;
  const attrs = [...n.attributes].map(([k, v]) => ` ${k}="${esc(v)}"`).join("");
  return `<${n.tagName}${attrs}>${inner}</${n.tagName}>`;
}
