// Unit tests of the console's DOM-free logic and its Markdown reader, run under Node by
// console/unit_test.go (bundled by esbuild, like the app). Each failure is printed; the exit
// code says whether any failed.
import "./setup";
import { html } from "./fakedom";
import { SSEParser, SSEEvent } from "../sse";
import { render, safeURL } from "../markdown";
import { clusterPage } from "../admin";
import { follow, ApiError } from "../api";
import { fakeDocument } from "./fakedom";
import { describeRequest, PermissionRequest } from "../permissions";
import { atLeast, mayAnswer, whoAnswers, mayCancel, mayChangeVersion, Me } from "../state";

let failed = 0;
function check(name: string, got: unknown, want: unknown): void {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) {
    failed++;
    console.log(`FAIL ${name}\n  got  ${g}\n  want ${w}`);
  }
}

// sse parses chunks and returns the events and the last id.
function sse(...chunks: string[]): [SSEEvent[], string] {
  const out: SSEEvent[] = [];
  const p = new SSEParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  return [out, p.lastId];
}

check("one event", sse("id: 1\nevent: status\ndata: {\"a\":1}\n\n"), [[{ id: "1", event: "status", data: '{"a":1}' }], "1"]);
check("split anywhere", sse("id", ": 2\r", "\nevent: log\r\nda", "ta: x\r\n", "\r\n"), [[{ id: "2", event: "log", data: "x" }], "2"]);
check("lone CR ends lines", sse("data: a\rdata: b\r\r"), [[{ id: "", event: "message", data: "a\nb" }], ""]);
check("comments and unknown fields", sse(": keepalive\nretry: 10\nfoo\ndata:no space\n\n"), [[{ id: "", event: "message", data: "no space" }], ""]);
check("no dispatch without a blank line", sse("id: 3\ndata: x\n"), [[], ""]);
check("id kept across events", sse("id: 4\ndata: a\n\ndata: b\n\n")[0].map((e) => e.id), ["4", "4"]);
check("an id with NUL is ignored", sse("id: 5\ndata: a\n\nid: 6\0\ndata: b\n\n")[1], "5");
check("resumes from the given id", new SSEParser(() => {}, "7").lastId, "7");

// A permission request in the words of run.PermissionRequest.Describe: these are the sentences
// it makes of the same requests.
const preq = (kind: string, target: string, access = "", digest = ""): PermissionRequest => ({ id: "preq_1", run_id: "run_1", skill: "pr-review",
  digest, kind, target, access, scope: "caller", max_grant_seconds: 86400, asked_at: "", deadline: "" });
check("describe network", describeRequest(preq("network", "api.github.com", "", "sha256:0123456789abcdef0123")),
  'The skill "pr-review" asks to fetch from api.github.com, which its grant does not allow. (version sha256:0123456789ab, run run_1)');
check("describe env", describeRequest(preq("env", "GITHUB_TOKEN")), 'The skill "pr-review" asks to read the variable GITHUB_TOKEN, which its grant does not allow.');
check("describe files", describeRequest(preq("files", "/data", "read-only")), 'The skill "pr-review" asks to use the directory /data (read-only), which its grant does not allow.');
check("describe other", describeRequest(preq("gpu", "0")), 'The skill "pr-review" asks gpu 0, which its grant does not allow.');

// What each key is offered, from GET /v1/me: the rules of docs/permissions.md (who may answer),
// POST /v1/runs/{id}/cancel and version.Transitions.
const me = (role: string, caller = "ann", keyless = false): Me => ({ role, caller, keyless });
check("atLeast", ["viewer", "runner", "author", "publisher", "admin", "unknown", "bogus"].map((r) => atLeast("runner", me(r))),
  [false, true, true, true, true, true, false]);
