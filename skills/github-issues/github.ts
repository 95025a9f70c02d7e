// The parts of GitHub's REST API this skill reads (https://docs.github.com/en/rest/issues).

export interface Issue {
  number: number;
  title: string;
  html_url: string;
  user: { login: string } | null;
  labels: Array<{ name: string } | string>;
  created_at: string;
  comments: number;
  pull_request?: unknown;
}

export interface Summary {
  number: number;
  title: string;
  author: string;
  labels: string[];
  created: string;
  comments: number;
  url: string;
}

export function summarise(issue: Issue): Summary {
  return {
    number: issue.number,
    title: issue.title,
    author: issue.user?.login ?? "ghost",
    labels: issue.labels.map((l) => (typeof l === "string" ? l : l.name)),
    created: issue.created_at,
    comments: issue.comments,
    url: issue.html_url,
  };
}

// isIssue drops pull requests, which GitHub's issues endpoint lists too.
export const isIssue = (i: Issue): boolean => i.pull_request === undefined;
