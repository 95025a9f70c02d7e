// The console's end-to-end browser test: Playwright drives a real Chromium through the console
// of a running Skillbox server, as an operator would, by the accessible names of the UI contract
// (console/e2e is run by console/e2e_test.go, which builds the server and its skills; see there).
//
// Every element is found by role and accessible name (getByRole, getByLabel), never by a CSS
// class: the contract is what the page offers to assistive technology. Waits are bounds against
// a hang (TIMEOUT), never a measure of speed.
//
// Environment:
//   SKILLBOX_URL            the server, http://127.0.0.1:PORT (required)
//   SKILLBOX_ADMIN_KEY      an admin key (required)
//   SKILLBOX_VIEWER_KEY     a viewer key (required)
//   SKILLBOX_RUNNER_KEY     a runner key, whose runs ask a person for what their grant lacks
//   SKILLBOX_ARTIFACTS      where screenshots, the axe report and downloads go (required)
//   SKILLBOX_E2E_SKILL      the skill to run; SKILLBOX_E2E_ARGS its arguments as JSON, entered
//                           into the form field by field
//   SKILLBOX_E2E_RESULT     JSON the run's result must contain (each member, compared as JSON)
//   SKILLBOX_E2E_FILE       the artifact to download; SKILLBOX_E2E_FILE_SHA256 its bytes' sha256
//   SKILLBOX_E2E_CALLER     the admin key's caller name, for the Caller filter
//   SKILLBOX_E2E_APPROVE    the skill whose pending version the admin approves
//   SKILLBOX_E2E_PENDING    the skill whose pending version the viewer is not offered to approve
//   SKILLBOX_E2E_MARKUP     a skill whose SKILL.md holds <img src="x-e2e" onerror=...>, which
//                           must show as text
//   SKILLBOX_E2E_ASK_SKILL  a skill that fetches SKILLBOX_E2E_ASK_URL (its one parameter, url),
//                           which the policy lets a person allow: host SKILLBOX_E2E_ASK_TARGET;
//                           it returns {status} or {error}. SKILLBOX_E2E_ASK_USER is the user of
//                           the runner and the viewer keys (the viewer sees the runner's requests)
//   CHROMIUM                the browser (default: chromium or chromium-browser on PATH)
//
// It prints one line `E2E-SUMMARY {json}` at the end (steps passed and failed, axe counts by
// impact, the run's id, the runs of the ask steps, how long the run page took to show a
// permission request) and exits 1 when any step failed; summary.json in the artifacts holds the
// same, and axe-report.json its summary too.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const TIMEOUT = 60_000; // a bound against a hang on a slow, busy machine, not a speed test

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`console.mjs: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

const base = need('SKILLBOX_URL').replace(/\/+$/, '');
const adminKey = need('SKILLBOX_ADMIN_KEY');
const viewerKey = need('SKILLBOX_VIEWER_KEY');
const outDir = need('SKILLBOX_ARTIFACTS');
const skill = process.env.SKILLBOX_E2E_SKILL || 'report';
const args = JSON.parse(process.env.SKILLBOX_E2E_ARGS || '{}');
const wantResult = JSON.parse(process.env.SKILLBOX_E2E_RESULT || '{}');
const fileName = process.env.SKILLBOX_E2E_FILE || '';
const fileSHA = process.env.SKILLBOX_E2E_FILE_SHA256 || '';
const caller = process.env.SKILLBOX_E2E_CALLER || '';
const approveSkill = process.env.SKILLBOX_E2E_APPROVE || '';
const pendingSkill = process.env.SKILLBOX_E2E_PENDING || '';
const markupSkill = process.env.SKILLBOX_E2E_MARKUP || '';
const runnerKey = process.env.SKILLBOX_RUNNER_KEY || '';
const askSkill = process.env.SKILLBOX_E2E_ASK_SKILL || '';
const askURL = process.env.SKILLBOX_E2E_ASK_URL || '';
const askTarget = process.env.SKILLBOX_E2E_ASK_TARGET || '';
const askUser = process.env.SKILLBOX_E2E_ASK_USER || '';
mkdirSync(outDir, { recursive: true });

function findChromium() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const dir of (process.env.PATH || '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return '/usr/bin/chromium';
}

// --- small helpers -------------------------------------------------------------------------

const log = (...a) => console.log('[e2e]', ...a);
const browserLog = join(outDir, 'browser.log');
writeFileSync(browserLog, '');
const note = (line) => appendFileSync(browserLog, line + '\n');

// poll calls fn until it returns a truthy value, and returns it; after TIMEOUT it throws,
// naming what it waited for and what fn last saw (fn may return {ok, seen}).
async function poll(what, fn, timeout = TIMEOUT) {
  const end = Date.now() + timeout;
  let seen;
  for (;;) {
    let v;
    try {
      v = await fn();
    } catch (e) {
      if (e.fatal) throw e;
      seen = String(e.message || e).split('\n')[0];
    }
    if (v && typeof v === 'object' && 'ok' in v) {
      if (v.ok) return v;
      seen = v.seen;
    } else if (v) {
      return v;
    }
    if (Date.now() > end) throw new Error(`waited ${timeout / 1000}s for ${what}; last seen: ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// api calls the server directly (not through the page), to learn what the console should show.
async function api(method, path, key, body) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, json, text };
}

// --- the steps -----------------------------------------------------------------------------

