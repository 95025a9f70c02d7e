package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testcache"
)

// clients are the scripts in clients/, each named by the package whose version it reports.
var clients = []struct{ script, pkg string }{
	{"inspector", "@modelcontextprotocol/inspector"},
	{"langchain", "@langchain/mcp-adapters"},
	{"ai-sdk", "@ai-sdk/mcp"},
	{"openai-agents", "@openai/agents"},
}

// wantTools are tools every client must list: the disclosure toolset and the executable skills
// the plan calls.
var wantTools = []string{"list_skills", "load_skill", "read_skill_resource", "run_skill", "run_skill_script", "skill_hello", "skill_word_count"}

// marker is a line of skills/commit-message/SKILL.md, the instruction skill (SKILL.md only).
const marker = "INTEROP-INSTRUCTIONS-7c1e"

// call is one step of the plan every client plays: a tool call and what its report must show.
type call struct {
	name  string
	tool  string
	args  string
	check func(t *testing.T, transport string, r callReport)
}

var plan = []call{
	{"load an instruction skill", "load_skill", `{"name":"commit-message"}`, func(t *testing.T, transport string, r callReport) {
		text := r.succeeded(t)
		if !strings.Contains(text, "# commit-message") || !strings.Contains(text, marker) {
			t.Errorf("load_skill: want the SKILL.md body with %q, got %q", marker, text)
		}
		if abs, _ := filepath.Abs("skills"); transport == "http" && strings.Contains(text, abs) {
			t.Errorf("load_skill over HTTP shows the host path %s: %q", abs, text)
		}
	}},
	{"call skill_hello", "skill_hello", `{"name":"Ada"}`, func(t *testing.T, _ string, r callReport) {
		r.succeeded(t)
		var v struct{ Greeting string }
		if err := json.Unmarshal(r.value(), &v); err != nil || v.Greeting != "Hello, Ada!" {
			t.Errorf("skill_hello: want {\"greeting\":\"Hello, Ada!\"}, got %s (%v)", r.value(), err)
		}
	}},
	{"run_skill word-count", "run_skill", `{"skill":"word-count","args":{"text":"a b a"}}`, func(t *testing.T, _ string, r callReport) {
		r.succeeded(t)
		var v struct{ Words, Lines int }
		if err := json.Unmarshal(r.value(), &v); err != nil || v.Words != 3 || v.Lines != 1 {
			t.Errorf("run_skill word-count: want words 3, lines 1, got %s (%v)", r.value(), err)
		}
	}},
	{"run_skill_script of an instruction skill", "run_skill_script", `{"skill":"commit-message","script":"scripts/subject.js","args":["fix the parser."]}`, func(t *testing.T, _ string, r callReport) {
		r.succeeded(t)
		var v struct {
			ExitCode int `json:"exit_code"`
			Stdout   string
		}
		if err := json.Unmarshal(r.value(), &v); err != nil || v.ExitCode != 0 || v.Stdout != "Fix the parser\n" {
			t.Errorf("run_skill_script: want exit 0 and \"Fix the parser\", got %s (%v)", r.value(), err)
		}
	}},
	{"run_skill with invalid arguments", "run_skill", `{"skill":"word-count","args":{}}`, func(t *testing.T, _ string, r callReport) {
		// The client must show the model the error and its kind; some clients throw it.
		if r.IsError != nil && !*r.IsError {
			t.Errorf("a call with a missing argument was not an error: %+v", r)
		}
		if got := r.Text + r.Thrown; !strings.Contains(got, "invalid_args") || !strings.Contains(got, "text") {
			t.Errorf("want the invalid_args error naming the argument text, got %q", got)
		}
	}},
}

// report is what a client script prints (clients/lib.mjs).
type report struct {
	Client     string
	Versions   map[string]string
	Node       string
	Transport  string
	Tools      []string
	Calls      map[string]callReport
	Error      string
	CloseError string
}

// callReport is what the client returned for one call: the text it surfaced, the structured
// value if it kept one, whether it said the call failed (nil when it does not say), or what it
// threw.
type callReport struct {
	Text       string
	Structured json.RawMessage
	IsError    *bool
	Thrown     string
}

// succeeded fails t unless the call returned without error, and returns its text.
func (r callReport) succeeded(t *testing.T) string {
	t.Helper()
	if r.Thrown != "" || (r.IsError != nil && *r.IsError) {
		t.Errorf("the call failed: %+v", r)
	}
	return r.Text
}