const byAdmin = { caller: "ann", answered_by: "admin" };
const byCaller = { caller: "ann", answered_by: "caller" };
check("mayAnswer admin", [mayAnswer(byAdmin, me("admin", "root")), mayAnswer(byCaller, me("admin", "root"))], [true, true]);
check("mayAnswer runner, own run", [mayAnswer(byAdmin, me("runner")), mayAnswer(byCaller, me("runner"))], [false, true]);
check("mayAnswer runner, another's run", mayAnswer(byCaller, me("runner", "bob")), false);
check("mayAnswer viewer, own run", mayAnswer(byCaller, me("viewer")), false);
check("mayAnswer, a server that does not say", [mayAnswer(byAdmin, me("unknown")), mayAnswer({ caller: "ann" }, me("runner"))], [true, true]);
check("whoAnswers", [whoAnswers(byAdmin), whoAnswers(byCaller), whoAnswers({ answered_by: "caller" })],
  ["An admin answers this request.", "An admin or ann answers this request.", "An admin or the run's caller answers this request."]);
check("mayCancel", [mayCancel("ann", false, me("runner")), mayCancel("bob", false, me("runner")), mayCancel("ann", false, me("viewer")),
  mayCancel("bob", false, me("admin")), mayCancel("", true, me("runner")), mayCancel("", false, me("runner"))],
  [true, false, false, true, true, false]);
const acts = ["approve", "reject", "publish", "deprecate", "yank"];
check("mayChangeVersion publisher", acts.map((a) => mayChangeVersion(a, me("publisher"))), [false, false, true, true, true]);
check("mayChangeVersion admin", acts.map((a) => mayChangeVersion(a, me("admin"))), [true, true, true, true, true]);
check("mayChangeVersion keyless", acts.map((a) => mayChangeVersion(a, me("admin", "", true))), [false, false, true, true, true]);
check("mayChangeVersion author", acts.map((a) => mayChangeVersion(a, me("author"))), [false, false, false, false, false]);

check("safeURL https", safeURL("https://example.com/a?b"), "https://example.com/a?b");
check("safeURL http", safeURL("http://x.test/"), "http://x.test/");
for (const bad of ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,<b>", "vbscript:x", "/relative", "//evil.test/x", "file:///etc/passwd", " javascript:x"]) {
  check("safeURL refuses " + bad, safeURL(bad), "");
}

const md = (s: string) => html(render(s));
check("markup stays text", md("<script>alert(1)</script> <img src=x onerror=y>"), "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=y&gt;</p>");
check("heading shifted", md("# T <b>x</b>\n\n###### six"), "<h3>T &lt;b&gt;x&lt;/b&gt;</h3><h6>six</h6>");
check("inline", md("a *em* **st** `c<d>` _u_"), "<p>a <em>em</em> <strong>st</strong> <code>c&lt;d&gt;</code> <em>u</em></p>");
check("http link", md("[x](https://e.test/p)"), '<p><a href="https://e.test/p" rel="noopener noreferrer" target="_blank">x</a></p>');
check("javascript link is text", md("[x](javascript:alert(1))"), "<p><span>x</span>)</p>");
check("data link is text", md("[x](data:text/html;base64,PHNjcmlwdD4=)"), "<p><span>x</span></p>");
check("link text is text", md("[<i>x</i>](https://e.test/)"), '<p><a href="https://e.test/" rel="noopener noreferrer" target="_blank">&lt;i&gt;x&lt;/i&gt;</a></p>');
check("lists", md("- a\n- b\n\n1. one\n2. two"), "<ul><li>a</li><li>b</li></ul><ol><li>one</li><li>two</li></ol>");
check("fenced code keeps markup as text", md("```html\n<b>x</b>\n```"), '<pre><code data-lang="html">&lt;b&gt;x&lt;/b&gt;</code></pre>');
check("table", md("| a | b |\n| --- | --- |\n| 1 | `2` |"), '<table><thead><tr><th scope="col">a</th><th scope="col">b</th></tr></thead><tbody><tr><td>1</td><td><code>2</code></td></tr></tbody></table>');
check("quote", md("> q *e*"), "<blockquote><p>q <em>e</em></p></blockquote>");
check("paragraph joins lines", md("a\nb\n\nc"), "<p>a b</p><p>c</p>");
check("escapes", md("\\*not em\\*"), "<p>*not em*</p>");
check("unclosed markers are text", md("a * b ** c ` d [e](f"), "<p>a * b ** c ` d [e](f</p>");
check("no event handlers from markdown", md("[x](https://e.test/){onclick=y}"), '<p><a href="https://e.test/" rel="noopener noreferrer" target="_blank">x</a>{onclick=y}</p>');