const steps = []; // {name, ok, detail}
async function step(name, fn) {
  log(`step ${name}`);
  try {
    const detail = await fn();
    steps.push({ name, ok: true, detail: detail || '' });
    log(`step ${name}: pass${detail ? ' (' + detail + ')' : ''}`);
    return true;
  } catch (e) {
    const msg = String(e && e.message ? e.message : e).split('\n').slice(0, 6).join(' | ');
    steps.push({ name, ok: false, detail: msg });
    log(`step ${name}: FAIL: ${msg}`);
    await shot(`fail-${name}`).catch(() => {});
    return false;
  }
}

const userDataDir = mkdtempSync(join(tmpdir(), 'skillbox-e2e-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: findChromium(),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 },
  acceptDownloads: true,
  timeout: TIMEOUT,
});
context.setDefaultTimeout(TIMEOUT);
// Each page load watches for a permission request's prompt (a region named "Permission
// request") and notes when it entered the DOM and when the next frame was drawn after, by the
// page's clock, with the request's asked_at (its <time>): the latency the ask steps report.
await context.addInitScript(() => {
  window.__skillboxPrompts = [];
  const seen = new WeakSet();
  new MutationObserver(() => {
    for (const s of document.querySelectorAll('section[aria-labelledby]')) {
      if (seen.has(s)) continue;
      const hd = document.getElementById(s.getAttribute('aria-labelledby'));
      if (!hd || hd.textContent.trim() !== 'Permission request') continue;
      seen.add(s);
      const p = { at: Date.now(), asked: s.querySelector('time')?.getAttribute('datetime') || '', hash: location.hash, painted: 0 };
      window.__skillboxPrompts.push(p);
      requestAnimationFrame(() => setTimeout(() => { p.painted = Date.now(); }, 0));
    }
  }).observe(document, { childList: true, subtree: true });
});
const page = context.pages()[0] || (await context.newPage());
const pageErrors = [];
page.on('console', (m) => note(`console.${m.type()}: ${m.text()}`));
page.on('pageerror', (e) => {
  pageErrors.push(String(e.message || e));
  note(`pageerror: ${e.stack || e}`);
});
page.on('response', (r) => {
  if (r.status() >= 400) note(`response ${r.status()} ${r.request().method()} ${r.url()}`);
});
page.on('requestfailed', (r) => note(`requestfailed ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));

let shots = 0;
const shotFiles = [];
// shot saves a full-page PNG of the page as NN-name.png.
async function shot(name) {
  const file = join(outDir, `${String(++shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: TIMEOUT });
  shotFiles.push(file);
  return file;
}
// docShot saves the viewport (1280x800) as docs-name.png: the pictures docs/console/ keeps.
async function docShot(name) {
  const file = join(outDir, `docs-${name}.png`);
  await page.screenshot({ path: file, fullPage: false, timeout: TIMEOUT });
  shotFiles.push(file);
}

// The axe-core check: injected by evaluation (a CSP that forbids inline scripts does not apply
// to the debugger), run on the whole document, every violation kept for the report.
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const axePages = [];
async function axeCheck(name) {
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return { violations: r.violations, incomplete: r.incomplete.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) })), testEngine: r.testEngine, url: r.url };
  });
  const counts = {};
  for (const v of res.violations) counts[v.impact || 'none'] = (counts[v.impact || 'none'] || 0) + 1;
  // incomplete: what axe could not decide (contrast over an image, say), for a person to review.
  axePages.push({ page: name, url: res.url, counts, violations: res.violations, incomplete: res.incomplete, engine: res.testEngine });
  for (const v of res.violations) {
    log(`axe ${name}: ${v.impact} ${v.id}: ${v.help} (${v.nodes.length} nodes: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')})`);
  }
  for (const v of res.incomplete) log(`axe ${name}: to review (not a violation): ${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).join(', ')})`);
}

const main = () => page.getByRole('navigation', { name: 'Main' });
// The run page's result: the JSON in the region named Result.
const resultJSON = () => page.getByRole('region', { name: 'Result', exact: true }).locator('pre').first();
const alerts = () => page.getByRole('alert');
async function go(hash) {
  await page.goto(`${base}/console/${hash}`, { waitUntil: 'load', timeout: TIMEOUT });
}
async function nav(name) {
  await main().getByRole('link', { name, exact: true }).click();
}
async function hashIs(re) {
  return poll(`the address to match ${re}`, () => {
    const h = new URL(page.url()).hash;
    return { ok: re.test(h), seen: h };
  });
}

// signIn enters key in the key form and waits until the console shows it signed in.
async function signIn(key, role) {
  const input = page.getByLabel('API key', { exact: true });
  await input.waitFor({ state: 'visible' });
  await input.fill(key);
  await page.getByRole('button', { name: 'Use key', exact: true }).click();
  await page.getByRole('button', { name: 'Forget key', exact: true }).waitFor({ state: 'visible' });
  await main().waitFor({ state: 'visible' });
  await poll(`the console to show the role ${role}`, async () => {
    const text = await page.locator('body').innerText();
    return { ok: new RegExp(`\\b${role}\\b`).test(text) && !(await input.isVisible()), seen: text.slice(0, 200) };
  });
}

// fillField sets the form field labelled name to value, by the kind of control it is.
async function fillField(scope, name, value) {
  const field = scope.getByLabel(name, { exact: true });
  await field.waitFor({ state: 'visible' });
  const kind = await field.evaluate((el) => `${el.tagName.toLowerCase()}:${(el.getAttribute('type') || '').toLowerCase()}`);
  if (kind === 'input:checkbox') {
    await field.setChecked(Boolean(value));
  } else if (kind.startsWith('select:')) {
    await field.selectOption(String(value));
  } else if (kind.startsWith('textarea:')) {
    await field.fill(typeof value === 'string' ? value : JSON.stringify(value));
  } else {
    await field.fill(String(value));
  }
  return kind;
}

