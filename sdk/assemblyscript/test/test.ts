// Test entry points for test/run.mjs, which runs them against a fake Extism kernel and a
// fake Skillbox host written in JavaScript. Each one reads the input the test sets and
// writes what it computed as the output.

import {
  run, succeed, fail, info, JsonBuilder, JsonValue, SkillResult, inputText, outputText,
  quote, jsonNumber, parseJson, fetch, get, Request, env, envOr, readFile, readText,
  writeFile, writeText, statusName, log, Level, debug, warn, error,
} from "../index";

function greet(args: JsonValue): SkillResult {
  const name = args.getString("name", "world");
  if (name.length == 0) return fail("name is empty");
  info("greeting " + name);
  return succeed(new JsonBuilder().setString("greeting", "Hello, " + name + "!").toString());
}

export function testRun(): i32 {
  return run(greet);
}

export function testQuote(): void {
  outputText(quote(inputText()));
}

export function testQuoteLoneSurrogates(): void {
  // "a" + high surrogate alone + "b" + low alone + a valid pair (U+1F600)
  outputText(quote("a" + String.fromCharCode(0xd83d) + "b" + String.fromCharCode(0xde00) + String.fromCharCode(0xd83d, 0xde00)));
}

export function testFail(): void {
  outputText(fail(inputText()).toString());
}

// Parses the input and writes it back re-encoded, or "error: <message>".
export function testParse(): void {
  const r = parseJson(inputText());
  const v = r.value;
  outputText(r.ok && v !== null ? v.toString() : "error: " + r.message);
}

export function testGetters(): void {
  const v = parseJson(inputText()).value!;
  const b = new JsonBuilder()
    .setString("s", v.getString("s", "def"))
    .setString("missing", v.getString("missing", "def"))
    .setString("wrongType", v.getString("n", "def"))
    .setNumber("n", v.getNumber("n"))
    .setInteger("i", v.getInt("n"))
    .setBool("b", v.getBool("b"))
    .setInteger("len", v.getArray("a").length)
    .setBool("hasObj", v.getObject("o") !== null)
    .setString("inner", v.getObject("o")!.getString("k"))
    .setRaw("keys", v.keys().length.toString());
  outputText(b.toString());
}

export function testNumbers(): void {
  const parts = new Array<string>();
  parts.push(jsonNumber(200));
  parts.push(jsonNumber(-3));
  parts.push(jsonNumber(0.5));
  parts.push(jsonNumber(1e21));
  parts.push(jsonNumber(NaN));
  parts.push(jsonNumber(Infinity));
  parts.push(jsonNumber(-0.0));
  outputText(parts.join(" "));
}

export function testFetch(): void {
  const r = fetch(new Request("https://example.com/", "POST").header("X-Test", "1").text("ping"));
  const resp = r.value;
  if (!r.ok || resp === null) {
    outputText("error: " + r.error + " outcome=" + r.outcome);
    return;
  }
  outputText(new JsonBuilder()
    .setInteger("status", resp.status)
    .setString("url", resp.url)
    .setString("echo", resp.header("X-Echo"))
    .setString("missing", resp.header("x-missing"))
    .setBool("has", resp.hasHeader("x-echo"))
    .setString("body", resp.text())
    .setInteger("bodyLen", resp.body.length)
    .setString("jsonN", resp.json().ok ? jsonNumber(resp.json().value!.getNumber("n")) : "not json")
    .toString());
}

export function testGet(): void {
  const r = get(inputText());
  outputText(r.ok ? "ok" : r.error + " | " + r.outcome);
}

export function testEnv(): void {
  const v = env(inputText());
  outputText(v !== null ? "value=" + v : "null, default=" + envOr(inputText(), "d"));
}

export function testFiles(): void {
  const parts = new Array<string>();
  const r = readText("/workspace/in.txt");
  parts.push(r.ok ? "text=" + r.value! : r.error);
  const b = readFile("/workspace/bin");
  parts.push(b.ok ? "bytes=" + b.value!.length.toString() : b.error + " " + statusName(b.status));
  // A subarray that does not start its buffer: the SDK must copy the right bytes.
  const whole = Uint8Array.wrap(String.UTF8.encode("xxhello"));
  parts.push(writeFile("/workspace/out.txt", whole.subarray(2)).toString());
  parts.push(writeText("/workspace/empty.txt", "").toString());
  parts.push(writeText("/data/ro.txt", "x").error);
  outputText(parts.join("\n"));
}

export function testLog(): void {
  log(Level.Debug, "d");
  debug("d2");
  info("i");
  warn("w");
  error("e");
  log(Level.Info, "é😀");
}

export function testAbort(): void {
  const a = new Array<i32>(1);
  outputText(a[inputText().length].toString()); // out of range for non-empty input
}
