// A script skill in the shape of the original execute(args, context) skills: it calls an API its
// manifest names, and the host adds the API token on the way out — the skill never sees it.
import { isIssue, summarise, type Issue } from "./github";

interface Args {
  repo: string;
  limit: number;
  label?: string;
}

interface Response {
  status: number;
  body: string;
  json(): Promise<unknown>;
}

interface SkillContext {
  fetch(url: string, options?: { method?: string; headers?: Record<string, string> }): Promise<Response>;
  env(name: string): string | null;
  log(message: string, level?: string): void;
}

export async function execute(args: Args, ctx: SkillContext) {
  // GITHUB_API_URL points the skill at GitHub Enterprise (https://ghe.example.com/api/v3) when the
  // operator grants it; the network permission must then name that host too.
  const base = (ctx.env("GITHUB_API_URL") ?? "https://api.github.com").replace(/\/+$/, "");
  // Twice the limit: the endpoint lists pull requests too, which are dropped.
  let url = `${base}/repos/${args.repo}/issues?state=open&per_page=${Math.min(args.limit * 2, 100)}`;
  if (args.label) url += `&labels=${encodeURIComponent(args.label)}`;
  ctx.log(`GET ${url}`);
  const res = await ctx.fetch(url, { headers: { Accept: "application/vnd.github+json" } });
  if (res.status === 404) {
    return { success: false, error: `no repository ${args.repo} (or it is private and the token cannot see it)` };
  }
  if (res.status !== 200) {
    return { success: false, error: `GitHub answered ${res.status}: ${res.body.slice(0, 200)}` };
  }
  const issues = ((await res.json()) as Issue[]).filter(isIssue).slice(0, args.limit);
  return { repo: args.repo, count: issues.length, issues: issues.map(summarise) };
}