// The state the steps pass on.
let runId = '';
let skillPageOK = false;

// 1. The key form, and the admin key.
await step('1-key', async () => {
  await go('');
  await page.getByLabel('API key', { exact: true }).waitFor({ state: 'visible' });
  await shot('key-form');
  await signIn(adminKey, 'admin');
  const stored = await page.evaluate(() => sessionStorage.getItem('skillbox.key'));
  if (stored !== adminKey) throw new Error('sessionStorage["skillbox.key"] does not hold the key entered');
  return 'signed in as admin';
});
if (!steps.at(-1).ok) {
  // Go on signed in the contract's way, so the later steps still say what they can.
  await page.evaluate((k) => sessionStorage.setItem('skillbox.key', k), adminKey).catch(() => {});
}

// 2. Find the skill, run it from the form, watch it live.
await step('2-run', async () => {
  if (markupSkill) {
    // A skill's text is text, never markup: the tags in its SKILL.md show as written, run nothing.
    await go(`#/skills/${encodeURIComponent(markupSkill)}`);
    await page.getByRole('heading', { name: 'Instructions', exact: true }).waitFor({ state: 'visible' });
    await page.getByText('<img src="x-e2e"', { exact: false }).first().waitFor({ state: 'visible' });
    const xss = await page.evaluate(() => ({ ran: window.__skillboxXSS === true, imgs: document.querySelectorAll('img[src="x-e2e"]').length }));
    if (xss.ran || xss.imgs) throw new Error(`${markupSkill}'s SKILL.md became markup: ${JSON.stringify(xss)}`);
  }
  await go('#/skills');
  await nav('Skills');
  const search = page.getByLabel('Search skills', { exact: true });
  await search.fill(skill);
  for (const name of ['Kind', 'Status']) await page.getByLabel(name, { exact: true }).waitFor({ state: 'visible' });
  const link = page.getByRole('link', { name: skill, exact: true });
  await link.waitFor({ state: 'visible' });
  await shot('skills');
  await axeCheck('skills');
  await link.click();
  await hashIs(new RegExp(`^#/skills/${escapeRe(skill)}$`));
  const h1 = page.getByRole('heading', { level: 1 });
  await poll('the skill page heading', async () => {
    const t = (await h1.first().textContent()) || '';
    return { ok: t.includes(skill), seen: t };
  });
  for (const name of ['Permissions', 'Instructions', 'Programs', 'Run']) {
    await page.getByRole('heading', { name, exact: true }).waitFor({ state: 'visible' });
  }
  const run = page.getByRole('button', { name: 'Run', exact: true });
  await run.waitFor({ state: 'visible' });
  // Raw JSON swaps the fields for one textarea, and back.
  const raw = page.getByRole('checkbox', { name: 'Raw JSON', exact: true });
  await raw.check();
  await page.getByLabel('Arguments (JSON)', { exact: true }).waitFor({ state: 'visible' });
  await raw.uncheck();
  await page.getByLabel('Arguments (JSON)', { exact: true }).waitFor({ state: 'hidden' });
  const kinds = [];
  for (const [name, value] of Object.entries(args)) kinds.push(`${name}=${await fillField(page, name, value)}`);
  skillPageOK = true;
  await shot('skill');
  // The picture for the docs: the form filled in, the Run button at the bottom of the window.
  await page.evaluate(() => document.activeElement?.blur());
  await run.evaluate((e) => e.scrollIntoView({ block: 'end' }));
  await docShot('skill');
  await axeCheck('skill');
  await run.click();
  const h = await hashIs(/^#\/runs\/[^/?]+$/);
  runId = decodeURIComponent(h.seen.slice('#/runs/'.length));
  await poll('the run page heading', async () => {
    const t = (await page.getByRole('heading', { level: 1 }).first().textContent()) || '';
    return { ok: t.includes(runId), seen: t };
  });
  const events = page.getByRole('list', { name: 'Events', exact: true });
  await events.waitFor({ state: 'visible' });
  const status = page.getByRole('status').filter({ hasText: /^\s*(queued|running|succeeded|failed|interrupted|canceled|cancelled|timeout)\s*$/ });
  const seenStatuses = [];
  const final = await poll('the run to finish', async () => {
    const t = ((await status.first().textContent()) || '').trim();
    if (t && seenStatuses.at(-1) !== t) seenStatuses.push(t);
    return { ok: ['succeeded', 'failed', 'interrupted', 'canceled', 'cancelled'].includes(t), seen: t, t };
  });
  if (final.t !== 'succeeded') throw new Error(`the run ended ${final.t} (statuses seen: ${seenStatuses.join(' -> ')})`);
  const items = await poll('events in the Events list', async () => {
    const n = await events.getByRole('listitem').count();
    return { ok: n > 0, seen: n, n };
  });
  const resultText = await poll('the result', async () => {
    const t = ((await resultJSON().textContent()) || '').trim();
    return { ok: t !== '' && !t.startsWith('('), seen: t, t };
  });
  let result;
  try {
    result = JSON.parse(resultText.t);
  } catch {
    throw new Error(`Result is not JSON: ${resultText.t.slice(0, 200)}`);
  }
  for (const [k, v] of Object.entries(wantResult)) {
    if (JSON.stringify(result[k]) !== JSON.stringify(v)) throw new Error(`Result.${k} is ${JSON.stringify(result[k])}, want ${JSON.stringify(v)}`);
  }
  await page.getByText(/^Trace [0-9a-f]+/).first().waitFor({ state: 'visible' }).catch(() => {
    throw new Error('no "Trace <id>" text on the run page');
  });
  await shot('run');
  // The picture for the docs: the run's heading and status, its events and the result below
  // them, from the top of a window a little taller than the others.
  await page.setViewportSize({ width: 1280, height: 1040 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await docShot('run');
  await page.setViewportSize({ width: 1280, height: 800 });
  await axeCheck('run');
  return `run ${runId}: ${items.n} events, statuses ${seenStatuses.join(' -> ')}, fields ${kinds.join(' ')}`;
});

// 3. The history: filter, open the run, download its artifact.
await step('3-history', async () => {
  if (!runId) {
    // Step 2 made no run: make one through the API, so that the history is still tested.
    const r = await api('POST', `/v1/skills/${encodeURIComponent(skill)}/runs`, adminKey, { args });
    if (r.status !== 200 || !r.json?.run_id) throw new Error(`no run from step 2, and the API's run: ${r.status} ${r.text.slice(0, 200)}`);
    runId = r.json.run_id;
    log(`step 3-history: ran ${runId} through the API, step 2 made none`);
  }
  await go('#/skills');
  await nav('Runs');
  await hashIs(/^#\/runs\/?(\?.*)?$/);
  for (const name of ['Status', 'Since', 'Until']) await page.getByLabel(name, { exact: true }).waitFor({ state: 'visible' });
  await fillField(page, 'Skill', skill);
  if (caller) await fillField(page, 'Caller', caller);
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  const table = page.getByRole('table');
  const link = table.getByRole('link', { name: runId, exact: true });
  await link.waitFor({ state: 'visible' });
  const rows = await table.getByRole('row').count();
  await shot('runs');
  await axeCheck('runs');
  await link.click();
  await hashIs(new RegExp(`^#/runs/${escapeRe(encodeURIComponent(runId))}$|^#/runs/${escapeRe(runId)}$`));
  if (!fileName) return `${rows} rows`;
  const file = page.getByRole('button', { name: fileName, exact: true }).or(page.getByRole('link', { name: fileName, exact: true }));
  await file.first().waitFor({ state: 'visible' });
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT }), file.first().click()]);
  const saved = join(outDir, `download-${download.suggestedFilename()}`);
  await download.saveAs(saved);
  const failure = await download.failure();
  if (failure) throw new Error(`the download failed: ${failure}`);
  const bytes = readFileSync(saved);
  const sum = createHash('sha256').update(bytes).digest('hex');
  if (download.suggestedFilename() !== fileName.split('/').pop()) {
    throw new Error(`the download is named ${download.suggestedFilename()}, want ${fileName.split('/').pop()}`);
  }
  if (fileSHA && sum !== fileSHA) throw new Error(`the download's sha256 is ${sum} (${bytes.length} bytes), want ${fileSHA}`);
  return `${rows} rows, downloaded ${fileName}: ${bytes.length} bytes, sha256 ${sum.slice(0, 12)}`;
});

