// Permission requests a person answers (docs/permissions.md): the prompt on a run's page and on
// #/requests, the #/requests page, and the #/permits page. The answers are offered only to a key
// that may give them (state.mayAnswer, from GET /v1/me and the request's answered_by); anyone
// else reads the request and who answers it. The API still decides who may answer and what an
// answer may be; the console shows a refusal it still makes as it is.

import { call, sleep } from "./api";
import { h, field, alertBox, time, shortDigest, uid, clear, Child } from "./dom";
import { isAdmin, mayAnswer, whoAnswers } from "./state";

// PermissionRequest is run.PermissionRequest.
export interface PermissionRequest {
  id: string;
  run_id: string;
  skill: string;
  digest?: string;
  caller?: string;
  kind: string;
  target: string;
  access?: string;
  scope: string;
  // answered_by: who may answer over the API besides an admin: "admin" (no one else) or
  // "caller" (the run's own caller too).
  answered_by?: string;
  max_grant_seconds: number;
  asked_at: string;
  deadline: string;
}

// Asked is run.Asked: a request and what became of it.
export interface Asked {
  request: PermissionRequest;
  outcome: string;
  by?: string;
  at: string;
  until?: string;
}

// Permit is permit.Permit.
interface Permit {
  id: string;
  skill: string;
  digest: string;
  caller?: string;
  kind: string;
  target: string;
  access?: string;
  until: string;
  by: string;
  at: string;
  run_id?: string;
  request_id?: string;
}

// describeRequest says what q asks in the words of run.PermissionRequest.Describe, which every
// face uses.
export function describeRequest(q: PermissionRequest): string {
  let what: string;
  switch (q.kind) {
    case "network":
      what = "to fetch from " + q.target;
      break;
    case "env":
      what = "to read the variable " + q.target;
      break;
    case "files":
      what = `to use the directory ${q.target} (${q.access || ""})`;
      break;
    default:
      what = q.kind + " " + q.target;
  }
  let s = `The skill ${JSON.stringify(q.skill)} asks ${what}, which its grant does not allow.`;
  if (q.digest) s += ` (version ${q.digest.slice(0, 19)}, run ${q.run_id})`;
  return s;
}

// describeOutcome says what became of a request: "allowed_once by root", "allowed_for by root
// until <time>", "no_answer".
export function describeOutcome(a: Asked): Child[] {
  return [a.outcome, a.by ? ` by ${a.by}` : "", a.until ? [" until ", time(a.until)] : ""];
}

// maxMinutes is the longest "allow for" a request takes, in whole minutes (at least 1).
const maxMinutes = (q: PermissionRequest) => Math.max(1, Math.floor(q.max_grant_seconds / 60));

const decisions: [string, string][] = [["once", "Allow once"], ["for", "Allow for"], ["deny", "Deny"]];

// answerControls are the three answers and the Minutes field for q. An answer the API takes
// calls done with what was sent; a refusal shows the API's message in an alert.
export function answerControls(q: PermissionRequest, done: (text: string) => void): HTMLElement {
  const max = maxMinutes(q);
  const minutes = h("input", { type: "number", min: 1, max, step: 1, value: Math.min(60, max), inputmode: "numeric" });
  const out = h("div");
  const buttons = decisions.map(([decision, name]) => {
    const b = h("button", { type: "button" }, name);
    b.addEventListener("click", async () => {
      out.replaceChildren();
      let body: { decision: string; for_seconds?: number } = { decision };
      let text = decision === "once" ? "Allowed once" : "Denied";
      if (decision === "for") {
        const m = Number(minutes.value);
        if (!Number.isInteger(m) || m < 1 || m > max) {
          out.append(alertBox(`Minutes must be a whole number from 1 to ${max}.`));
          minutes.focus();
          return;
        }
        body = { decision, for_seconds: Math.min(m * 60, q.max_grant_seconds) };
        text = `Allowed for ${m} minute${m === 1 ? "" : "s"}`;
      }
      for (const x of buttons) x.disabled = true;
      try {
        await call("POST", `/v1/runs/${encodeURIComponent(q.run_id)}/permission-requests/${encodeURIComponent(q.id)}`, body);
        done(text);
      } catch (e) {
        out.append(alertBox((e as Error).message));
        for (const x of buttons) x.disabled = false;
      }
    });
    return b;
  });
  return h("div", null,
    h("div", { class: "actions" }, field("Minutes", minutes, `For "Allow for": 1 to ${max}.`), h("div", { class: "buttons" }, buttons)),
    out);
}

