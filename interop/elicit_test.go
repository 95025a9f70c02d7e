package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testcache"
)

// sdkPackage is the official TypeScript MCP SDK, whose Client clients/elicit.mjs drives.
const sdkPackage = "@modelcontextprotocol/sdk"

// askSkill is the skill clients/elicit.mjs calls: it fetches the URL it is given, which its
// manifest does not ask for, and says what came of it.
const askSkill = "ask-fetch"

var askSkillFiles = map[string]string{
	"skill.json": `{"id":"ask-fetch","name":"ask-fetch","description":"Fetches a URL its grant does not name: a person may allow it.",` +
		`"parameters":{"url":{"type":"string","required":true}}}`,
	"execute.js": `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}
`,
}

// askPolicy lets runs dial loopback at all (it is closed by default) but grants the skill no
// host: a person may allow it 127.0.0.1.
const askPolicy = `allowNetworks: ["127.0.0.0/8"]
ask:
  network: ["127.0.0.1"]
`

// elicitReport is what clients/elicit.mjs prints.
type elicitReport struct {
	Versions        map[string]string
	Node            string
	Transport       string
	Elicitation     bool
	ProtocolVersion string
	Asked           []struct {
		Mode            string
		Message         string
		RequestedSchema struct {
			Type       string
			Properties map[string]struct {
				Type    string
				OneOf   []struct{ Const, Title string }
				Minimum *float64
				Maximum *float64
			}
			Required []string
		}
		Meta map[string]any
	}
	Result *struct {
		Text    string
		IsError bool
		Meta    map[string]any
		Thrown  string
	}
	Error      string
	CloseError string
}

// runID is the run the call's result names in its _meta.
func (r elicitReport) runID() string {
	if r.Result == nil {
		return ""
	}
	id, _ := r.Result.Meta["skillbox/runId"].(string)
	return id
}

// askedRecord is a run's record as skillbox runs --json and GET /v1/runs/{id} show it, as far
// as the permission requests go.
type askedRecord struct {
	RunID  string `json:"run_id"`
	Caller string
	Status string
	Usage  struct {
		Asked []struct {
			Request struct {
				ID, Skill, Caller, Kind, Target string
			}
			Outcome string
			By      string
			At      time.Time
			Until   *time.Time
		}
	}
}

// elicitScenario is one client's session: what its client declares (nil: form elicitation when
// it answers, nothing when not), how its person answers every elicitation (nil: a client without
// elicitation), what the call must return, and what the run's record must say.
type elicitScenario struct {
	name         string
	capabilities any
	answer       any
	want         string // the tool's result text
	asked        int    // elicitations the client's person gets
	outcome      string // the record's usage.asked outcome; "" when nothing is recorded
}

const (
	allowed = `{"status":204}`
	refused = `{"error":"PermissionDenied"}`
)

// The scenarios, in order: each is a new client session, and the allowance for a time answers
// the sessions after it, so it comes last but for the one that shows it.
var elicitScenarios = []elicitScenario{
	{name: "without elicitation", want: refused},
	// A client of URL elicitation alone is not sent a form (its SDK would refuse it before its
	// person saw it, so the record, which would say no_answer, tells).
	{name: "URL elicitation only", capabilities: elicitation(map[string]any{"url": map[string]any{}}), answer: accept("once", 0), want: refused},
	{name: "declined", answer: map[string]any{"action": "decline"}, want: refused, asked: 1, outcome: "denied"},
	{name: "dismissed", answer: map[string]any{"action": "cancel"}, want: refused, asked: 1, outcome: "no_answer"},
	{name: "denied in the form", answer: accept("deny", 0), want: refused, asked: 1, outcome: "denied"},
	// The form's default is to deny: an SDK that fills in defaults sends that for an empty form.
	{name: "accepted empty with defaults applied", capabilities: elicitation(map[string]any{"form": map[string]any{"applyDefaults": true}}),
		answer: map[string]any{"action": "accept", "content": map[string]any{}}, want: refused, asked: 1, outcome: "denied"},
	// An empty elicitation capability, as before forms and URLs were told apart, takes forms.
	{name: "allowed once", capabilities: elicitation(map[string]any{}), answer: accept("once", 0), want: allowed, asked: 1, outcome: "allowed_once"},
	{name: "allowed for 30 minutes", answer: accept("for", 30), want: allowed, asked: 1, outcome: "allowed_for"},
	// A person who would decline is not asked: the allowance covers this later run.
	{name: "then granted unasked", answer: map[string]any{"action": "decline"}, want: allowed, outcome: "granted"},
	// A client that takes no elicitation is covered by the allowance too: it holds whatever
	// face the run comes through.
	{name: "without elicitation, after the allowance", want: allowed, outcome: "granted"},
}