// versionArticle is the article of a version of skill id in the list, named `<skill> <short
// digest>`: of the version with digest when given (its first 8 hex digits, with or without
// sha256:), else of any version of the skill.
const versionArticle = (id, digest = '') => {
  const hex = digest.replace(/^sha256:/, '').slice(0, 8);
  return page.getByRole('article', { name: new RegExp(`^${escapeRe(id)} ${hex ? `(sha256:)?${hex}` : ''}`) });
};

// 4. The review queue: approve a pending version with a note.
const approveNote = `approved by the console test ${Date.now()}`;
let approved; // the version step 4 approved
await step('4-approve', async () => {
  if (!approveSkill) return 'no SKILLBOX_E2E_APPROVE: skipped';
  const before = await api('GET', '/v1/versions', adminKey);
  const pending = before.json?.versions?.find((v) => v.skill === approveSkill);
  if (!pending) throw new Error(`the API's queue has no pending version of ${approveSkill}: ${before.text.slice(0, 300)}`);
  await go('#/skills');
  await nav('Versions');
  await hashIs(/^#\/versions/);
  const article = versionArticle(approveSkill, pending.digest).first();
  await article.waitFor({ state: 'visible' });
  // The diff against the published version is shown: each line the API gives.
  const text = await article.innerText();
  for (const line of pending.diff || []) {
    if (!text.includes(line)) throw new Error(`the version's article does not show its diff line ${JSON.stringify(line)}: ${text.slice(0, 300)}`);
  }
  await shot('versions');
  await docShot('versions');
  await axeCheck('versions');
  await article.getByLabel('Note', { exact: true }).fill(approveNote);
  await article.getByRole('button', { name: 'Approve', exact: true }).click();
  // The new status: in the version's article, or the version left the queue of pending ones.
  const shown = await poll('the approved version to show its new status', async () => {
    const refused = (await alerts().allTextContents()).map((t) => t.trim()).filter(Boolean);
    if (refused.length) throw Object.assign(new Error(`the console shows an alert after Approve: ${refused.join(' | ')}`), { fatal: true });
    const n = await versionArticle(approveSkill, pending.digest).count();
    // Gone while other versions are listed: it left the page (not a list being redrawn).
    if (n === 0 && (await page.getByRole('article').count()) > 0) return { ok: true, seen: 'left the page', how: 'left the page' };
    if (n === 0) return { ok: false, seen: 'no versions listed' };
    const t = await versionArticle(approveSkill, pending.digest).first().innerText();
    return { ok: /\bdraft\b/.test(t) && !/\bpending\b/.test(t.split('\n')[0]), seen: t.slice(0, 200), how: 'shown draft' };
  });
  const after = await api('GET', `/v1/skills/${encodeURIComponent(approveSkill)}/versions`, adminKey);
  const list = after.json?.versions || after.json || [];
  const v = (Array.isArray(list) ? list : []).find((x) => x.digest === pending.digest);
  if (!v || v.status !== 'draft') throw new Error(`the API says the version is ${v ? v.status : 'missing'}: ${after.text.slice(0, 300)}`);
  const ev = (v.events || []).find((e) => e.action === 'approve');
  if (!ev || ev.note !== approveNote) throw new Error(`the audit trail has no approve with the note: ${JSON.stringify(v.events)}`);
  if ((await alerts().count()) > 0) {
    const texts = (await alerts().allTextContents()).filter((t) => t.trim());
    if (texts.length) throw new Error(`an alert after approving: ${texts.join(' | ')}`);
  }
  await shot('versions-approved');
  approved = v;
  return `${approveSkill} ${pending.digest.slice(0, 19)}: ${shown.how}`;
});

// 4. The audit trail of the approved version, where the page still shows it: the approval, by
// whom, and its note.
await step('4-trail', async () => {
  if (!approved) throw new Error('step 4-approve approved nothing');
  const article = versionArticle(approveSkill, approved.digest);
  if ((await article.count()) === 0) return 'the approved version is not on the page: no trail to read';
  const ev = approved.events.find((e) => e.action === 'approve');
  // textContent, not innerText: a trail folded in a closed <details> is still there.
  const t = await poll('the approval in the trail', async () => {
    const text = (await article.first().textContent()) || '';
    return { ok: text.includes(approveNote) && text.includes(ev.by), seen: text.replace(/\s+/g, ' ').slice(-200), text };
  });
  return `the trail shows the approval by ${ev.by} with its note`;
});

// The ask steps: a run of askSkill waits for a person; the admin answers on the run's page,
// then on the Requests page for a time, and revokes the permit that made.
const askRuns = { once: '', for: '', denied: '' };
const promptLatency = []; // {where, run, dom_ms, painted_ms}
const askSentence = `The skill "${askSkill}" asks to fetch from ${askTarget}, which its grant does not allow.`;
const promptRegion = () => page.getByRole('region', { name: 'Permission request', exact: true });
const requestArticle = () => page.getByRole('article', { name: `${askSkill} ${askTarget}`, exact: true });
const statusWord = () => page.getByRole('status').filter({ hasText: /^\s*(queued|running|waiting|succeeded|failed|interrupted|canceled|cancelled|timeout)\s*$/ }).first();

// waitStatus waits until the run page's status reads want, noting each word seen.
async function waitStatus(want, seen = []) {
  return poll(`the status ${want}`, async () => {
    const t = ((await statusWord().textContent()) || '').trim();
    if (t && seen.at(-1) !== t) seen.push(t);
    return { ok: t === want, seen: seen.join(' -> ') };
  });
}

// startAsk starts a run of askSkill with key through the API and waits until its request is
// pending (as the admin lists them); it returns the run id and the request.
async function startAsk(key) {
  const r = await api('POST', `/v1/skills/${encodeURIComponent(askSkill)}/runs?async=true`, key, { args: { url: askURL } });
  if (r.status !== 202 || !r.json?.run_id) throw new Error(`the API's async run: ${r.status} ${r.text.slice(0, 200)}`);
  const id = r.json.run_id;
  const q = await poll(`the permission request of ${id}`, async () => {
    const l = await api('GET', '/v1/permission-requests', adminKey);
    const q = l.json?.requests?.find((x) => x.run_id === id);
    return { ok: !!q, seen: l.text.slice(0, 200), q };
  });
  return { id, q: q.q };
}

// promptTimes returns the latency of the run page's prompt for request q: from its asked_at
// (the server's clock) to when it entered the DOM, and to the frame after (the page's clock:
// the same machine).
async function promptTimes(where, q) {
  const p = await poll('the prompt noted by the page', async () => {
    const all = await page.evaluate(() => window.__skillboxPrompts || []);
    const p = all.find((x) => x.asked === q.asked_at && x.painted);
    return { ok: !!p, seen: all, p };
  });
  const asked = Date.parse(q.asked_at);
  const t = { where, run: q.run_id, dom_ms: p.p.at - asked, painted_ms: p.p.painted - asked };
  promptLatency.push(t);
  return t;
}

await step('ask-run', async () => {
  if (!askSkill) return 'no SKILLBOX_E2E_ASK_SKILL: skipped';
  await go(`#/skills/${encodeURIComponent(askSkill)}`);
  await page.getByRole('heading', { name: 'Run', exact: true }).waitFor({ state: 'visible' });
  await fillField(page, 'url', askURL);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const hsh = await hashIs(/^#\/runs\/[^/?]+$/);
  const id = decodeURIComponent(hsh.seen.slice('#/runs/'.length));
  askRuns.once = id;
  const region = promptRegion();
  await region.waitFor({ state: 'visible' });
  const text = (await region.innerText()).replace(/\s+/g, ' ');
  if (!text.includes(askSentence)) throw new Error(`the prompt does not say ${JSON.stringify(askSentence)}: ${text.slice(0, 300)}`);
  const statuses = [];
  await waitStatus('waiting', statuses);
  // The admin may cancel the run while it waits.
  await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor({ state: 'visible' });
  const q = (await api('GET', '/v1/permission-requests', adminKey)).json?.requests?.find((x) => x.run_id === id);
  if (!q) throw new Error(`the API lists no request of ${id}`);
  const lat = await promptTimes('run page', q);
  const minutes = region.getByLabel('Minutes', { exact: true });
  const want = String(Math.min(60, Math.floor(q.max_grant_seconds / 60)));
  if ((await minutes.inputValue()) !== want) throw new Error(`Minutes starts at ${await minutes.inputValue()}, want ${want}`);
  for (const name of ['Allow once', 'Allow for', 'Deny']) await region.getByRole('button', { name, exact: true }).waitFor({ state: 'visible' });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('run-ask');
  await docShot('request');
  await axeCheck('run-ask');
  await region.getByRole('button', { name: 'Allow once', exact: true }).click();
  await waitStatus('succeeded', statuses);
  const answered = page.getByRole('region', { name: 'Permission request answered', exact: true });
  await answered.waitFor({ state: 'visible' });
  const outcome = `allowed_once by ${caller || ''}`.trim();
  const atext = (await answered.innerText()).replace(/\s+/g, ' ');
  if (!atext.includes(outcome)) throw new Error(`the answered request does not say ${JSON.stringify(outcome)}: ${atext.slice(0, 300)}`);
  if (await promptRegion().count()) throw new Error('a prompt is still shown after the answer');
  const res = await poll('the result', async () => {
    const t = ((await resultJSON().textContent()) || '').trim();
    return { ok: t.startsWith('{'), seen: t, t };
  });
  if (JSON.parse(res.t).status !== 204) throw new Error(`the result is ${res.t}, want status 204`);
  await shot('run-ask-answered');
  return `run ${id}: statuses ${statuses.join(' -> ')}; prompt in the DOM ${lat.dom_ms} ms after asked_at (drawn ${lat.painted_ms} ms)`;
});

await step('ask-requests', async () => {
  if (!askSkill) return 'skipped';
  if (!runnerKey) throw new Error('SKILLBOX_RUNNER_KEY is not set');
  await go('#/skills');
  await nav('Requests');
  await hashIs(/^#\/requests/);
  await page.getByRole('heading', { level: 1, name: 'Requests' }).waitFor({ state: 'visible' });
  // Nothing waits yet: the empty state; then a run asks, and the page's refresh shows it.
  await page.getByText('No permission request waits for an answer.', { exact: true }).waitFor({ state: 'visible' });
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  const { id, q } = await startAsk(runnerKey);
  askRuns.for = id;
  const article = requestArticle();
  await article.waitFor({ state: 'visible' });
  const text = (await article.innerText()).replace(/\s+/g, ' ');
  if (!text.includes(askSentence)) throw new Error(`the request does not say ${JSON.stringify(askSentence)}: ${text.slice(0, 300)}`);
  await article.getByRole('link', { name: id, exact: true }).waitFor({ state: 'visible' });
  await article.getByLabel('Minutes', { exact: true }).fill('30');
  await shot('requests');
  await docShot('requests');
  await axeCheck('requests');
  await article.getByRole('button', { name: 'Allow for', exact: true }).click();
  await poll('the request to leave the page', async () => {
    const refused = (await alerts().allTextContents()).map((t) => t.trim()).filter(Boolean);
    if (refused.length) throw Object.assign(new Error(`an alert after Allow for: ${refused.join(' | ')}`), { fatal: true });
    return { ok: (await requestArticle().count()) === 0, seen: 'still listed' };
  });
  const run = await poll(`the run ${id} to end`, async () => {
    const r = await api('GET', `/v1/runs/${encodeURIComponent(id)}`, adminKey);
    return { ok: r.status === 200 && !['running', 'queued', 'waiting'].includes(r.json?.status), seen: r.text.slice(0, 200), r: r.json };
  });
  if (run.r.status !== 'succeeded' || run.r.result?.status !== 204) throw new Error(`the run ended ${run.r.status} with ${JSON.stringify(run.r.result)}`);
  const asked = run.r.usage?.asked?.[0];
  if (asked?.outcome !== 'allowed_for') throw new Error(`the run's usage.asked: ${JSON.stringify(run.r.usage?.asked)}`);
  const secs = (Date.parse(asked.until) - Date.parse(asked.at)) / 1000;
  if (Math.abs(secs - 1800) > 2) throw new Error(`allowed for ${secs} s, want 1800`);
  return `run ${id} of ${q.caller}: allowed for 30 minutes from the Requests page`;
});

await step('ask-permits', async () => {
  if (!askSkill) return 'skipped';
  if (!askRuns.for) throw new Error('step ask-requests made no permit');
  await go('#/skills');
  await nav('Permits');
  await hashIs(/^#\/permits/);
  const table = page.getByRole('table');
  const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: askRuns.for, exact: true }) });
  await row.waitFor({ state: 'visible' });
  const text = (await row.innerText()).replace(/\s+/g, ' ');
  for (const want of [askSkill, askTarget, 'network', askUser, caller].filter(Boolean)) {
    if (!text.includes(want)) throw new Error(`the permit's row does not show ${JSON.stringify(want)}: ${text}`);
  }
  await shot('permits');
  await axeCheck('permits');
  await row.getByRole('button', { name: 'Revoke', exact: true }).click();
  await poll('the permit to leave the table', async () => {
    const refused = (await alerts().allTextContents()).map((t) => t.trim()).filter(Boolean);
    if (refused.length) throw Object.assign(new Error(`an alert after Revoke: ${refused.join(' | ')}`), { fatal: true });
    return { ok: (await row.count()) === 0, seen: 'still listed' };
  });
  await page.getByText('No permit is in force.', { exact: true }).waitFor({ state: 'visible' });
  const left = await api('GET', '/v1/permits', adminKey);
  if (left.json?.permits?.some((p) => p.run_id === askRuns.for)) throw new Error(`the API still has the permit: ${left.text.slice(0, 300)}`);
  return `revoked the permit of run ${askRuns.for}`;
});