// answerOrWho is the answers to q for a key that may give them, else a line saying who may.
function answerOrWho(q: PermissionRequest, done: (text: string) => void): HTMLElement {
  if (mayAnswer(q)) return answerControls(q, done);
  return h("p", { class: "may-not" }, whoAnswers(q));
}

// requestFacts are the facts of a request a person weighs: who, when asked, until when it waits.
function requestFacts(q: PermissionRequest, withRun: boolean): HTMLElement {
  return h("dl", { class: "facts" },
    h("dt", null, "Caller"), h("dd", null, q.caller || "none"),
    h("dt", null, "Asked"), h("dd", null, time(q.asked_at)),
    h("dt", null, "Waits until"), h("dd", null, time(q.deadline)),
    h("dt", null, "A lasting answer covers"), h("dd", null, q.scope === "tenant" ? "every caller of the tenant" : "this caller", ", this version of the skill"),
    withRun ? [h("dt", null, "Run"), h("dd", null, h("a", { href: "#/runs/" + encodeURIComponent(q.run_id) }, q.run_id))] : null);
}

// RunPrompts shows a run's permission requests on its page, as its events bring them: a
// region "Permission request" with the answers while one waits (who answers, for a key that may
// not), its outcome once answered.
export class RunPrompts {
  readonly el = h("div");
  private shown = new Map<string, HTMLElement>();

  request(q: PermissionRequest): void {
    if (!q || !q.id || this.shown.has(q.id)) return;
    const hid = uid("preq");
    const sent = h("p");
    const box = h("section", { "aria-labelledby": hid, class: "ask" },
      h("h2", { id: hid }, "Permission request"),
      h("p", { class: "ask-what" }, describeRequest(q)),
      requestFacts(q, false),
      answerOrWho(q, (text) => {
        sent.textContent = `${text}: sent. The run goes on when the answer arrives.`;
      }),
      sent);
    this.shown.set(q.id, box);
    this.el.append(box);
  }

  answer(a: Asked): void {
    if (!a || !a.request) return;
    let box = this.shown.get(a.request.id);
    if (!box) {
      box = h("section");
      this.shown.set(a.request.id, box);
      this.el.append(box);
    }
    const hid = uid("preq");
    box.setAttribute("aria-labelledby", hid);
    box.className = "ask done";
    box.replaceChildren(
      h("h2", { id: hid }, "Permission request answered"),
      h("p", null, describeRequest(a.request)),
      h("p", { class: "outcome" }, ...describeOutcome(a)));
  }
}