func elicitation(c map[string]any) map[string]any { return map[string]any{"elicitation": c} }

func accept(decision string, minutes int) map[string]any {
	content := map[string]any{"decision": decision}
	if minutes > 0 {
		content["minutes"] = minutes
	}
	return map[string]any{"action": "accept", "content": content}
}

// TestTypeScriptClientAnswersPermissionElicitations drives the official TypeScript MCP SDK's Client
// (clients/elicit.mjs), as a person answering Skillbox's permission requests, against skillbox
// mcp over stdio and skillbox serve's /mcp over streamable HTTP. A skill fetches a loopback host
// its grant does not name, under a policy that lets a person allow it: each session's call is
// put to its client as a form elicitation naming the skill and the host, and the answer decides
// the call; a client without elicitation is never asked. The run's record says what became of
// the request and who answered.
func TestTypeScriptClientAnswersPermissionElicitations(t *testing.T) {
	installClients(t)
	nodeBin, nodeVersion := node(t)
	pins := pinned(t)
	bin := buildSkillbox(t)

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	for name, data := range askSkillFiles {
		p := filepath.Join(dir, "skills", askSkill, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	policyFile := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(askPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	global := []string{"--cache-dir", testcache.Dir(), "--skills", filepath.Join(dir, "skills"), "--policy", policyFile}
	t.Logf("node %s (%s); upstream %s", nodeVersion, nodeBin, upstream.URL)

	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			// Each transport its own store, so that one's allowance does not answer the other's
			// requests. Over stdio every session is a skillbox mcp process of its own: the
			// allowance for a time reaches the next through the store.
			data := t.TempDir()
			var target []string
			var record func(t *testing.T, runID string) askedRecord
			switch transport {
			case "stdio":
				target = append(append([]string{"stdio", bin}, global...), "mcp", "--data-dir", data)
				record = func(t *testing.T, runID string) askedRecord { return storedRun(t, bin, data, runID) }
			case "http":
				srv := serve(t, bin, append(slices.Clone(global), "--data-dir", data)...)
				target = []string{"http", srv.url + "/mcp"}
				record = func(t *testing.T, runID string) askedRecord { return servedRun(t, srv.url, runID) }
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("skillbox serve's log:\n%s", srv.stderr())
					}
				})
			}
			var allowedUntil *time.Time // the allowance for a time, for the run it answers
			for _, sc := range elicitScenarios {
				ok := t.Run(sc.name, func(t *testing.T) {
					r := runElicitClient(t, nodeBin, map[string]any{"tool": "skill_ask_fetch", "args": map[string]any{"url": upstream.URL}, "answer": sc.answer, "capabilities": sc.capabilities}, target)
					if got, want := r.Versions[sdkPackage], pins[sdkPackage]; got != want {
						t.Errorf("%s is %s in node_modules, package.json pins %s: run npm ci in interop", sdkPackage, got, want)
					}
					if r.ProtocolVersion != "2025-11-25" {
						t.Errorf("protocol version %q, want 2025-11-25 (the SDK's latest, which Skillbox takes)", r.ProtocolVersion)
					}
					if r.Result == nil || r.Result.Thrown != "" || r.Result.IsError {
						t.Fatalf("the call failed: %+v", r.Result)
					}
					if r.Result.Text != sc.want || len(r.Asked) != sc.asked {
						t.Fatalf("result %s after %d elicitations, want %s after %d", r.Result.Text, len(r.Asked), sc.want, sc.asked)
					}
					runID := r.runID()
					if !strings.HasPrefix(runID, "run_") {
						t.Fatalf("the result's _meta names no run: %v", r.Result.Meta)
					}
					if sc.asked > 0 {
						checkElicitation(t, r, runID)
					}

					rec := record(t, runID)
					if rec.Status != "succeeded" || rec.Caller == "" {
						t.Errorf("run %s: status %q, caller %q", runID, rec.Status, rec.Caller)
					}
					if sc.outcome == "" {
						if len(rec.Usage.Asked) != 0 {
							t.Errorf("a run that asked nobody records requests: %+v", rec.Usage.Asked)
						}
						return
					}
					if len(rec.Usage.Asked) != 1 {
						t.Fatalf("usage.asked %+v, want one request", rec.Usage.Asked)
					}
					a := rec.Usage.Asked[0]
					if a.Outcome != sc.outcome || a.Request.Skill != askSkill || a.Request.Kind != "network" ||
						a.Request.Target != "127.0.0.1" || a.Request.Caller != rec.Caller {
						t.Errorf("usage.asked %+v, want %s of network 127.0.0.1 for %s by caller %s", a, sc.outcome, askSkill, rec.Caller)
					}
					// Who answered: the client's person, who is the run's own caller; nobody when
					// dismissed. An allowance that answers unasked names who allowed it.
					wantBy := rec.Caller
					if sc.outcome == "no_answer" {
						wantBy = ""
					}
					if a.By != wantBy {
						t.Errorf("usage.asked says %q answered, want %q", a.By, wantBy)
					}
					if sc.asked > 0 {
						if id, _ := r.Asked[0].Meta["skillbox/permissionRequest"].(string); id == "" || id != a.Request.ID {
							t.Errorf("the elicitation's request %q, the record's %q", id, a.Request.ID)
						}
					}
					switch sc.outcome {
					case "allowed_for":
						if a.Until == nil || a.Until.Sub(a.At) != 30*time.Minute {
							t.Errorf("allowed for 30 minutes from %v until %v", a.At, a.Until)
						}
						allowedUntil = a.Until
					case "granted":
						if a.Until == nil || allowedUntil == nil || !a.Until.Equal(*allowedUntil) {
							t.Errorf("granted until %v, want the allowance's end %v", a.Until, allowedUntil)
						}
					default:
						if a.Until != nil {
							t.Errorf("%s until %v", a.Outcome, a.Until)
						}
					}
				})
				if !ok && sc.outcome == "allowed_for" {
					break // what follows depends on it
				}
			}
		})
	}
}

