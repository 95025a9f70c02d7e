// #/runs/<id>: one run, its events as they arrive, its result, logs, usage and files.

import { call, follow, headers, base, errorOf, ApiError, SSEEvent } from "./api";
import { h, section, alertBox, json, bytes, time, uid, Child } from "./dom";
import { RunPrompts, describeRequest, Asked } from "./permissions";
import { mayCancel } from "./state";

interface LogEntry {
  time?: string;
  level: string;
  source?: string;
  message: string;
}

interface Artifact {
  name: string;
  size: number;
  sha256: string;
  media_type: string;
  url?: string;
}

interface Run {
  run_id: string;
  skill: string;
  version?: string;
  digest?: string;
  face?: string;
  caller?: string;
  status: string;
  success: boolean;
  error?: { kind: string; message: string };
  result?: unknown;
  logs?: LogEntry[];
  logs_dropped?: number;
  usage?: Record<string, unknown>;
  artifacts?: Artifact[];
  duration_ms?: number;
  started_at?: string;
  finished_at?: string;
  trace_id?: string;
}

const traceKey = "skillbox.traces";

// rememberTrace keeps the trace id the console started a run with, for its page: a run's record
// says its trace id (trace_id), but one recorded before it did, or not yet, does not.
export function rememberTrace(runID: string, traceId: string): void {
  try {
    const m = JSON.parse(sessionStorage.getItem(traceKey) || "{}");
    m[runID] = traceId;
    const keys = Object.keys(m);
    for (const k of keys.slice(0, Math.max(0, keys.length - 200))) delete m[k];
    sessionStorage.setItem(traceKey, JSON.stringify(m));
  } catch {
    // no storage: no trace id shown
  }
}

function traceOf(runID: string): string {
  try {
    return JSON.parse(sessionStorage.getItem(traceKey) || "{}")[runID] || "";
  } catch {
    return "";
  }
}

// final says whether a run's status is an end (not running, queued, or waiting for a person's
// answer to a permission request).
export function final(status: string): boolean {
  return status !== "running" && status !== "queued" && status !== "waiting" && status !== "";
}