// pageAPI calls the API from the page, with the key the console holds (sessionStorage): what
// the API answers this tab's key, for what the console no longer offers it.
async function pageAPI(method, path, body) {
  return page.evaluate(async ([method, path, body]) => {
    const headers = { Authorization: `Bearer ${sessionStorage.getItem('skillbox.key')}` };
    if (body !== null) headers['Content-Type'] = 'application/json';
    const r = await fetch(path, { method, headers, body: body === null ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
    const text = await r.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text };
  }, [method, `${new URL(base).pathname.replace(/\/+$/, '')}${path}`, body === undefined ? null : body]);
}

// absent throws when scope offers any of the buttons named.
async function absent(scope, what, ...names) {
  for (const name of names) {
    if (await scope.getByRole('button', { name, exact: true }).count()) throw new Error(`${what} offers the button ${name}`);
  }
}

// refused asks the API, from the page, what the console no longer offers the key, and throws
// unless it answers 403: the API stays the authority.
async function refused(what, method, path, body) {
  const r = await pageAPI(method, path, body);
  if (r.status !== 403) throw new Error(`the API let the key ${what}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.json?.error?.message || '';
}

// 5. A viewer: offered no approval and no run; the API still refuses them.
await step('5-viewer', async () => {
  await go('#/skills');
  await page.getByRole('button', { name: 'Forget key', exact: true }).click();
  await page.getByLabel('API key', { exact: true }).waitFor({ state: 'visible' });
  const stored = await page.evaluate(() => sessionStorage.getItem('skillbox.key'));
  if (stored) throw new Error('Forget key left the key in sessionStorage');
  await signIn(viewerKey, 'viewer');
  const seen = [];

  if (pendingSkill) {
    await nav('Versions');
    await hashIs(/^#\/versions/);
    const article = versionArticle(pendingSkill).first();
    await article.waitFor({ state: 'visible' });
    // No action on any version (a viewer takes none), and a pending one says who takes it.
    await absent(page.getByRole('main'), 'the Versions page', 'Approve', 'Reject', 'Publish', 'Deprecate', 'Yank');
    if (await article.getByLabel('Note', { exact: true }).count()) throw new Error('a viewer is offered a Note');
    await article.getByText('An admin approves or rejects this version.', { exact: true }).waitFor({ state: 'visible' });
    seen.push('no Approve: "An admin approves or rejects this version."');
    const digest = (await api('GET', '/v1/versions', adminKey)).json?.versions?.find((v) => v.skill === pendingSkill)?.digest;
    if (!digest) throw new Error(`the API's queue has no pending version of ${pendingSkill}`);
    await refused('approve', 'POST', `/v1/skills/${encodeURIComponent(pendingSkill)}/versions/${digest}/approve`, { note: 'a viewer tries' });
    seen.push('the API refuses the page an approval (403)');
    await shot('viewer-versions');
    await axeCheck('viewer-versions');
    const still = await api('GET', '/v1/versions', adminKey);
    if (!still.json?.versions?.some((v) => v.skill === pendingSkill)) throw new Error(`${pendingSkill}'s version is no longer pending after the viewer`);
  }

  await nav('Skills');
  await page.getByLabel('Search skills', { exact: true }).fill(skill);
  await page.getByRole('link', { name: skill, exact: true }).click();
  await page.getByRole('heading', { name: 'Run', exact: true }).waitFor({ state: 'visible' });
  // The form is shown, disabled, with why instead of its Run button.
  await page.getByText('A viewer key cannot run skills.', { exact: true }).first().waitFor({ state: 'visible' });
  await absent(page.getByRole('main'), 'the skill page', 'Run', 'Run program');
  const first = Object.keys(args)[0];
  if (first && !(await page.getByLabel(first, { exact: true }).isDisabled())) throw new Error(`the field ${first} is not disabled for a viewer`);
  seen.push('no Run: "A viewer key cannot run skills."');
  await refused('run', 'POST', `/v1/skills/${encodeURIComponent(skill)}/runs?async=true`, { args });
  seen.push('the API refuses the page a run (403)');
  await shot('viewer-skill');
  await axeCheck('viewer-skill');
  return seen.join(', ');
});

