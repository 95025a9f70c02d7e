// Installs the stand-in DOM before the modules under test are evaluated (imported first).
import { fakeDocument } from "./fakedom";

(globalThis as any).document = fakeDocument;

// api.ts reads the page's address when it loads, and keeps the key in sessionStorage.
(globalThis as any).location = { pathname: "/console/", hash: "" };
const store = new Map<string, string>();
(globalThis as any).sessionStorage = {
  getItem: (k: string) => store.get(k) ?? null,
  setItem: (k: string, v: string) => void store.set(k, v),
  removeItem: (k: string) => void store.delete(k),
};