// value is the call's result as a client's user reads it: the structured value when the client
// kept it, else the text, which Skillbox sends as the result's JSON.
func (r callReport) value() json.RawMessage {
	if len(r.Structured) > 0 && string(r.Structured) != "null" {
		return r.Structured
	}
	return json.RawMessage(r.Text)
}

// TestClients drives Skillbox with each client over stdio (`skillbox mcp`) and streamable HTTP
// (`skillbox serve`): each lists the tools, loads an instruction skill, calls an executable skill
// through its own tool and through run_skill, and shows a tool error.
func TestClients(t *testing.T) {
	installClients(t)
	nodeBin, nodeVersion := node(t)
	pins := pinned(t)
	bin := buildSkillbox(t)
	bundled, err := filepath.Abs("../skills")
	if err != nil {
		t.Fatal(err)
	}
	local, err := filepath.Abs("skills")
	if err != nil {
		t.Fatal(err)
	}
	global := []string{"--cache-dir", testcache.Dir(), "--skills", bundled, "--skills", local}
	srv := serve(t, bin, global...)
	t.Logf("node %s (%s); skillbox serve at %s", nodeVersion, nodeBin, srv.url)

	planJSON := planArg(t)
	targets := map[string][]string{
		// The SDKs hand a stdio server a bare environment: where its store is goes on its command line.
		"stdio": append(append([]string{"stdio", bin}, global...), "mcp", "--data-dir", os.Getenv("SKILLBOX_DATA_DIR")),
		"http":  {"http", srv.url + "/mcp"},
	}
	for _, c := range clients {
		t.Run(c.script, func(t *testing.T) {
			t.Parallel()
			for _, transport := range []string{"stdio", "http"} {
				t.Run(transport, func(t *testing.T) {
					r := runClient(t, nodeBin, c.script, planJSON, targets[transport])
					t.Logf("%s %s over %s; versions %v", c.pkg, r.Versions[c.pkg], transport, r.Versions)
					if want := pins[c.pkg]; r.Versions[c.pkg] != want {
						t.Errorf("%s is %s in node_modules, package.json pins %s: run npm ci in interop", c.pkg, r.Versions[c.pkg], want)
					}
					checkReport(t, transport, r)
				})
			}
		})
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("skillbox serve's log:\n%s", srv.stderr())
		}
	})
}

// planArg is the plan as the scripts read it.
func planArg(t *testing.T) string {
	t.Helper()
	type step struct {
		Name string          `json:"name"`
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	var steps []step
	for _, c := range plan {
		steps = append(steps, step{c.name, c.tool, json.RawMessage(c.args)})
	}
	b, err := json.Marshal(map[string]any{"calls": steps})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runClient runs clients/<script>.mjs and returns its report.
func runClient(t *testing.T, nodeBin, script, planJSON string, target []string) report {
	t.Helper()
	// A hang guard around the whole session (a client's own per-request timeouts are set
	// generous in its script): it measures nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{filepath.Join("clients", script+".mjs"), planJSON}, target...)
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || runErr != nil || r.Error != "" {
		t.Fatalf("node clients/%s.mjs %s: %v\n--- stdout:\n%s\n--- stderr:\n%s",
			script, target[0], firstErr(runErr, err, r.Error), stdout.String(), stderr.String())
	}
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
	if stderr.Len() > 0 {
		t.Logf("stderr (the client's, and a stdio server's it passed on):\n%s", stderr.String())
	}
	// The client ends the session as it does: skillbox logs no error for a clean stop.
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("skillbox logged an error for a session that went well:\n%s", stderr.String())
	}
	return r
}

func firstErr(runErr, jsonErr error, reported string) error {
	switch {
	case reported != "":
		return fmt.Errorf("%s", reported)
	case runErr != nil:
		return runErr
	}
	return jsonErr
}

// checkReport checks the tools listed and every call of the plan.
func checkReport(t *testing.T, transport string, r report) {
	t.Helper()
	for _, want := range wantTools {
		if !slices.Contains(r.Tools, want) {
			t.Errorf("tools %v: no %s", r.Tools, want)
		}
	}
	for _, c := range plan {
		got, ok := r.Calls[c.name]
		if !ok {
			t.Errorf("%s: not in the report", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.check(t, transport, got) })
	}
	if r.CloseError != "" {
		t.Errorf("closing the client: %s", r.CloseError)
	}
}