// The viewer (the runner's user, so the runner's requests are its own to see) is offered no
// answer, on the Requests page and on the run's page (nor Cancel there), and reads who answers:
// the policy lets an admin alone (answered_by admin). The API still refuses the viewer's answer.
// The admin then denies the request through the API.
await step('ask-viewer', async () => {
  if (!askSkill) return 'skipped';
  if (!runnerKey) throw new Error('SKILLBOX_RUNNER_KEY is not set');
  const me = await page.evaluate(() => sessionStorage.getItem('skillbox.key'));
  if (me !== viewerKey) {
    await go('#/skills');
    if (await page.getByRole('button', { name: 'Forget key', exact: true }).count()) await page.getByRole('button', { name: 'Forget key', exact: true }).click();
    await signIn(viewerKey, 'viewer');
  }
  const { id, q } = await startAsk(runnerKey);
  askRuns.denied = id;
  if (q.answered_by !== 'admin') throw new Error(`the request says answered_by ${JSON.stringify(q.answered_by)}, want "admin" (the policy's default)`);
  const who = 'An admin answers this request.';
  const seen = [];

  await nav('Requests');
  const article = requestArticle();
  await article.waitFor({ state: 'visible' });
  await article.getByText(who, { exact: true }).waitFor({ state: 'visible' });
  await absent(article, 'the request on Requests', 'Allow once', 'Allow for', 'Deny');
  if (await article.getByLabel('Minutes', { exact: true }).count()) throw new Error('a viewer is offered Minutes');
  seen.push(`Requests: no answers, "${who}"`);
  const msg = await refused('answer', 'POST', `/v1/runs/${encodeURIComponent(id)}/permission-requests/${encodeURIComponent(q.id)}`, { decision: 'once' });
  seen.push(`the API refuses the page an answer (403: ${msg})`);
  await shot('viewer-requests');
  await axeCheck('viewer-requests');

  await go(`#/runs/${encodeURIComponent(id)}`);
  const region = promptRegion();
  await region.waitFor({ state: 'visible' });
  await waitStatus('waiting');
  const lat = await promptTimes('run page, opened mid-wait', q);
  await region.getByText(who, { exact: true }).waitFor({ state: 'visible' });
  await absent(region, 'the run page\'s prompt', 'Allow once', 'Allow for', 'Deny');
  // Cancel is the run's caller's with a runner key, or an admin's: not this viewer's.
  await absent(page.getByRole('main'), 'the run page', 'Cancel');
  seen.push('run page: no answers, no Cancel');
  await shot('viewer-run-ask');
  await axeCheck('viewer-run-ask');

  const deny = await api('POST', `/v1/runs/${encodeURIComponent(id)}/permission-requests/${q.id}`, adminKey, { decision: 'deny' });
  if (deny.status !== 200) throw new Error(`the admin's deny: ${deny.status} ${deny.text.slice(0, 200)}`);
  // The skill catches the refusal and returns it: the run succeeds with {error}.
  await waitStatus('succeeded');
  const res = await poll('the result', async () => {
    const t = ((await resultJSON().textContent()) || '').trim();
    return { ok: t.startsWith('{'), seen: t, t };
  });
  if (JSON.parse(res.t).error !== 'PermissionDenied') throw new Error(`the denied run's result is ${res.t}`);
  const answered = page.getByRole('region', { name: 'Permission request answered', exact: true });
  await answered.waitFor({ state: 'visible' });
  const atext = (await answered.innerText()).replace(/\s+/g, ' ');
  if (!atext.includes(`denied by ${caller}`)) throw new Error(`the answered request says ${atext.slice(0, 300)}`);
  seen.push(`denied by the admin; opened mid-wait, the prompt was in the DOM ${lat.dom_ms} ms after asked_at`);
  return seen.join(', ');
});

