package quickjs

import (
	"encoding/json"
	"strings"
)

// prelude defines the SkillContext (globalThis.__ctx), console, and Math.random over a generator
// that __seed (or __go) seeds once per run. Requests go to the host as one line on fd 1 through
// the print function captured here; the host answers before print returns (see frame.go).
var prelude = strings.Replace(preludeSource, "PROBED_ENV_NAMES", probedJSON(), 1)

// ProbedEnvNames are the names JavaScript itself reads of any object (await reads then,
// JSON.stringify toJSON, String toString and valueOf): ctx.env answers them as undefined without
// asking the host, so that printing or awaiting it costs no host call, and a check does not
// take them for variables the code reads.
var ProbedEnvNames = []string{"then", "toJSON", "toString", "valueOf", "constructor"}

func probedJSON() string {
	b, _ := json.Marshal(ProbedEnvNames)
	return string(b)
}

const preludeSource = `(function () {
"use strict";
const G = globalThis, write = G.print, stringify = JSON.stringify, parse = JSON.parse;
const names = {denied: "PermissionDenied", not_found: "NotFound", invalid: "InvalidRequest",
  limit: "LimitExceeded", failed: "HostError", timeout: "TimeoutError"};
// One class per refusal, global, so a skill can test "e instanceof PermissionDenied" (or e.name).
const classes = {};
for (const n of ["PermissionDenied", "NotFound", "InvalidRequest", "LimitExceeded", "HostError", "TimeoutError"]) {
  classes[n] = ({[n]: class extends Error { constructor(m) { super(m); this.name = n; } }})[n];
  Object.defineProperty(G, n, {value: classes[n], writable: false, configurable: false});
}
function call(op, req) {
  req.op = op;
  write("\x01" + stringify(req));
  const raw = G.__reply;
  delete G.__reply;
  if (typeof raw !== "string") throw new Error("skillbox: the host did not answer " + op);
  const r = parse(raw);
  if (r.error !== undefined) {
    const e = new (classes[names[r.status]] || classes.HostError)(r.error);
    e.status = r.status;
    throw e;
  }
  return r.value;
}
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const LOOK = new Uint8Array(128);
for (let i = 0; i < 64; i++) LOOK[B64.charCodeAt(i)] = i;
function toB64(u8) {
  const parts = [];
  let i = 0;
  for (; i + 2 < u8.length; i += 3) {
    const n = (u8[i] << 16) | (u8[i + 1] << 8) | u8[i + 2];
    parts.push(B64[n >> 18 & 63] + B64[n >> 12 & 63] + B64[n >> 6 & 63] + B64[n & 63]);
  }
  const rest = u8.length - i;
  if (rest > 0) {
    const n = (u8[i] << 16) | (rest === 2 ? u8[i + 1] << 8 : 0);
    parts.push(B64[n >> 18 & 63] + B64[n >> 12 & 63] + (rest === 2 ? B64[n >> 6 & 63] : "=") + "=");
  }
  return parts.join("");
}
function fromB64(s) {
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  const n = s.length / 4 * 3 - pad, out = new Uint8Array(n);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    const v = LOOK[s.charCodeAt(i)] << 18 | LOOK[s.charCodeAt(i + 1)] << 12 |
      LOOK[s.charCodeAt(i + 2)] << 6 | LOOK[s.charCodeAt(i + 3)];
    if (o < n) out[o++] = v >> 16 & 255;
    if (o < n) out[o++] = v >> 8 & 255;
    if (o < n) out[o++] = v & 255;
  }
  return out;
}
function bytesOf(data) {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}
function text(v) {
  if (typeof v === "string") return v;
  if (v instanceof Error) return v.stack ? v.name + ": " + v.message + "\n" + v.stack : String(v);
  try { const s = stringify(v); if (s !== undefined) return s; } catch (e) {}
  try { return String(v); } catch (e) { return "[" + typeof v + "]"; }
}
// ctx.env is called (ctx.env("NAME"), null for a name not granted) or read as an object
// (ctx.env.NAME, undefined for a name not granted), as skills written for other runtimes read
// it. A Proxy, so that no property of a function shadows a name; read-only, in sloppy code too.
// The names JavaScript itself probes an object for (await, JSON.stringify, String) read as
// undefined without asking the host: call ctx.env for a variable of such a name.
const envCall = (name) => call("env", {name: String(name)});
const probed = new Set(PROBED_ENV_NAMES);
const envRead = (k) => {
  if (typeof k !== "string" || probed.has(k)) return undefined;
  const v = envCall(k);
  return v === null ? undefined : v;
};
const readOnly = () => { throw new TypeError("ctx.env is read-only"); };
const env = new Proxy((name) => envCall(name), {
  apply: (t, self, args) => envCall(args[0]),
  get: (t, k) => envRead(k),
  has: (t, k) => envRead(k) !== undefined,
  set: readOnly, defineProperty: readOnly, deleteProperty: readOnly, preventExtensions: readOnly,
  setPrototypeOf: readOnly, ownKeys: () => [], getOwnPropertyDescriptor: () => undefined,
});
G.__ctx = Object.freeze({
  env,
  log(message, level) { call("log", {message: text(message), level: level === undefined ? "info" : String(level)}); },
  async readFile(path, options) {
    const bytes = options === "bytes" || (options != null && options.encoding === "bytes");
    const v = call("readFile", {path: String(path), bytes});
    return bytes ? fromB64(v) : v;
  },
  async writeFile(path, data) {
    if (typeof data === "string") { call("writeFile", {path: String(path), data}); return; }
    const b = bytesOf(data);
    if (b === null) throw new TypeError("writeFile: data must be a string, an ArrayBuffer or a typed array");
    call("writeFile", {path: String(path), data64: toB64(b)});
  },
  async fetch(url, options) {
    const o = options || {};
    const req = {url: String(url)};
    if (o.method !== undefined) req.method = String(o.method).toUpperCase();
    if (o.headers !== undefined) {
      req.headers = {};
      for (const [k, v] of Object.entries(o.headers)) req.headers[k] = String(v);
    }
    if (o.body !== undefined && o.body !== null) req.body = typeof o.body === "string" ? o.body : stringify(o.body);
    const r = call("fetch", req);
    const body = r.body;
    return Object.freeze({status: r.status, ok: r.status >= 200 && r.status < 300, url: r.url,
      headers: Object.freeze(r.headers || {}), body,
      async text() { return body; }, async json() { return parse(body); }});
  },
});
const con = {};
for (const [m, level] of [["log", "info"], ["info", "info"], ["debug", "debug"], ["warn", "warn"], ["error", "error"]]) {
  con[m] = (...a) => { call("log", {message: a.map(text).join(" "), level, source: "console"}); };
}
G.console = Object.freeze(con);
let a = 0, b = 0, c = 0, d = 1;
Math.random = function random() {
  // sfc32: 128 bits of state, seeded from the host's crypto/rand at the start of every run.
  // Unseeded, it is drawn from only by a top level being prepared (quickjs.Prepare), which must
  // then be evaluated by every run: the write tells the host, which stops it there.
  if (d === 1 && (a | b | c) === 0) write("\x05");
  a |= 0; b |= 0; c |= 0; d |= 0;
  const t = (a + b | 0) + d | 0;
  d = d + 1 | 0;
  a = b ^ b >>> 9;
  b = c + (c << 3) | 0;
  c = (c << 21 | c >>> 11);
  c = c + t | 0;
  return (t >>> 0) / 4294967296;
};
// seed sets the generator's state, which the host drew from crypto/rand and warmed up (the
// 15 outputs sfc32 discards: quickjs.seedState).
function seed(s0, s1, s2, s3) {
  a = s0; b = s1; c = s2; d = s3;
  delete G.__seed;
}
G.__seed = seed;
// __program sets up a program run: process, scriptArgs, a console that writes to stdout and
// stderr, and the SkillContext as the global skillbox. Writes go to the host as "\x02" + JSON.
G.__program = function (name, argv, stdin) {
  delete G.__program;
  delete G.__drive;
  // Once the program exits, what its other jobs write is dropped, as it would be after exit.
  const out = (fd, s) => { if (G.__exited === undefined) write("\x02" + stringify({fd, data: String(s)})); };
  class SkillboxExit extends Error { constructor(code) { super(String(code)); this.name = "SkillboxExit"; } }
  const pcon = {};
  for (const [m, fd] of [["log", 1], ["info", 1], ["debug", 1], ["warn", 2], ["error", 2]]) {
    pcon[m] = (...a) => out(fd, a.map((v) => typeof v === "string" ? v : text(v)).join(" ") + "\n");
  }
  G.console = Object.freeze(pcon);
  G.scriptArgs = [name, ...argv];
  G.process = {
    argv: ["qjs", name, ...argv], env: {}, exitCode: 0, platform: "wasi",
    exit(code) {
      if (G.__exited === undefined) G.__exited = code === undefined ? (G.process.exitCode | 0) : (code | 0);
      // The host stops the instance on this line, as an OS ends a process: no catch or finally
      // of the program runs after it. The throw is for a host that did not.
      write("\x04" + G.__exited);
      throw new SkillboxExit(G.__exited);
    },
    stdout: Object.freeze({write(s) { out(1, s); return true; }}),
    stderr: Object.freeze({write(s) { out(2, s); return true; }}),
    stdin: Object.freeze({read() { return stdin; }}),
  };
  G.skillbox = G.__ctx;
};
// __drive calls __skill.execute(args, __ctx) and, once it settles, writes the outcome to the host
// as one line, "\x03" + JSON: {ok, result} or {ok: false, name, message, stack}. A synchronous
// result settles at once, so the host need not run the job queue for it.
function drive(argsJSON) {
  delete G.__drive;
  const done = (o) => { write("\x03" + o); };
  const fail = (e) => {
    done(stringify(e instanceof Error
      ? {ok: false, name: String(e.name), message: String(e.message), stack: String(e.stack || "")}
      : {ok: false, name: "", message: "uncaught " + (typeof e) + ": " + String(e)}));
  };
  const ok = (r) => {
    let o;
    try { o = stringify({ok: true, result: r === undefined ? null : r}); }
    catch (e) { fail(new TypeError("execute's result is not JSON-serialisable: " + e.message)); return; }
    done(o);
  };
  let r;
  try {
    const s = G.__skill;
    const ex = s && (typeof s.execute === "function" ? s.execute : s.default && s.default.execute);
    if (typeof ex !== "function") throw new TypeError("the skill exports no function named execute");
    r = ex(parse(argsJSON), G.__ctx);
  } catch (e) { fail(e); return; }
  if (r !== null && typeof r === "object" && typeof r.then === "function") Promise.resolve(r).then(ok, fail);
  else ok(r);
}
G.__drive = drive;
// __go starts a prepared skill's run (see Prepare): input is the seed, 32 hex digits, then the
// arguments' JSON. The functions it calls are the prelude's own, whatever the bundle did to the
// globals.
G.__go = function (input) {
  delete G.__go;
  const w = (i) => parseInt(input.slice(i, i + 8), 16) | 0;
  seed(w(0), w(8), w(16), w(24));
  drive(input.slice(32));
};
})();
`

// driverCall runs the prelude's __drive with argsLiteral, a JavaScript string literal holding
// the arguments' JSON.
func driverCall(argsLiteral string) string { return "__drive(" + argsLiteral + ")" }
