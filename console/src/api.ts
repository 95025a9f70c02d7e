// The one way the console talks to the API: fetch with the key in the Authorization header.
// No cookies go either way (credentials: "omit"), and the key is never in a URL.

import { SSEParser, SSEEvent } from "./sse";

export type { SSEEvent };

const keyName = "skillbox.key";

// base is the API's prefix: the console is served at <base>/console/, the API at <base>/v1/.
export const base = location.pathname.replace(/\/console(\/[^/]*)?$/, "");

export function getKey(): string {
  try {
    return sessionStorage.getItem(keyName) || "";
  } catch {
    return "";
  }
}

export function setKey(k: string): void {
  sessionStorage.setItem(keyName, k);
}

export function forgetKey(): void {
  sessionStorage.removeItem(keyName);
}

// ApiError is a failed call: the HTTP status, and the API's code and message.
export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

export function headers(extra?: Record<string, string>): Headers {
  const hd = new Headers(extra);
  const k = getKey();
  if (k) hd.set("Authorization", "Bearer " + k);
  return hd;
}

// call makes a request and returns its JSON (null for an empty answer), or throws ApiError with
// the API's message.
export async function call<T = any>(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T> {
  const init: RequestInit = { method, headers: headers(extra), cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    (init.headers as Headers).set("Content-Type", "application/json");
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(base + path, init);
  } catch (e) {
    throw new ApiError(0, "network", `${method} ${path}: the server did not answer (${(e as Error).message})`);
  }
  if (!res.ok) throw await errorOf(res, method, path);
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

// errorOf reads the API's {"error": {code, message}} from a failed answer.
export async function errorOf(res: Response, method: string, path: string): Promise<ApiError> {
  let code = "http_" + res.status;
  let msg = `${method} ${path}: ${res.status} ${res.statusText}`;
  try {
    const j = JSON.parse(await res.text());
    if (j && j.error && typeof j.error.message === "string") {
      code = String(j.error.code || code);
      msg = j.error.message;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(res.status, code, msg);
}

// stream reads GET path as server-sent events (EventSource cannot send the Authorization
// header), calling onEvent for each, until the answer ends or signal aborts. lastId, when set,
// resumes after that event (Last-Event-ID). It resolves with the last event id it saw.
export async function stream(path: string, lastId: string, signal: AbortSignal, onEvent: (e: SSEEvent) => void): Promise<string> {
  const extra: Record<string, string> = { Accept: "text/event-stream" };
  if (lastId) extra["Last-Event-ID"] = lastId;
  const res = await fetch(base + path, { headers: headers(extra), signal, cache: "no-store", credentials: "omit" });
  if (!res.ok) throw await errorOf(res, "GET", path);
  if (!res.body) throw new ApiError(0, "no_stream", "this browser cannot read a streamed answer");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SSEParser(onEvent, lastId);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(value);
  }
  return parser.lastId;
}

// sleep waits ms, or until signal aborts.
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });

// follow reads the event stream at path until onEvent says an event was the last (it returns
// true), resuming after the last event seen (Last-Event-ID) when the connection drops or ends
// early: the server keeps a run's events, so none is lost or shown twice. It gives up, with an
// error, after tries attempts in a row that brought nothing new, or at once when the API
// refuses (a 4xx other than 408 and 429); an abort of signal ends it quietly.
export async function follow(path: string, signal: AbortSignal, onEvent: (e: SSEEvent) => boolean,
  tries = 6, delay = (n: number) => 500 * n): Promise<void> {
  let last = "";
  let done = false;
  let fails = 0;
  const on = (e: SSEEvent) => {
    if (done) return; // what follows the last event is not the run's
    if (e.id) last = e.id;
    if (onEvent(e)) done = true;
  };
  while (!done && !signal.aborted) {
    const before = last;
    try {
      await stream(path, last, signal, on);
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429) throw e;
    }
    if (done || signal.aborted) return;
    fails = last !== before ? 0 : fails + 1;
    if (fails >= tries) throw new ApiError(0, "stream_lost", `the events of ${path} stopped arriving (${fails} attempts): reload the page to try again`);
    await sleep(delay(fails + 1), signal);
  }
}

// traceparent makes a W3C traceparent with a new random trace id, which the run's span
// continues: the console then knows the run's trace id.
export function traceparent(): { header: string; traceId: string } {
  const hex = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  return { header: `00-${traceId}-${hex(8)}-01`, traceId };
}