// 6. Accessibility: nothing serious or critical on any page visited.
const axeTotals = {};
for (const p of axePages) for (const [k, n] of Object.entries(p.counts)) axeTotals[k] = (axeTotals[k] || 0) + n;
const axeIncomplete = {};
for (const p of axePages) for (const v of p.incomplete) axeIncomplete[v.id] = (axeIncomplete[v.id] || 0) + 1;
const askSummary = () => ({
  ask_runs: askRuns,
  prompt_latency_ms: promptLatency.length ? promptLatency[0].dom_ms : null,
  prompt_latencies: promptLatency,
});
writeFileSync(join(outDir, 'axe-report.json'), JSON.stringify({ totals: axeTotals, incomplete: axeIncomplete, ...askSummary(), pages: axePages }, null, 2));
const wantPages = ['skills', 'skill', 'run', 'runs', 'versions', ...(askSkill ? ['run-ask', 'requests', 'permits'] : []),
  ...(pendingSkill ? ['viewer-versions'] : []), 'viewer-skill', ...(askSkill ? ['viewer-requests', 'viewer-run-ask'] : [])];
await step('6-axe', async () => {
  const want = wantPages;
  const missing = want.filter((w) => !axePages.some((p) => p.page === w));
  const bad = [];
  for (const p of axePages) {
    for (const v of p.violations) {
      if (v.impact === 'serious' || v.impact === 'critical') bad.push(`${p.page}: ${v.impact} ${v.id} (${v.nodes.length})`);
    }
  }
  if (bad.length) throw new Error(`axe: ${bad.join('; ')}`);
  if (missing.length) throw new Error(`pages not checked (an earlier step failed before them): ${missing.join(', ')}`);
  return `${axePages.length} pages, ${JSON.stringify(axeTotals)}`;
});