export async function runPage(main: HTMLElement, id: string, signal: AbortSignal): Promise<void> {
  const path = "/v1/runs/" + encodeURIComponent(id);
  const status = h("span", { role: "status", class: "status" });
  const meta = h("dl", { class: "facts" });
  const trace = h("p", { class: "trace" });
  const cancel = h("button", { type: "button", hidden: true }, "Cancel");
  const note = h("div");
  const events = h("ol", { "aria-label": "Events", class: "events" });
  // The result's JSON, in the region named "Result" (a <pre> may not carry a label itself).
  const result = h("pre", { class: "result" }, "(none yet)");
  const resultId = uid("result");
  const prompts = new RunPrompts();
  const failure = h("div");
  const output = h("div");
  const logs = h("div");
  const usage = h("div");
  const files = h("div");
  main.append(
    h("h1", { tabindex: -1 }, "Run ", h("code", null, id)),
    h("p", null, "Status: ", status, " ", cancel),
    prompts.el,
    meta, trace, note,
    section("Events", events),
    h("section", { "aria-labelledby": resultId }, h("h2", { id: resultId }, "Result"), failure, result, output),
    section("Logs", logs),
    section("Usage", usage),
    section("Artifacts", files),
  );

  // Cancel is offered while the run goes on to a key that may cancel it (state.mayCancel): an
  // admin, or the run's caller with a runner key. Its caller is the record's, else a permission
  // request's; a run not yet recorded that this tab started (its trace is kept) is the key's.
  let caller = "";
  const offerCancel = (going: boolean) => {
    cancel.hidden = !going || !mayCancel(caller, traceOf(id) !== "");
  };
  const show = (r: Run) => {
    status.textContent = r.status;
    if (r.caller) caller = r.caller;
    offerCancel(!final(r.status));
    meta.replaceChildren(
      ...fact("Skill", h("a", { href: "#/skills/" + encodeURIComponent(r.skill) }, r.skill)),
      ...fact("Version", r.version), ...fact("Digest", r.digest), ...fact("Face", r.face), ...fact("Caller", r.caller),
      ...fact("Started", r.started_at ? time(r.started_at) : null), ...fact("Finished", r.finished_at ? time(r.finished_at) : null),
      ...fact("Duration", r.duration_ms !== undefined && final(r.status) ? `${r.duration_ms.toFixed(1)} ms` : null),
    );
    const tid = r.trace_id || traceOf(r.run_id);
    trace.textContent = tid ? "Trace " + tid : "";
    result.textContent = r.result !== undefined ? json(r.result) : final(r.status) ? "(no result)" : "(running)";
    failure.replaceChildren(r.error ? h("p", { class: "err" }, `${r.error.kind}: ${r.error.message}`) : "");
    output.replaceChildren(...programOutput(r.result));
    logs.replaceChildren(
      r.logs && r.logs.length
        ? h("ol", { class: "logs", "aria-label": "Log lines" }, r.logs.map((l) => h("li", null, h("span", { class: "tag" }, l.level), " ", l.source ? `[${l.source}] ` : "", l.message)))
        : h("p", null, "No logs."),
      r.logs_dropped ? h("p", null, `${r.logs_dropped} more log lines were dropped.`) : "",
    );
    usage.replaceChildren(r.usage ? usageList(r.usage) : h("p", null, "No usage yet."));
    files.replaceChildren(
      r.artifacts && r.artifacts.length
        ? h("ul", { class: "files" }, r.artifacts.map((a) => h("li", null, download(id, a), ` ${bytes(a.size)}, ${a.media_type}`)))
        : h("p", null, "No files."),
    );
  };

  cancel.addEventListener("click", async () => {
    note.replaceChildren();
    cancel.disabled = true;
    try {
      await call("POST", path + "/cancel");
      note.append(h("p", null, "Cancel asked: the run ends as canceled."));
    } catch (e) {
      note.append(alertBox((e as Error).message));
    } finally {
      cancel.disabled = false;
    }
  });

  let run: Run | null = null;
  try {
    run = await call<Run>("GET", path);
    show(run);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    status.textContent = "running"; // not in the history yet: its events say
    offerCancel(true);
  }

  // The events: kept ones then live ones, to the result; a dropped connection resumes after
  // the last event seen (Last-Event-ID).
  let done = false;
  const onEvent = (ev: SSEEvent): boolean => {
    let data: any = {};
    try {
      data = JSON.parse(ev.data);
    } catch {
      // shown as text below
    }
    events.append(h("li", null, describe(ev.event, data, ev.data)));
    if (ev.event === "permission_request" && data.permission_request) {
      if (!caller && data.permission_request.caller) {
        caller = data.permission_request.caller;
        offerCancel(!final(status.textContent || ""));
      }
      prompts.request(data.permission_request);
    }
    if (ev.event === "permission_answer" && data.permission_answer) prompts.answer(data.permission_answer);
    if (ev.event === "status" && data.status && !final(status.textContent || "")) {
      status.textContent = data.status === "started" ? "running" : data.status;
    }
    if (ev.event === "result" && data.result) {
      done = true;
      // The result event carries the run's end (result, logs, usage, files): show it at once,
      // so the status never reads final beside a result not yet shown; the record refines it.
      const r = data.result;
      show({ ...(run || { run_id: id }), ...r, status: r.status || (r.success ? "succeeded" : "failed") } as Run);
    }
    return done;
  };
  try {
    await follow(path + "/events", signal, onEvent);
  } catch (e) {
    // A finished run whose events are no longer kept has its page from GET /v1/runs/{id}.
    if (!signal.aborted && (!run || !final(run.status))) note.append(alertBox((e as Error).message));
    return;
  }
  if (signal.aborted || !done) return;
  try {
    show(await call<Run>("GET", path));
  } catch (e) {
    note.append(alertBox((e as Error).message));
  }
}

