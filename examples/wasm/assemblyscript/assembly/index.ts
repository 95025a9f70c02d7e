// Build from this directory: ./build.sh
//
// The conformance guest in AssemblyScript. Its contract (arguments, operations, result
// keys and outcomes) is the header comment of ../go/main.go; given the same arguments
// and host, this guest must produce the same result as the Go one, compared as JSON.

import {
  run, succeed, JsonValue, JsonBuilder, SkillResult, Request, fetch, env, readText,
  writeFile, writeText, HostResult, log, Level, Status, statusName,
} from "@skillbox/sdk";

const SKIPPED = "skipped";

export function execute(): i32 {
  return run(conform);
}

function conform(a: JsonValue): SkillResult {
  const fetchUrl = a.getString("fetchUrl");
  const writePath = a.getString("writePath");
  const writeData = a.getString("writeData");
  const bigWrite = a.getInt("bigWrite");

  const r = new JsonBuilder();
  r.setObject("fetch", doFetch(fetchUrl, new Request(fetchUrl, "GET")).fields);
  r.setObject("fetchPost", doFetch(fetchUrl, new Request(fetchUrl, "POST").header("X-Test", "1").text("ping")).fields);
  r.setString("fetchDenied", doGet(a.getString("deniedUrl")));
  r.setString("fetchMissing", doGet(a.getString("missingUrl")));

  const envName = a.getString("envName");
  r.setObject("env", doEnv(envName).fields);
  r.setString("envDenied", doEnv(a.getString("deniedEnv")).outcome);

  r.setObject("read", doRead(a.getString("readPath")).fields);
  r.setString("readMissing", doRead(a.getString("missingPath")).outcome);
  r.setString("write", doWrite(writePath, writeData));
  r.setObject("readBack", doRead(writePath).fields);
  r.setString("writeReadOnly", doWrite(a.getString("readOnlyPath"), writeData));
  r.setString("escape", doRead(a.getString("escapePath")).outcome);
  let big = SKIPPED;
  if (bigWrite > 0 && writePath.length > 0) {
    const data = new Uint8Array(<i32>bigWrite);
    data.fill(0x78); // 'x'
    big = outcome(writeFile(writePath + ".big", data));
  }
  r.setString("bigWrite", big);

  log(Level.Debug, "conformance: debug");
  log(Level.Info, "conformance: info");
  log(Level.Warn, "conformance: warn");
  log(Level.Error, "conformance: error");
  r.setString("log", "ok");
  return succeed(r.toString());
}

// The outcome of one operation: its outcome string, and the object the keys fetch,
// fetchPost, env, read and readBack hold ({"outcome":...} plus the values when "ok").
class Outcome {
  outcome: string;
  fields: JsonBuilder;

  constructor(outcome: string) {
    this.outcome = outcome;
    this.fields = new JsonBuilder().setString("outcome", outcome);
  }
}

function outcome(r: HostResult): string {
  return r.ok ? "ok" : statusName(r.status);
}

function doFetch(url: string, req: Request): Outcome {
  if (url.length == 0) return new Outcome(SKIPPED);
  const r = fetch(req);
  const resp = r.value;
  if (!r.ok || resp === null) return new Outcome(outcome(r));
  const o = new Outcome("ok");
  o.fields
    .setInteger("status", resp.status)
    .setString("body", resp.text())
    .setString("echo", resp.header("x-echo"))
    .setString("contentType", resp.header("content-type"));
  return o;
}

function doGet(url: string): string {
  return doFetch(url, new Request(url, "GET")).outcome;
}

function doEnv(name: string): Outcome {
  if (name.length == 0) return new Outcome(SKIPPED);
  const v = env(name);
  if (v === null) return new Outcome(statusName(Status.NotFound));
  const o = new Outcome("ok");
  o.fields.setString("value", v);
  return o;
}

function doRead(path: string): Outcome {
  if (path.length == 0) return new Outcome(SKIPPED);
  const r = readText(path);
  const text = r.value;
  if (!r.ok || text === null) return new Outcome(outcome(r));
  const o = new Outcome("ok");
  o.fields.setString("text", text);
  return o;
}

function doWrite(path: string, data: string): string {
  if (path.length == 0) return SKIPPED;
  return outcome(writeText(path, data));
}