// 7. Screenshots: each page visited, full page.
await step('7-screenshots', async () => {
  const missing = wantPages.filter((n) => !shotFiles.some((f) => f.endsWith(`-${n}.png`)));
  if (missing.length) throw new Error(`no screenshot of: ${missing.join(', ')}`);
  return `${shotFiles.length} files`;
});

await context.close();
rmSync(userDataDir, { recursive: true, force: true });

const ok = steps.every((s) => s.ok);
for (const f of shotFiles) log(`screenshot ${f}`);
log(`axe report ${join(outDir, 'axe-report.json')}; browser log ${browserLog}`);
if (!skillPageOK) log('the skill page was not reached');
const summary = {
  ok,
  steps: Object.fromEntries(steps.map((s) => [s.name, s.ok ? 'pass' : 'fail'])),
  failed: steps.filter((s) => !s.ok).map((s) => `${s.name}: ${s.detail}`),
  axe: axeTotals,
  axe_incomplete: axeIncomplete,
  page_errors: pageErrors.length,
  run_id: runId,
  ...askSummary(),
  artifacts: outDir,
};
writeFileSync(join(outDir, 'summary.json'), JSON.stringify({ ...summary, details: steps }, null, 2));
console.log('E2E-SUMMARY ' + JSON.stringify(summary));
process.exit(ok ? 0 : 1);
