package console_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/console"
	"github.com/skillbox-dev/skillbox/internal/syncbuf"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// The keys of the browser test's server, one per role the console must handle. (TestMain, in
// server_test.go, lets its runtime compile in a child process.)
const (
	e2eAdminKey  = "console-e2e-admin-0123456789"
	e2eRunnerKey = "console-e2e-runner-0123456789"
	e2eViewerKey = "console-e2e-viewer-0123456789"
	// adminUser is who the admin key's runs and approvals are recorded as: the Caller filter.
	adminUser = "operator@e2e"
	// askUser holds the runner key and the viewer key: the viewer sees the runner's permission
	// requests as its own, is offered no answer to them, and the API refuses one (403), as a
	// viewer never may.
	askUser = "ann@e2e"
)

// askSkill fetches the URL it is given, a loopback server its manifest does not ask for: the
// policy lets a person allow 127.0.0.1 (policy.Ask), so each run waits for an answer unless a
// permit covers it. It returns the answer's status, or the name of the error that refused it.
const (
	askManifest = `{"id":"asker","name":"asker","version":"1.0.0",
  "description":"Fetches a URL its grant does not allow, so a person is asked.",
  "parameters":{"url":{"type":"string","description":"What to fetch","required":true}},
  "limits":{"timeoutMs":600000}}`
	askJS = `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}
`
)

// reportSkill logs a line per line it writes to /output/report.txt and returns what it did: a
// parameter of each kind the run form makes a field for (string, integer, boolean, enum).
// reportFile is the file it writes for args, the same rule in Go.
const reportManifest = `{"id":"report","name":"report","version":"1.0.0",
  "description":"Writes a short report to /output, a line at a time, logging each.",
  "parameters":{
    "title":{"type":"string","description":"What the report is about","required":true},
    "lines":{"type":"integer","description":"How many lines","default":2,"minimum":1,"maximum":50},
    "shout":{"type":"boolean","description":"Upper-case the lines","default":false},
    "tone":{"type":"string","description":"The frame of each line","enum":["plain","fancy"],"default":"plain"}},
  "permissions":{"files":[{"path":"/output","access":"read-write"}]},
  "limits":{"timeoutMs":30000}}`

const reportJS = `export async function execute(args, ctx) {
  let text = "";
  for (let i = 1; i <= args.lines; i++) {
    ctx.log("writing line " + i + " of " + args.lines);
    let line = i + "/" + args.lines + " " + args.title;
    if (args.shout) line = line.toUpperCase();
    if (args.tone === "fancy") line = "~ " + line + " ~";
    text += line + "\n";
  }
  await ctx.writeFile("/output/report.txt", text);
  ctx.log("wrote report.txt", "info");
  return {title: args.title, lines: args.lines, shout: args.shout, tone: args.tone, bytes: text.length};
}
`

const reportMD = "---\nname: report\ndescription: Writes a short report.\n---\n\n# Report\n\n" +
	"Writes `report.txt` to /output: `lines` lines of `title`, upper-cased when `shout`, framed by `tone`.\n"

// markupMD is the SKILL.md of an instructions skill whose text carries markup, which must show as
// text: the console builds DOM from text nodes.
const markupMD = "---\nname: markup\ndescription: Text with tags <b>in it</b>.\n---\n\n# Markup\n\n" +
	"An image that must stay text: <img src=\"x-e2e\" onerror=\"window.__skillboxXSS=true\">\n"

// The arguments the browser enters, field by field, and what they make.
var (
	reportArgs = map[string]any{"title": "Quarterly report", "lines": 3, "shout": true, "tone": "fancy"}
	reportWant = map[string]any{"title": "Quarterly report", "lines": 3, "shout": true, "tone": "fancy"}
)

