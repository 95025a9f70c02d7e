// The console's entry point: who the key is (GET /v1/me), the navigation, and the hash router.

import { call, getKey, setKey, forgetKey, ApiError } from "./api";
import { h, clear, field, alertBox } from "./dom";
import { state, isAdmin, Me } from "./state";
import { skillsPage } from "./skills";
import { skillPage } from "./skill";
import { runPage } from "./run";
import { runsPage } from "./runs";
import { versionsPage } from "./versions";
import { tenantsPage, clusterPage } from "./admin";
import { requestsPage, permitsPage } from "./permissions";

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
const who = document.getElementById("who")!;

let current: AbortController | null = null;
let first = true;

// whoAmI asks the API who the key is. A server without GET /v1/me (older) is asked for the
// skills instead: the key works, its role is unknown.
async function whoAmI(): Promise<Me> {
  try {
    const me = await call<any>("GET", "/v1/me");
    return { role: me.role || "", tenant: me.tenant || "", user: me.user || "", key: me.key || "", caller: me.caller || "",
      operator: me.operator === true, keyless: me.keyless === true };
  } catch (e) {
    if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 405)) throw e;
    await call("GET", "/v1/skills");
    return { role: "unknown" };
  }
}

async function signIn(): Promise<void> {
  state.me = null;
  state.cluster = false;
  try {
    state.me = await whoAmI();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      keyForm(getKey() ? "The key was refused: " + e.message : "");
      return;
    }
    showWho();
    clear(main);
    main.append(h("h1", { tabindex: -1 }, "Skillbox console"), alertBox((e as Error).message));
    return;
  }
  if (state.me.operator || state.me.role === "unknown") {
    try {
      await call("GET", "/v1/cluster");
      state.cluster = true;
    } catch {
      // not a cluster, or not this key's to see
    }
  }
  showWho();
  showNav();
  route();
}

function keyForm(msg: string): void {
  showWho();
  nav.hidden = true;
  clear(nav);
  clear(main);
  const input = h("input", { type: "password", autocomplete: "off", required: true, spellcheck: "false" });
  const form = h("form", { class: "key" },
    field("API key", input, "Kept in this tab only (sessionStorage) and sent as Authorization: Bearer; forgotten when the tab closes."),
    h("button", { type: "submit" }, "Use key"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const k = input.value.trim();
    if (!k) return;
    setKey(k);
    signIn();
  });
  main.append(h("h1", { tabindex: -1 }, "Sign in"), h("p", null, "This server needs an API key."), msg ? alertBox(msg) : "", form);
  input.focus();
}

function showWho(): void {
  clear(who);
  const me = state.me;
  if (me) {
    const parts = [me.role === "unknown" ? "role unknown" : me.role];
    if (me.tenant) parts.push("tenant " + me.tenant);
    if (me.user) parts.push("user " + me.user);
    if (me.key) parts.push("key " + me.key);
    if (me.keyless) parts.push("no keys on this server");
    who.append(h("span", null, "Signed in: ", parts.join(" · ")));
  }
  if (getKey()) {
    const b = h("button", { type: "button", class: "secondary" }, "Forget key");
    b.addEventListener("click", () => {
      forgetKey();
      signIn();
    });
    who.append(" ", b);
  }
}

const links: [string, string, () => boolean][] = [
  ["Skills", "#/skills", () => true],
  ["Runs", "#/runs", () => true],
  ["Versions", "#/versions", () => true],
  ["Requests", "#/requests", () => true],
  ["Permits", "#/permits", () => true],
  ["Tenants", "#/tenants", isAdmin],
  ["Cluster", "#/cluster", () => state.cluster],
];

function showNav(): void {
  clear(nav);
  nav.append(h("ul", null, links.filter(([, , show]) => show()).map(([name, href]) => h("li", null, h("a", { href }, name)))));
  nav.hidden = false;
  markNav();
}

// markNav marks the link of the current page with aria-current.
function markNav(): void {
  const top = "#/" + (location.hash.slice(2).split(/[/?]/)[0] || "skills");
  for (const a of nav.querySelectorAll("a")) {
    if (a.getAttribute("href") === top) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function route(): Promise<void> {
  if (!state.me) return;
  current?.abort();
  const ctl = new AbortController();
  current = ctl;
  const hash = location.hash.replace(/^#\/?/, "");
  const [p, qs] = hash.split("?", 2) as [string, string | undefined];
  const parts = p.split("/").filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(qs || "");
  markNav();
  clear(main);
  const names: Record<string, string> = { skills: "Skills", runs: "Runs", versions: "Versions", requests: "Requests", permits: "Permits", tenants: "Tenants", cluster: "Cluster" };
  document.title = (parts.length > 1 ? parts[1] + " · " : "") + (names[parts[0]] || "Skills") + " · Skillbox console";
  const reload = () => {
    if (current === ctl) route();
  };
  try {
    switch (parts[0] || "skills") {
      case "skills":
        await (parts[1] ? skillPage(main, parts[1], ctl.signal) : skillsPage(main, query));
        break;
      case "runs":
        await (parts[1] ? runPage(main, parts[1], ctl.signal) : runsPage(main, query));
        break;
      case "versions":
        await versionsPage(main, ctl.signal, reload);
        break;
      case "requests":
        await requestsPage(main, ctl.signal);
        break;
      case "permits":
        await permitsPage(main, ctl.signal);
        break;
      case "tenants":
        await tenantsPage(main);
        break;
      case "cluster":
        await clusterPage(main);
        break;
      default:
        main.append(h("h1", { tabindex: -1 }, "Not found"), h("p", null, "No page at ", location.hash, ". "), h("a", { href: "#/skills" }, "Go to the skills"));
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
    if (e instanceof ApiError && e.status === 401) {
      keyForm("The key was refused: " + e.message);
      return;
    }
    if (!main.querySelector("h1")) main.append(h("h1", { tabindex: -1 }, names[parts[0]] || "Error"));
    main.append(alertBox((e as Error).message));
  }
  // Move focus to the new page's heading after a navigation, as a page load would.
  if (!first && current === ctl) (main.querySelector("h1") as HTMLElement | null)?.focus();
  first = false;
}

window.addEventListener("hashchange", route);
signIn();