// checkElicitation checks the form the client was asked to fill for run runID.
func checkElicitation(t *testing.T, r elicitReport, runID string) {
	t.Helper()
	e := r.Asked[0]
	if e.Mode != "form" {
		t.Errorf("elicitation mode %q, want form", e.Mode)
	}
	if want := fmt.Sprintf("%q asks to fetch from 127.0.0.1", askSkill); !strings.Contains(e.Message, want) {
		t.Errorf("elicitation message %q does not say %s", e.Message, want)
	}
	if got := e.Meta["skillbox/runId"]; got != runID {
		t.Errorf("elicitation _meta names run %v, the result %s", got, runID)
	}
	s := e.RequestedSchema
	var consts []string
	for _, o := range s.Properties["decision"].OneOf {
		if o.Title == "" {
			t.Errorf("decision %q has no title", o.Const)
		}
		consts = append(consts, o.Const)
	}
	m := s.Properties["minutes"]
	if s.Type != "object" || !slices.Equal(consts, []string{"once", "for", "deny"}) || !slices.Contains(s.Required, "decision") ||
		m.Type != "integer" || m.Minimum == nil || *m.Minimum != 1 || m.Maximum == nil || *m.Maximum < 30 {
		b, _ := json.Marshal(s)
		t.Errorf("requestedSchema %s: want decision once|for|deny (required) and minutes, an integer from 1", b)
	}
}

// runElicitClient runs clients/elicit.mjs for one scenario and returns its report.
func runElicitClient(t *testing.T, nodeBin string, scenario map[string]any, target []string) elicitReport {
	t.Helper()
	arg, err := json.Marshal(scenario)
	if err != nil {
		t.Fatal(err)
	}
	// A hang guard around the whole session: it measures nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{filepath.Join("clients", "elicit.mjs"), string(arg)}, target...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var r elicitReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || runErr != nil || r.Error != "" {
		t.Fatalf("node clients/elicit.mjs %s: %v\n--- stdout:\n%s\n--- stderr:\n%s",
			target[0], firstErr(runErr, err, r.Error), stdout.String(), stderr.String())
	}
	t.Logf("%s %s over %s, protocol %s; asked %d", sdkPackage, r.Versions[sdkPackage], r.Transport, r.ProtocolVersion, len(r.Asked))
	if stderr.Len() > 0 {
		t.Logf("stderr (the client's, and a stdio server's it passed on):\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("skillbox logged an error:\n%s", stderr.String())
	}
	if r.CloseError != "" {
		t.Errorf("closing the client: %s", r.CloseError)
	}
	return r
}

// storedRun is run id's record in the store in data, as skillbox runs prints it.
func storedRun(t *testing.T, bin, data, id string) askedRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "runs", "--data-dir", data, "--json", id).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("skillbox runs %s: %v\n%s", id, err, stderr)
	}
	var rec askedRecord
	if err := json.Unmarshal(out, &rec); err != nil || rec.RunID != id {
		t.Fatalf("skillbox runs %s: %v\n%s", id, err, out)
	}
	return rec
}

// servedRun is run id's record as skillbox serve at base answers GET /v1/runs/{id}.
func servedRun(t *testing.T, base, id string) askedRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	var rec askedRecord
	if err := json.Unmarshal(body.Bytes(), &rec); resp.StatusCode != http.StatusOK || err != nil || rec.RunID != id {
		t.Fatalf("GET /v1/runs/%s: %s %v\n%s", id, resp.Status, err, body.String())
	}
	return rec
}
