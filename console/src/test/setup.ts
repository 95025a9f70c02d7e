// Installs the stand-in DOM before the modules under test are evaluated (imported first).
import { fakeDocument } from "./fakedom";

(globalThis as any).document = fakeDocument;
