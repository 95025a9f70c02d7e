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
