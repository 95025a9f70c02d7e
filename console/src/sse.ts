// Server-sent events as the WHATWG spec reads them, for a stream read with fetch (EventSource
// cannot send the Authorization header). No DOM: the unit tests run it under Node.

// SSEEvent is one server-sent event.
export interface SSEEvent {
  id: string;
  event: string;
  data: string;
}

// SSEParser splits the text of an event stream into events (the WHATWG rules: lines end in
// \n, \r\n or \r; "field: value"; a blank line dispatches; a line starting with ':' is a
// comment).
export class SSEParser {
  private buf = "";
  private data: string[] = [];
  private event = "";
  private id = "";
  constructor(private onEvent: (e: SSEEvent) => void, public lastId = "") {}

  // afterCR: the last line ended in \r, so a \n that starts the next chunk is its second half.
  private afterCR = false;

  push(chunk: string): void {
    if (this.afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.afterCR = false;
    this.buf += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) return;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      // A \r at the very end may be the first half of a \r\n split across chunks.
      if (m[0] === "\r" && this.buf === "") this.afterCR = true;
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === "") {
      if (this.id) this.lastId = this.id;
      if (this.data.length) this.onEvent({ id: this.id, event: this.event || "message", data: this.data.join("\n") });
      this.data = [];
      this.event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const i = line.indexOf(":");
    const name = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (name) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
    }
  }
}
