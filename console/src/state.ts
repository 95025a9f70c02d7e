// Who the console is signed in as, and what the server offers; set by main.ts at sign-in.

export interface Me {
  role: string;
  tenant?: string;
  user?: string;
  key?: string;
  caller?: string;
  // operator: an admin of the default tenant without a user, who reads the cluster and every
  // tenant (access.Principal.Operator); keyless: the server has no keys.
  operator?: boolean;
  keyless?: boolean;
}

// Roles in the order of what they may do (access.Role): each may what those before it may.
export const roles = ["viewer", "runner", "author", "publisher", "admin"];

export const state = {
  me: null as Me | null,
  cluster: false,
};

// isAdmin says whether the key is an admin's. A server that does not say (no GET /v1/me)
// counts as not: the admin pages then stay hidden, and the API still decides.
export function isAdmin(): boolean {
  return state.me?.role === "admin";
}

// atLeast says whether the key's role is role or above. The console offers an action only to a
// key whose role may take it, as GET /v1/me says; a server that does not say (role "unknown")
// is offered every action, as before, and its API decides. Either way the API stays the
// authority: a refusal it still makes is shown in an alert.
export function atLeast(role: string, me: Me | null = state.me): boolean {
  if (!me || me.role === "unknown") return true;
  const have = roles.indexOf(me.role);
  return have >= 0 && have >= roles.indexOf(role);
}

// mayAnswer says whether the key may answer a permission request (docs/permissions.md, Who may
// answer): an admin; the run's own caller with a runner key or above, when the request says
// answered_by "caller". A request that does not say (an older server) is offered, and the API
// decides.
export function mayAnswer(q: { caller?: string; answered_by?: string }, me: Me | null = state.me): boolean {
  if (!me || me.role === "unknown" || me.role === "admin") return true;
  if (q.answered_by === undefined) return true;
  return q.answered_by === "caller" && !!q.caller && me.caller === q.caller && atLeast("runner", me);
}

// whoAnswers says who may answer a request: "An admin answers this request.", or "An admin or
// ann answers this request." when its caller may too.
export function whoAnswers(q: { caller?: string; answered_by?: string }): string {
  if (q.answered_by !== "caller") return "An admin answers this request.";
  return `An admin or ${q.caller || "the run's caller"} answers this request.`;
}

// mayCancel says whether the key may cancel a run started by caller ("" when not known): an
// admin, or the run's own caller with a runner key or above (POST /v1/runs/{id}/cancel needs
// runner). startedHere says this tab started the run, for one not yet in the history.
export function mayCancel(caller: string, startedHere = false, me: Me | null = state.me): boolean {
  if (!me || me.role === "unknown" || me.role === "admin") return true;
  if (!atLeast("runner", me)) return false;
  return caller ? me.caller === caller : startedHere;
}

// versionRoles are the least role each version action needs (version.Transitions).
const versionRoles: Record<string, string> = { approve: "admin", reject: "admin", publish: "publisher", deprecate: "publisher", yank: "publisher" };

// mayChangeVersion says whether the key may take a version action: its role is the action's
// or above, and approve and reject never on a server without keys (the API does not offer them
// there: approving would be no one's decision).
export function mayChangeVersion(action: string, me: Me | null = state.me): boolean {
  const role = versionRoles[action] || "admin";
  if (role === "admin" && me?.keyless) return false;
  return atLeast(role, me);
}