// The cluster page, from a GET /v1/cluster answer in cluster.Status's shape, with the key in
// the Authorization header and every name shown as text.
async function clusterTest(): Promise<void> {
  let asked: [string, string | null] = ["", null];
  (globalThis as any).sessionStorage.setItem("skillbox.key", "k-123");
  (globalThis as any).fetch = async (url: string, init: RequestInit) => {
    asked = [url, new Headers(init.headers).get("Authorization")];
    return new Response(JSON.stringify({
      name: "sbx", node: "n1", replicas: 3, queued: 2, queue_bytes: 2048, events: 10, event_bytes: 4096,
      events_unsent: 0, events_dropped: 0, held: 1, queue_leader: "<b>s1</b>",
      nodes: [{ node: "n1<script>", addr: "10.0.0.1:8080", version: "v1", slots: 16, free: 15, free_memory: 1 << 30, at: "2026-12-01T09:00:00Z" }],
      consumers: [{ name: "c1", pending: 0, ack_pending: 1 }],
    }), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  const main = fakeDocument.createElement("main");
  await clusterPage(main as any);
  check("cluster asks with the key", asked, ["/v1/cluster", "Bearer k-123"]);
  const out = html(main);
  check("cluster shows the node as text", out.includes("<td>n1&lt;script&gt;</td>"), true);
  check("cluster shows free slots", out.includes("15 of 16"), true);
  check("cluster shows the leader as text", out.includes("&lt;b&gt;s1&lt;/b&gt;"), true);
  check("cluster shows the readers", out.includes("<td>c1</td>"), true);
}

// follow resumes a dropped stream after the last event it saw, and stops at the last event.
async function followTest(): Promise<void> {
  const asked: (string | null)[] = [];
  // Each answer is the events after Last-Event-ID; the first connection breaks after two
  // events (an error mid-body), the second ends cleanly without the result, the third has it.
  const answers: (() => Response)[] = [
    () => body(["id: 1\nevent: status\ndata: {}\n\n", "id: 2\nevent: log\ndata: {}\n\n"], true),
    () => body(["id: 3\nevent: log\ndata: {}\n\n"], false),
    () => body(["id: 4\nevent: result\ndata: {}\n\nid: 5\nevent: extra\ndata: {}\n\n"], false),
  ];
  (globalThis as any).fetch = async (_url: string, init: RequestInit) => {
    asked.push(new Headers(init.headers).get("Last-Event-ID"));
    return answers[asked.length - 1]();
  };
  const seen: string[] = [];
  await follow("/v1/runs/r/events", new AbortController().signal, (e) => (seen.push(e.id), e.event === "result"), 6, () => 0);
  check("follow: events once each, to the result", seen, ["1", "2", "3", "4"]);
  check("follow: resumed with Last-Event-ID", asked, [null, "2", "3"]);

  // A refusal ends it at once with the API's message; a stream that brings nothing gives up.
  (globalThis as any).fetch = async () => new Response(JSON.stringify({ error: { code: "not_found", message: "no run r" } }), { status: 404 });
  const refused = await follow("/x", new AbortController().signal, () => false, 6, () => 0).then(() => null, (e) => e);
  check("follow: a 404 is the API's message", refused instanceof ApiError ? [refused.status, refused.message] : refused, [404, "no run r"]);
  let n = 0;
  (globalThis as any).fetch = async () => (n++, body([": nothing\n"], false));
  const lost = await follow("/x", new AbortController().signal, () => false, 3, () => 0).then(() => null, (e) => e);
  check("follow: gives up after tries", [lost instanceof ApiError ? lost.code : lost, n], ["stream_lost", 3]);
}

// body is an event-stream answer of chunks; broken makes the body fail after them.
function body(chunks: string[], broken: boolean): Response {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(new ReadableStream({
    pull(c) {
      if (i < chunks.length) c.enqueue(enc.encode(chunks[i++]));
      else if (broken) c.error(new TypeError("network error"));
      else c.close();
    },
  }), { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

clusterTest()
  .then(followTest)
  .catch((e) => {
    failed++;
    console.log("FAIL cluster page: " + (e as Error).stack);
  })
  .then(finish);

function finish(): void {
  if (failed) {
    console.log(`${failed} failed`);
    (globalThis as any).process.exitCode = 1;
  } else {
    console.log("ok");
  }
}