func reportFile(title string, lines int, shout bool, tone string) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		line := fmt.Sprintf("%d/%d %s", i, lines, title)
		if shout {
			line = strings.ToUpper(line)
		}
		if tone == "fancy" {
			line = "~ " + line + " ~"
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// reviewed is a skill uploaded at version 1, published, then updated to a version 2 that asks
// for /output: version 2 waits in the review queue for an admin.
func reviewed(id, version string, wide bool) map[string]string {
	perms := ""
	if wide {
		perms = `,"permissions":{"files":[{"path":"/output","access":"read-write"}]}`
	}
	return map[string]string{
		"skill.json": `{"id":"` + id + `","name":"` + id + `","description":"The ` + id + ` skill, under review.","version":"` + version +
			`","parameters":{"type":"object"}` + perms + `}`,
		"execute.js": "export function execute(args) { return args; }\n",
	}
}

// e2eEnv is the server the browser drives.
type e2eEnv struct {
	url string
	st  store.Store
	log *syncbuf.Buffer
	// upstream is the loopback server the skill asker fetches, once a person allows it.
	upstream string
}

// newE2EEnv serves a runtime with a SQLite store (history, versions, artifacts) and the
// console, with keys for admin, runner and viewer, on a loopback port of its own; the skill
// report and the instructions skill markup in its skills directory, and two skills with a
// version pending approval each.
func newE2EEnv(t *testing.T) *e2eEnv {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := storetest.NewRecorder(t, st, store.RecorderOptions{})

	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "report"), map[string]string{"skill.json": reportManifest, "execute.js": reportJS, "SKILL.md": reportMD})
	writeFiles(t, filepath.Join(dir, "markup"), map[string]string{"SKILL.md": markupMD})
	writeFiles(t, filepath.Join(dir, "asker"), map[string]string{"skill.json": askManifest, "execute.js": askJS})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(upstream.Close)
	// A person may allow 127.0.0.1; a run waits long (bounds against a hang on a busy machine,
	// not the test's pace): the browser answers it between its other steps.
	pol := &policy.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Ask:    policy.Ask{Network: []string{"127.0.0.1"}, Timeout: 5 * time.Minute},
		Limits: spec.Limits{TimeoutMs: 600_000}}
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{dir}, Recorder: rec, Versions: st, Artifacts: rec,
		Policy: pol, NoBackgroundCheck: true, Shared: testengine.Shared(t, runtime.SharedConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	logs := &syncbuf.Buffer{}
	srv, err := server.New(rt, server.Options{
		Keys: []server.APIKey{
			{Name: "admin", Key: e2eAdminKey, Role: access.RoleAdmin, User: adminUser},
			{Name: "runner", Key: e2eRunnerKey, Role: access.RoleRunner, User: askUser},
			{Name: "viewer", Key: e2eViewerKey, Role: access.RoleViewer, User: askUser},
		},
		History: st,
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
		Console: console.Handler(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler()) // 127.0.0.1, a port of its own
	t.Cleanup(ts.Close)
	env := &e2eEnv{url: ts.URL, st: st, log: logs, upstream: upstream.URL}

	for _, id := range []string{"greeter", "mailer"} {
		v1 := env.upload(t, http.MethodPost, "/v1/skills", reviewed(id, "1.0.0", false), http.StatusCreated)
		env.call(t, http.MethodPost, "/v1/skills/"+id+"/versions/"+v1+"/publish", `{"note":"first"}`, e2eAdminKey, http.StatusOK, nil)
		env.upload(t, http.MethodPut, "/v1/skills/"+id, reviewed(id, "2.0.0", true), http.StatusAccepted)
	}
	return env
}

// upload installs files as the admin and returns the digest of the version it recorded.
func (e *e2eEnv) upload(t *testing.T, method, path string, files map[string]string, want int) string {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for name, data := range files {
		fw, err := w.CreateFormFile(name, name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(data))
	}
	w.Close()
	var out struct {
		Version struct{ Digest, Status string } `json:"recorded_version"`
	}
	e.do(t, method, path, w.FormDataContentType(), &body, e2eAdminKey, want, &out)
	if out.Version.Digest == "" {
		t.Fatalf("%s %s recorded no version", method, path)
	}
	return out.Version.Digest
}

// call sends a JSON body (none when "") with key and decodes the answer into out (unless nil).
func (e *e2eEnv) call(t *testing.T, method, path, body, key string, want int, out any) {
	t.Helper()
	var r io.Reader
	ctype := ""
	if body != "" {
		r, ctype = strings.NewReader(body), "application/json"
	}
	e.do(t, method, path, ctype, r, key, want, out)
}

func (e *e2eEnv) do(t *testing.T, method, path, ctype string, body io.Reader, key string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// TestConsoleE2E drives the console in headless Chromium with Playwright (console/e2e): the
// admin signs in with a key, finds the skill report, runs it from the form its parameters make
// and watches its events and result arrive, finds the run in the history by skill and caller and
// downloads its file, approves a pending version with a note; a run of asker waits for a person:
// the admin allows it once on the run's page, allows a second for 30 minutes on the Requests
// page and revokes the permit that made on the Permits page; a viewer is offered no approval, no
// run, no answer to a request and no Cancel, reads who may, and the API still refuses each when
// the page asks it directly (403); axe-core finds nothing serious or critical on any page;
// every page is photographed. The summary says how long after a request
// was asked its prompt entered the run page (prompt_latency_ms), by the machine's one clock.
// Screenshots, the axe report (axe-report.json), the browser's log and the download go to
// $SKILLBOX_ARTIFACTS (a temporary directory without it). The browser's steps are in
// console/e2e/console.mjs; this test builds their server and checks what they did through the
// API.
func TestConsoleE2E(t *testing.T) {
	node, script := nodeToolchain(t)
	browser := chromium(t)
	env := newE2EEnv(t)

	artifacts := os.Getenv("SKILLBOX_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(reportArgs)
	want, _ := json.Marshal(reportWant)
	file := reportFile("Quarterly report", 3, true, "fancy")
	sum := sha256.Sum256([]byte(file))

	// A bound against a hang, far beyond what the steps take: each of the script's own waits is
	// bounded at 60s, and it has about 70 of them.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(),
		"SKILLBOX_URL="+env.url,
		"SKILLBOX_ADMIN_KEY="+e2eAdminKey,
		"SKILLBOX_VIEWER_KEY="+e2eViewerKey,
		"SKILLBOX_RUNNER_KEY="+e2eRunnerKey,
		"SKILLBOX_E2E_ASK_SKILL=asker",
		"SKILLBOX_E2E_ASK_URL="+env.upstream+"/e2e",
		"SKILLBOX_E2E_ASK_TARGET=127.0.0.1",
		"SKILLBOX_E2E_ASK_USER="+askUser,
		"SKILLBOX_ARTIFACTS="+artifacts,
		"SKILLBOX_E2E_SKILL=report",
		"SKILLBOX_E2E_ARGS="+string(args),
		"SKILLBOX_E2E_RESULT="+string(want),
		"SKILLBOX_E2E_FILE=report.txt",
		"SKILLBOX_E2E_FILE_SHA256="+hex.EncodeToString(sum[:]),
		"SKILLBOX_E2E_CALLER="+adminUser,
		"SKILLBOX_E2E_APPROVE=greeter",
		"SKILLBOX_E2E_PENDING=mailer",
		"SKILLBOX_E2E_MARKUP=markup",
		"CHROMIUM="+browser,
	)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group: a hang ends with Chromium and its helpers, not only node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Minute
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever a crashed node left running
	}
	t.Logf("node %s:\n%s", filepath.Base(script), out.String())
	t.Logf("artifacts: %s", artifacts)
	var summary struct {
		OK     bool              `json:"ok"`
		Steps  map[string]string `json:"steps"`
		Failed []string          `json:"failed"`
		Axe    map[string]int    `json:"axe"`
		RunID  string            `json:"run_id"`
		// AskRuns are the runs of asker: answered on its page (allow once), on Requests (allow
		// for 30 minutes), and refused to the viewer, then denied by the admin.
		AskRuns  struct{ Once, For, Denied string } `json:"ask_runs"`
		PromptMs *float64                           `json:"prompt_latency_ms"`
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<20)
	found := false
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "E2E-SUMMARY "); ok {
			found = json.Unmarshal([]byte(s), &summary) == nil
		}
	}
	if err != nil || !found || !summary.OK {
		t.Logf("server log:\n%s", env.log.String())
		t.Fatalf("the browser test failed (%v): %s", err, strings.Join(summary.Failed, "\n"))
	}

	// What the browser did, as the API has it: the admin's run of report, with the arguments
	// entered in the form; the approved version with its note; none of the viewer's attempts.
	var got struct {
		Skill, Status, Caller string
	}
	env.call(t, http.MethodGet, "/v1/runs/"+summary.RunID, "", e2eAdminKey, http.StatusOK, &got)
	if got.Skill != "report" || got.Status != "succeeded" || got.Caller != adminUser {
		t.Errorf("the browser's run %s: %+v", summary.RunID, got)
	}
	var runs struct {
		Runs []struct{ Caller string } `json:"runs"`
	}
	env.call(t, http.MethodGet, "/v1/runs?skill=report", "", e2eAdminKey, http.StatusOK, &runs)
	for _, r := range runs.Runs {
		if r.Caller != adminUser {
			t.Errorf("a run of report by %q: only the admin ran it", r.Caller)
		}
	}
	// The permission requests, as the runs' records have them.
	for _, c := range []struct{ id, caller, outcome, by, result string }{
		{summary.AskRuns.Once, adminUser, "allowed_once", adminUser, `{"status":204}`},
		{summary.AskRuns.For, askUser, "allowed_for", adminUser, `{"status":204}`},
		{summary.AskRuns.Denied, askUser, "denied", adminUser, `{"error":"PermissionDenied"}`},
	} {
		var r struct {
			Skill, Status, Caller string
			Result                json.RawMessage
			Usage                 struct {
				Asked []struct{ Outcome, By string } `json:"asked"`
			}
		}
		env.call(t, http.MethodGet, "/v1/runs/"+c.id, "", e2eAdminKey, http.StatusOK, &r)
		var result bytes.Buffer
		json.Compact(&result, r.Result)
		if r.Skill != "asker" || r.Caller != c.caller || result.String() != c.result ||
			len(r.Usage.Asked) != 1 || r.Usage.Asked[0].Outcome != c.outcome || r.Usage.Asked[0].By != c.by {
			t.Errorf("the run of asker %q: %+v, want caller %s, result %s, asked %s by %s", c.id, r, c.caller, c.result, c.outcome, c.by)
		}
	}
	var permits struct {
		Permits []struct{ RunID string } `json:"permits"`
	}
	env.call(t, http.MethodGet, "/v1/permits", "", e2eAdminKey, http.StatusOK, &permits)
	if len(permits.Permits) != 0 {
		t.Errorf("permits in force after the browser revoked its one: %+v", permits.Permits)
	}
	if summary.PromptMs != nil {
		t.Logf("the run page showed the permission request %.0f ms after it was asked", *summary.PromptMs)
	}
	var queue struct {
		Versions []struct{ Skill string } `json:"versions"`
	}
	env.call(t, http.MethodGet, "/v1/versions", "", e2eAdminKey, http.StatusOK, &queue)
	if len(queue.Versions) != 1 || queue.Versions[0].Skill != "mailer" {
		t.Errorf("the review queue after the browser: %+v, want mailer's version alone", queue.Versions)
	}
}

// nodeToolchain returns node and the script, or skips when node or console/e2e/node_modules is
// missing (fails instead with SKILLBOX_REQUIRE_TOOLCHAINS set, as CI does).
func nodeToolchain(t *testing.T) (node, script string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("e2e", "console.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing(t, "node is missing (apt-get install nodejs npm)")
	}
	for _, pkg := range []string{"playwright-core", "axe-core"} {
		if _, err := os.Stat(filepath.Join("e2e", "node_modules", pkg, "package.json")); err != nil {
			missing(t, "console/e2e/node_modules has no "+pkg+": run (cd console/e2e && npm ci)")
		}
	}
	return node, script
}

// chromium returns the browser, or skips when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "chromium is missing (apt-get install chromium)")
	return ""
}

// missing skips t for what is missing, unless SKILLBOX_REQUIRE_TOOLCHAINS is set (CI sets it):
// then it fails.
func missing(t *testing.T, what string) {
	t.Helper()
	if v := os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS"); v == "" || v == "0" {
		t.Skip(what)
	}
	t.Fatalf("%s, and SKILLBOX_REQUIRE_TOOLCHAINS is set", what)
}

// writeFiles writes files (slash paths -> contents) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