// programOutput shows a program's stdout and stderr (a program run's result) as they were
// written, beside the JSON that quotes them.
function programOutput(res: unknown): HTMLElement[] {
  if (!res || typeof res !== "object" || !("exit_code" in res)) return [];
  const r = res as { exit_code: number; stdout?: string; stderr?: string };
  const out: HTMLElement[] = [h("p", null, `The program exited with ${r.exit_code}.`)];
  for (const [name, text] of [["Standard output", r.stdout], ["Standard error", r.stderr]] as [string, string | undefined][]) {
    if (text) out.push(h("h3", null, name), h("pre", null, text));
  }
  return out;
}

function fact(name: string, v: Child): HTMLElement[] {
  if (v === undefined || v === null || v === "") return [];
  return [h("dt", null, name), h("dd", null, v)];
}

function describe(event: string, d: any, raw: string): Child[] {
  switch (event) {
    case "status":
      return [h("span", { class: "tag" }, "status"), " ", String(d.status ?? "")];
    case "log":
      return [h("span", { class: "tag" }, "log"), " ", d.log ? `${d.log.level}: ${d.log.message}` : raw];
    case "file":
      return [h("span", { class: "tag" }, "file"), " ", d.file ? `${d.file.name} (${bytes(d.file.size)})` : raw];
    case "permission_request":
      return [h("span", { class: "tag" }, "permission request"), " ", d.permission_request ? describeRequest(d.permission_request) : raw];
    case "permission_answer": {
      const a = d.permission_answer as Asked | undefined;
      return [h("span", { class: "tag" }, "permission answer"), " ", a ? `${a.request.kind} ${a.request.target}: ${a.outcome}${a.by ? " by " + a.by : ""}` : raw];
    }
    case "result":
      return [h("span", { class: "tag" }, "result"), " ", d.result ? String(d.result.status || (d.result.success ? "succeeded" : "failed")) : raw];
    default:
      return [h("span", { class: "tag" }, event), " ", raw];
  }
}

function usageList(u: Record<string, unknown>): HTMLElement {
  return h("dl", { class: "facts" }, Object.entries(u).map(([k, v]) => [
    h("dt", null, k.replace(/_/g, " ")),
    h("dd", null, k === "asked" && Array.isArray(v) ? askedList(v as Asked[])
      : typeof v === "number" && /bytes/.test(k) ? `${bytes(v)} (${v})`
      : Array.isArray(v) ? v.map((x) => typeof x === "object" ? JSON.stringify(x) : String(x)).join(", ") || "none"
      : v && typeof v === "object" ? JSON.stringify(v) : String(v)),
  ]));
}

// askedList shows the run's permission requests and what became of each (usage.asked).
function askedList(asked: Asked[]): Child {
  if (!asked.length) return "none";
  return h("ul", null, asked.map((a) => h("li", null, a.request ? `${a.request.kind} ${a.request.target}: ` : "", a.outcome,
    a.by ? ` by ${a.by}` : "", a.until ? [" until ", time(a.until)] : "")));
}

// download is a button named by the file's name that fetches it with the key and saves it
// through a blob URL (a link to the API would carry no Authorization header).
function download(runID: string, a: Artifact): HTMLElement {
  const b = h("button", { type: "button", class: "link" }, a.name);
  b.addEventListener("click", async () => {
    // The API's url already carries the prefix it is mounted under.
    const p = a.url && a.url.startsWith("/") ? a.url : `${base}/v1/runs/${encodeURIComponent(runID)}/artifacts/${a.name.split("/").map(encodeURIComponent).join("/")}`;
    try {
      const res = await fetch(p, { headers: headers(), cache: "no-store", credentials: "omit" });
      if (!res.ok) throw await errorOf(res, "GET", p);
      const url = URL.createObjectURL(await res.blob());
      const link = h("a", { href: url, download: a.name.split("/").pop() || a.name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      b.after(alertBox((e as Error).message));
    }
  });
  return b;
}
