// Unit tests of @skillbox/sdk: compiles test/test.ts with the pinned compiler, then runs
// its entry points against a fake Extism kernel and a fake Skillbox host, in Node.
//   npm install && npm test
import asc from "assemblyscript/asc";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import assert from "node:assert/strict";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "build", "test.wasm");
// Compiled from the package root, the SDK's files are "assembly/...", not
// "~lib/@skillbox/sdk/assembly/...": hence the shorter abort path.
const { error, stderr } = await asc.main([
  "test/test.ts", "--baseDir", join(here, ".."), "--outFile", out, "--optimize", "--runtime", "stub",
  "--use", "abort=assembly/abort/skillboxAbort",
]);
if (error) {
  console.error(stderr.toString());
  process.exit(1);
}
const module = new WebAssembly.Module(readFileSync(out));

// The kernel: blocks in one address space, offsets from 1 (0 is "absent").
class Kernel {
  constructor() {
    this.mem = new Uint8Array(1 << 20);
    this.next = 8;
    this.blocks = new Map(); // offset -> length
    this.freed = new Set();
    this.input = new Uint8Array(0);
    this.output = null;
  }
  alloc(n) {
    n = Number(n);
    if (n === 0) return 0n;
    const off = this.next;
    this.next += n + 8;
    this.blocks.set(off, n);
    return BigInt(off);
  }
  bytes(b) { const off = this.alloc(b.length); this.mem.set(b, Number(off)); return off; }
  read(off) {
    off = Number(off);
    if (off === 0) return new Uint8Array(0);
    assert.ok(this.blocks.has(off), `not a live block: ${off}`);
    return this.mem.slice(off, off + this.blocks.get(off));
  }
  text(off) { return new TextDecoder().decode(this.read(off)); }
  // live lists the blocks nobody freed: the SDK must free its arguments and the replies.
  live() { return [...this.blocks.keys()].filter((o) => !this.freed.has(o)); }
  env() {
    const k = this;
    const u64 = (b, at) => new DataView(b.buffer, b.byteOffset).getBigUint64(at, true);
    return {
      alloc: (n) => k.alloc(n),
      free: (off) => { assert.ok(k.blocks.has(Number(off)), `free of ${off}`); k.freed.add(Number(off)); },
      length: (off) => BigInt(k.blocks.get(Number(off)) ?? 0),
      load_u8: (off) => k.mem[Number(off)],
      load_u64: (off) => u64(k.mem, Number(off)),
      store_u8: (off, v) => { k.mem[Number(off)] = v; },
      store_u64: (off, v) => { new DataView(k.mem.buffer).setBigUint64(Number(off), v, true); },
      input_length: () => BigInt(k.input.length),
      input_load_u8: (i) => k.input[Number(i)],
      input_load_u64: (i) => u64(k.input, Number(i)),
      output_set: (off, n) => {
        k.output = k.mem.slice(Number(off), Number(off) + Number(n));
        k.freed.add(Number(off)); // the output block is the host's
      },
    };
  }
}

function reply(k, status, payload) {
  const p = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const b = new Uint8Array(1 + p.length);
  b[0] = status;
  b.set(p, 1);
  return k.bytes(b);
}

function fetchPayload(head, body) {
  const h = new TextEncoder().encode(head);
  const bd = new TextEncoder().encode(body);
  const b = new Uint8Array(4 + h.length + bd.length);
  new DataView(b.buffer).setUint32(0, h.length, true);
  b.set(h, 4);
  b.set(bd, 4 + h.length);
  return b;
}

// start makes an instance whose host answers from replies (by call name) and records calls.
function start(input = "", replies = {}) {
  const k = new Kernel();
  k.input = new TextEncoder().encode(input);
  const calls = [];
  const logs = [];
  const answer = (name, ...args) => {
    calls.push(`${name}(${args.map((a) => JSON.stringify(k.text(a))).join(", ")})`);
    const r = replies[name];
    return typeof r === "function" ? r(k, ...args) : r(k);
  };
  const user = {
    skillbox_fetch: (req, body) => answer("fetch", req, body),
    skillbox_env: (name) => answer("env", name),
    skillbox_read_file: (p) => answer("read_file", p),
    skillbox_write_file: (p, d) => answer("write_file", p, d),
    skillbox_log: (level, m) => { logs.push(`${level}:${k.text(m)}`); },
  };
  const inst = new WebAssembly.Instance(module, { "extism:host/env": k.env(), "extism:host/user": user });
  const outText = () => new TextDecoder().decode(k.output ?? new Uint8Array(0));
  return { k, inst, calls, logs, out: outText, x: inst.exports };
}

