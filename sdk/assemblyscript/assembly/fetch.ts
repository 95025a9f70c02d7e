// skillbox_fetch: HTTP through the host, checked against the run's network grant.

import { block, blockLength, byteAt, copyOut, release, skillbox_fetch, stringBlock, textOut, utf8 } from "./host";
import { parseJson, quote, JsonValue } from "./json";
import { Result, Status } from "./status";
import { free } from "@extism/as-pdk/lib/env";

/**
 * An outgoing HTTP request. The host checks it against the run's network grant before
 * anything leaves the sandbox.
 *
 *   const req = new Request("https://api.example.com/v1/x", "POST")
 *     .header("Content-Type", "application/json")
 *     .text('{"q":1}');
 */
export class Request {
  /** GET HEAD POST PUT PATCH DELETE OPTIONS; "" means GET. */
  method: string;
  /** An absolute http or https URL without user info. */
  url: string;
  /**
   * Names to single values. Host, Content-Length, Transfer-Encoding, Connection, the
   * Proxy-* headers and the headers of granted secrets are the host's: setting them
   * makes the request INVALID.
   */
  headers: Map<string, string> = new Map<string, string>();
  /** The raw body; null or empty sends none. */
  body: Uint8Array | null = null;

  constructor(url: string, method: string = "GET") {
    this.url = url;
    this.method = method;
  }

  /** Sets a header; returns this. */
  header(name: string, value: string): Request {
    this.headers.set(name, value);
    return this;
  }

  /** Sets the raw body; returns this. */
  bytes(body: Uint8Array): Request {
    this.body = body;
    return this;
  }

  /** Sets the body to the UTF-8 encoding of s; returns this. */
  text(s: string): Request {
    this.body = utf8(s);
    return this;
  }

  /** The request head as the host reads it: {"method":...,"url":...,"headers":{...}}. */
  toJSON(): string {
    let s = "{";
    if (this.method.length > 0) s += "\"method\":" + quote(this.method) + ",";
    s += "\"url\":" + quote(this.url);
    const names = this.headers.keys();
    if (names.length > 0) {
      const parts = new Array<string>(names.length);
      for (let i = 0; i < names.length; i++) {
        parts[i] = quote(names[i]) + ":" + quote(this.headers.get(names[i]));
      }
      s += ",\"headers\":{" + parts.join(",") + "}";
    }
    return s + "}";
  }
}

/**
 * The answer to a Request. Any HTTP status is a Response, not a failure: a 404 is
 * information for the skill, while a refused or failed request is a FetchResult that
 * is not ok.
 */
export class Response {
  /** The HTTP status code. */
  status: i32 = 0;
  /** The final URL, after redirects. */
  url: string = "";
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Map<string, string> = new Map<string, string>();
  /** The raw body. */
  body: Uint8Array = new Uint8Array(0);

  /** The value of header name (any case), or "" when absent. */
  header(name: string): string {
    const key = name.toLowerCase();
    return this.headers.has(key) ? this.headers.get(key) : "";
  }

  /** Whether the response has header name (any case). */
  hasHeader(name: string): bool {
    return this.headers.has(name.toLowerCase());
  }

  /** The body decoded as UTF-8 (invalid sequences become U+FFFD). */
  text(): string {
    const b = this.body;
    return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.length);
  }

  /** The body parsed as JSON; not ok (op "json", Status.Invalid) when it is not JSON. */
  json(): Result<JsonValue> {
    return parseJson(this.text());
  }
}

/** What fetch() returns: value is the Response when ok. */
export type FetchResult = Result<Response>;

/**
 * Sends req through the host and returns the response, whatever its HTTP status.
 * Not ok when the host refuses or fails the request: Status.Denied for a host, method
 * or address outside the grant, Status.Invalid for a malformed request, Status.Limit
 * for too many fetches or too large a body, Status.Failed for DNS, connection and
 * timeout failures.
 */
export function fetch(req: Request): FetchResult {
  const head = stringBlock(req.toJSON());
  const body = block(req.body);
  const reply = skillbox_fetch(head, body);
  release(head);
  release(body);
  return decodeFetchReply(reply);
}

/** fetch(new Request(url)): a GET. */
export function get(url: string): FetchResult {
  return fetch(new Request(url, "GET"));
}

function malformed(msg: string): FetchResult {
  return new Result<Response>("fetch", Status.Failed, "malformed reply: " + msg, null);
}

/** Reads a skillbox_fetch reply block straight out of kernel memory, then frees it. */
function decodeFetchReply(reply: u64): FetchResult {
  const len = blockLength(reply);
  if (len == 0) return new Result<Response>("fetch", Status.Failed, "empty reply from host", null);
  const status = <Status>byteAt(reply);
  if (status != Status.OK) {
    const msg = textOut(reply + 1, len - 1);
    free(reply);
    return new Result<Response>("fetch", status, msg, null);
  }
  // payload: u32 LE head length N, N bytes of head JSON, the raw body.
  const payload = len - 1;
  if (payload < 4) {
    free(reply);
    return malformed("payload of " + payload.toString() + " bytes has no head length");
  }
  const n = <u64>byteAt(reply + 1) | (<u64>byteAt(reply + 2) << 8) |
    (<u64>byteAt(reply + 3) << 16) | (<u64>byteAt(reply + 4) << 24);
  if (n > payload - 4) {
    free(reply);
    return malformed("head length " + n.toString() + " exceeds payload of " + payload.toString() + " bytes");
  }
  const headText = textOut(reply + 5, n);
  const body = copyOut(reply + 5 + n, payload - 4 - n);
  free(reply);

  const parsed = parseJson(headText);
  const head = parsed.value;
  if (!parsed.ok || head === null || !head.isObject) {
    return malformed("head: " + (parsed.ok ? "not an object" : parsed.message));
  }
  const resp = new Response();
  resp.status = <i32>head.getInt("status", 0);
  resp.url = head.getString("url", "");
  const hs = head.getObject("headers");
  if (hs !== null) {
    const names = hs.keys();
    for (let i = 0; i < names.length; i++) {
      resp.headers.set(names[i], hs.getString(names[i], ""));
    }
  }
  resp.body = body;
  return new Result<Response>("fetch", Status.OK, "", resp);
}