// requestsPage lists the pending requests the key may see (GET /v1/permission-requests), each
// with its answers when the key may give them, and refreshes the list every 2 s until the page is left (signal).
export async function requestsPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  const list = h("div");
  const problem = h("div");
  const said = h("p", { role: "status" });
  const empty = h("p", null, "No permission request waits for an answer.");
  const refresh = h("button", { type: "button" }, "Refresh");
  const items = new Map<string, HTMLElement>();
  main.append(
    h("h1", { tabindex: -1 }, "Requests"),
    h("p", null, "Runs waiting for a person to allow what their grant lacks. The list refreshes every 2 seconds. ", refresh),
    said, problem, list);

  const load = async () => {
    let requests: PermissionRequest[];
    try {
      requests = (await call<{ requests: PermissionRequest[] }>("GET", "/v1/permission-requests")).requests || [];
    } catch (e) {
      if (!signal.aborted) problem.replaceChildren(alertBox((e as Error).message));
      return;
    }
    if (signal.aborted) return;
    problem.replaceChildren();
    // Keep the articles still pending as they are (a Minutes being typed, an alert), drop the
    // ones that ended, add the new ones in the API's order.
    const ids = new Set(requests.map((q) => q.id));
    for (const [id, el] of items) {
      if (!ids.has(id)) {
        el.remove();
        items.delete(id);
      }
    }
    for (const q of requests) {
      let el = items.get(q.id);
      if (!el) {
        el = requestArticle(q, (text) => {
          said.textContent = `${text}: ${q.skill} ${q.target} (run ${q.run_id}).`;
          el?.remove();
          items.delete(q.id);
          if (!items.size) list.replaceChildren(empty);
        });
        items.set(q.id, el);
      }
      list.append(el); // moves an existing one into the API's order
    }
    if (!items.size) list.replaceChildren(empty);
    else empty.remove();
  };
  refresh.addEventListener("click", () => load());
  await load();
  (async () => {
    while (!signal.aborted) {
      await sleep(2000, signal);
      if (!signal.aborted) await load();
    }
  })();
}

function requestArticle(q: PermissionRequest, done: (text: string) => void): HTMLElement {
  const hid = uid("preq");
  return h("article", { "aria-labelledby": hid, class: "version ask" },
    h("h2", { id: hid }, `${q.skill} ${q.target}`),
    h("p", { class: "ask-what" }, describeRequest(q)),
    requestFacts(q, true),
    answerOrWho(q, done));
}

// permitsPage shows the permits in force (GET /v1/permits), with Revoke for admins.
export async function permitsPage(main: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h("div");
  const said = h("p", { role: "status" });
  main.append(
    h("h1", { tabindex: -1 }, "Permits"),
    h("p", null, "What people allowed skills for a time, beyond their grants: each covers one version of a skill (its digest) and one target until it ends."),
    said, body);
  const load = async () => {
    const { permits } = await call<{ permits: Permit[] }>("GET", "/v1/permits");
    if (signal.aborted) return;
    clear(body);
    if (!permits || !permits.length) {
      body.append(h("p", null, "No permit is in force."));
      return;
    }
    const admin = isAdmin();
    const cols = ["Skill", "Digest", "Caller", "Kind", "Target", "From", "Until", "By", "Run"];
    if (admin) cols.push("Revoke");
    body.append(h("table", null,
      h("caption", null, "Permits in force, newest first"),
      h("thead", null, h("tr", null, cols.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, permits.map((p) => {
        const out = h("div");
        let revoke: HTMLElement | null = null;
        if (admin) {
          const b = h("button", { type: "button" }, "Revoke");
          b.addEventListener("click", async () => {
            out.replaceChildren();
            b.disabled = true;
            try {
              await call("DELETE", "/v1/permits/" + encodeURIComponent(p.id));
              said.textContent = `Revoked the permit of ${p.skill} for ${p.target}.`;
              await load();
            } catch (e) {
              out.append(alertBox((e as Error).message));
              b.disabled = false;
            }
          });
          revoke = h("td", null, b, out);
        }
        return h("tr", null,
          h("td", null, h("a", { href: "#/skills/" + encodeURIComponent(p.skill) }, p.skill)),
          h("td", { class: "mono" }, h("abbr", { title: p.digest }, shortDigest(p.digest))),
          h("td", null, p.caller || "every caller"),
          h("td", null, p.kind),
          h("td", null, p.target, p.access ? ` (${p.access})` : ""),
          h("td", null, time(p.at)),
          h("td", null, time(p.until)),
          h("td", null, p.by),
          h("td", null, p.run_id ? h("a", { href: "#/runs/" + encodeURIComponent(p.run_id) }, p.run_id) : ""),
          revoke);
      }))));
  };
  await load();
}
