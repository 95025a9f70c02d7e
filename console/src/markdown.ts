// A small Markdown reader for SKILL.md: headings, paragraphs, lists, fenced and indented code,
// tables, block quotes, inline code, emphasis and links. It builds DOM nodes from text nodes
// only: no HTML in the source is ever interpreted (it shows as text), and a link is made only
// for an http or https URL, opened with rel="noopener noreferrer".

import { h, Child } from "./dom";

// render returns the document as a fragment. Headings are shifted down by shift levels
// (a "# Title" under the page's h2 becomes an h3), at most h6.
export function render(src: string, shift = 2): DocumentFragment {
  const out = document.createDocumentFragment();
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const para: string[] = [];
  const flush = () => {
    if (para.length) out.appendChild(h("p", null, inline(para.join(" "))));
    para.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) code.push(lines[i++]);
      i++;
      const lang = fence[2].trim().split(/\s+/)[0];
      out.appendChild(h("pre", null, h("code", lang ? { "data-lang": lang } : null, code.join("\n"))));
      continue;
    }
    const head = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (head) {
      flush();
      const level = Math.min(head[1].length + shift, 6);
      out.appendChild(h(("h" + level) as "h3", null, inline(head[2])));
      i++;
      continue;
    }
    if (/^\s*$/.test(line)) {
      flush();
      i++;
      continue;
    }
    if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.appendChild(h("hr"));
      i++;
      continue;
    }
    const item = /^ {0,3}([-*+]|\d{1,9}[.)])\s+/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const list = h(ordered ? "ol" : "ul");
      while (i < lines.length) {
        const m = /^ {0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const text = [m[2]];
        i++;
        // Continuation lines: indented, not a new item or a blank line.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d{1,9}[.)])\s+/.test(lines[i])) text.push(lines[i++].trim());
        list.appendChild(h("li", null, inline(text.join(" "))));
      }
      out.appendChild(list);
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      flush();
      const quote: string[] = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i])) quote.push(lines[i++].replace(/^ {0,3}> ?/, ""));
      out.appendChild(h("blockquote", null, render(quote.join("\n"), shift)));
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1])) {
      flush();
      const rows: string[][] = [];
      const head = cells(line);
      i += 2;
      while (i < lines.length && /^\s*\|/.test(lines[i])) rows.push(cells(lines[i++]));
      out.appendChild(
        h("table", null,
          h("thead", null, h("tr", null, head.map((c) => h("th", { scope: "col" }, inline(c))))),
          h("tbody", null, rows.map((r) => h("tr", null, r.map((c) => h("td", null, inline(c))))))),
      );
      continue;
    }
    if (/^ {4,}\S/.test(line) && para.length === 0) {
      const code: string[] = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || /^\s*$/.test(lines[i]))) code.push(lines[i++].slice(4));
      while (code.length && code[code.length - 1].trim() === "") code.pop();
      out.appendChild(h("pre", null, h("code", null, code.join("\n"))));
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return out;
}

function cells(row: string): string[] {
  let r = row.trim();
  if (r.startsWith("|")) r = r.slice(1);
  if (r.endsWith("|") && !r.endsWith("\\|")) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

// safeURL returns url when it is an absolute http or https URL, else "".
export function safeURL(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : "";
  } catch {
    return "";
  }
}

// inline reads code spans, links, strong and emphasis; everything else is text.
export function inline(s: string): Child[] {
  const out: Child[] = [];
  let text = "";
  const push = (n: Child) => {
    if (text) out.push(text);
    text = "";
    out.push(n);
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && i + 1 < s.length && /[\\`*_[\]()#|<>!-]/.test(s[i + 1])) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(s.slice(i))![0];
      const end = s.indexOf(run, i + run.length);
      if (end > 0) {
        push(h("code", null, s.slice(i + run.length, end).trim() || s.slice(i + run.length, end)));
        i = end + run.length;
        continue;
      }
    }
    if (c === "[") {
      const m = /^\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/.exec(s.slice(i));
      if (m) {
        const url = safeURL(m[2]);
        push(url ? h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, inline(m[1])) : h("span", null, inline(m[1])));
        i += m[0].length;
        continue;
      }
    }
    if ((c === "*" || c === "_") && s[i + 1] === c) {
      const end = s.indexOf(c + c, i + 2);
      if (end > i + 2) {
        push(h("strong", null, inline(s.slice(i + 2, end))));
        i = end + 2;
        continue;
      }
    }
    if ((c === "*" || c === "_") && s[i + 1] !== " " && s[i + 1] !== c && (c === "*" || i === 0 || /\W/.test(s[i - 1]))) {
      let end = i + 1;
      while ((end = s.indexOf(c, end)) > 0 && (s[end - 1] === " " || s[end + 1] === c)) end += s[end + 1] === c ? 2 : 1;
      if (end > i + 1 && (c === "*" || end + 1 >= s.length || /\W/.test(s[end + 1]))) {
        push(h("em", null, inline(s.slice(i + 1, end))));
        i = end + 1;
        continue;
      }
    }
    text += c;
    i++;
  }
  if (text) out.push(text);
  return out;
}