const tests = {
  "run: success"() {
    const t = start('{"name":"Ada"}');
    assert.equal(t.x.testRun(), 0);
    assert.equal(t.out(), '{"success":true,"result":{"greeting":"Hello, Ada!"}}');
    assert.deepEqual(t.logs, ["1:greeting Ada"]);
  },
  "run: empty input is {}"() {
    const t = start("");
    t.x.testRun();
    assert.equal(t.out(), '{"success":true,"result":{"greeting":"Hello, world!"}}');
  },
  "run: handler failure"() {
    const t = start('{"name":""}');
    t.x.testRun();
    assert.equal(t.out(), '{"success":false,"error":"name is empty"}');
  },
  "run: bad JSON"() {
    const t = start('{"name":');
    t.x.testRun();
    assert.equal(t.out(), '{"success":false,"error":"decode arguments: unexpected end of JSON input at offset 8"}');
  },
  "run: not an object"() {
    const t = start("[1]");
    t.x.testRun();
    assert.equal(t.out(), '{"success":false,"error":"decode arguments: the arguments are not a JSON object"}');
  },
  "run: non-ASCII output is measured in bytes"() {
    const t = start('{"name":"Zoë 😀"}');
    t.x.testRun();
    assert.deepEqual(JSON.parse(t.out()), { success: true, result: { greeting: "Hello, Zoë 😀!" } });
  },
  quote() {
    const s = 'a"b\\c\n\r\t\b\f\u0001\u001f é 😀 </script> \u2028';
    const t = start(s);
    t.x.testQuote();
    assert.equal(JSON.parse(t.out()), s);
    assert.equal(t.out(), '"a\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f é 😀 </script> \u2028"');
  },
  "quote: lone surrogates become escapes"() {
    const t = start();
    t.x.testQuoteLoneSurrogates();
    assert.equal(t.out(), '"a\\ud83db\\ude00😀"');
  },
  "fail escapes"() {
    const t = start('say "hi"\n');
    t.x.testFail();
    assert.equal(t.out(), '{"success":false,"error":"say \\"hi\\"\\n"}');
    assert.deepEqual(JSON.parse(t.out()), { success: false, error: 'say "hi"\n' });
  },
  "parse: round trips"() {
    const cases = [
      ['{"a":[1,2.5,-3e2,true,false,null,"x"],"b":{"c":{}},"d":[]}', '{"a":[1,2.5,-300,true,false,null,"x"],"b":{"c":{}},"d":[]}'],
      [' \n\t{ "k" : "v" } \r\n', '{"k":"v"}'],
      ['"\\u00e9\\ud83d\\ude00\\n\\/\\""', '"é😀\\n/\\""'],
      ['{"a":1,"a":2}', '{"a":2}'],
      ["0", "0"], ["-0.5e-1", "-0.05"], ["1E2", "100"], ["[1.5e300]", "[1.5e+300]"], ['"é"', '"é"'],
    ];
    for (const [input, want] of cases) {
      const t = start(input);
      t.x.testParse();
      assert.equal(t.out(), want, input);
    }
  },
  "parse: errors"() {
    const cases = [
      ["", "error: unexpected end of JSON input at offset 0"],
      ['{"a":}', "error: invalid character \"}\" at offset 5"],
      ["[1,]", "error: invalid character \"]\" at offset 3"],
      ["01", "error: unexpected data after the value at offset 1"],
      ["1.", "error: invalid number at offset 2"],
      ['{"a" 1}', "error: expected ':' at offset 5"],
      ['{"a":1 "b":2}', "error: expected ',' or '}' at offset 7"],
      ['"abc', "error: unexpected end of JSON input at offset 4"],
      ['"a\u0001"', "error: control character in string at offset 2"],
      ['"\\x"', "error: invalid escape at offset 2"],
      ['"\\u12"', "error: invalid \\u escape at offset 5"],
      ["tru", "error: invalid character \"t\" at offset 0"],
      ["[".repeat(300), "error: nested too deeply at offset 257"],
    ];
    for (const [input, want] of cases) {
      const t = start(input);
      t.x.testParse();
      assert.equal(t.out(), want, input);
    }
  },
  "getters and defaults"() {
    const t = start('{"s":"str","n":42.9,"b":true,"a":[1,2,3],"o":{"k":"v"}}');
    t.x.testGetters();
    assert.deepEqual(JSON.parse(t.out()), {
      s: "str", missing: "def", wrongType: "def", n: 42.9, i: 42, b: true, len: 3, hasObj: true, inner: "v", keys: 5,
    });
  },
  numbers() {
    const t = start();
    t.x.testNumbers();
    assert.equal(t.out(), "200 -3 0.5 1e+21 null null 0");
  },
  "fetch: request and response"() {
    const t = start("", {
      fetch: (k) => reply(k, 0, fetchPayload('{"status":201,"url":"https://example.com/x","headers":{"x-echo":"1","content-type":"application/json"}}', '{"n":7}')),
    });
    t.x.testFetch();
    assert.deepEqual(t.calls, ['fetch("{\\"method\\":\\"POST\\",\\"url\\":\\"https://example.com/\\",\\"headers\\":{\\"X-Test\\":\\"1\\"}}", "ping")']);
    assert.deepEqual(JSON.parse(t.out()), {
      status: 201, url: "https://example.com/x", echo: "1", missing: "", has: true, body: '{"n":7}', bodyLen: 7, jsonN: "7",
    });
    assert.deepEqual(t.k.live(), [], "every block is freed");
  },
  "fetch: denied"() {
    const t = start("https://x/", { fetch: (k) => reply(k, 2, 'host "x" is not on the grant') });
    t.x.testGet();
    assert.equal(t.out(), 'fetch: denied: host "x" is not on the grant | denied');
    assert.deepEqual(t.calls, ['fetch("{\\"method\\":\\"GET\\",\\"url\\":\\"https://x/\\"}", "")']);
    assert.deepEqual(t.k.live(), []);
  },
  "fetch: malformed replies"() {
    for (const [payload, want] of [
      [new Uint8Array([1, 0]), "fetch: failed: malformed reply: payload of 2 bytes has no head length | failed"],
      [new Uint8Array([9, 0, 0, 0, 1]), "fetch: failed: malformed reply: head length 9 exceeds payload of 5 bytes | failed"],
      [fetchPayload("[]", ""), "fetch: failed: malformed reply: head: not an object | failed"],
    ]) {
      const t = start("https://x/", { fetch: (k) => reply(k, 0, payload) });
      t.x.testGet();
      assert.equal(t.out(), want);
    }
    const t = start("https://x/", { fetch: () => 0n });
    t.x.testGet();
    assert.equal(t.out(), "fetch: failed: empty reply from host | failed");
  },
  env() {
    let t = start("LANG", { env: (k) => reply(k, 0, "en_US") });
    t.x.testEnv();
    assert.equal(t.out(), "value=en_US");
    t = start("SECRET", { env: (k) => reply(k, 1, "") });
    t.x.testEnv();
    assert.equal(t.out(), "null, default=d");
    assert.deepEqual(t.calls, ['env("SECRET")', 'env("SECRET")']);
    assert.deepEqual(t.k.live(), []);
  },
  files() {
    const written = {};
    const t = start("", {
      read_file: (k, p) => (k.text(p) === "/workspace/in.txt" ? reply(k, 0, "héllo") : reply(k, 1, "no such file")),
      write_file: (k, p, d) => {
        written[k.text(p)] = k.text(d);
        return k.text(p).startsWith("/data") ? reply(k, 2, "read-only mount") : reply(k, 0, "");
      },
    });
    t.x.testFiles();
    assert.equal(t.out(), [
      "text=héllo",
      "read_file: not found: no such file not_found",
      "write_file: ok",
      "write_file: ok",
      "write_file: denied: read-only mount",
    ].join("\n"));
    assert.deepEqual(written, { "/workspace/out.txt": "hello", "/workspace/empty.txt": "", "/data/ro.txt": "x" });
    assert.deepEqual(t.k.live(), []);
  },
  log() {
    const t = start();
    t.x.testLog();
    assert.deepEqual(t.logs, ["0:d", "0:d2", "1:i", "2:w", "3:e", "1:é😀"]);
    assert.deepEqual(t.k.live(), []);
  },
  "abort logs and traps"() {
    const t = start("xx");
    assert.throws(() => t.x.testAbort(), /unreachable/);
    assert.equal(t.logs.length, 1);
    assert.match(t.logs[0], /^3:abort: Index out of range at ~lib\/array\.ts:\d+:\d+$/);
    assert.equal(WebAssembly.Module.imports(module).filter((i) => i.module === "env").length, 0, "no env imports");
  },
};

let failed = 0;
for (const [name, fn] of Object.entries(tests)) {
  try {
    fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${e.message.replace(/\n/g, "\n     ")}`);
  }
}
console.log(failed ? `${failed} failed` : `all ${Object.keys(tests).length} passed`);
process.exit(failed ? 1 : 0);
