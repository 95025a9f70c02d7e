package server

import (
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// historyEnv serves the first-party skills and a trapping one over a runtime that records into a
// fresh SQLite store, which the server reads. It returns the env, the store, and the temporary
// root every host path of the test lives under.
func historyEnv(t *testing.T, opts Options) (*testEnv, store.Store, string) {
	t.Helper()
	root := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(root, "data", sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
	dir := filepath.Join(root, "host-skills-dir")
	fixture(t, dir, "trap", manifestJSON("trap", ""), "unreachable", nil)
	opts.History = s
	env := newEnvRuntime(t, opts, runtime.Config{Recorder: rec}, dir, filepath.Join("..", "skills"))
	return env, s, root
}

// GET /v1/runs lists every recorded run newest first, a page at a time, filtered; GET
// /v1/runs/{id} answers from the history, with the result while the runtime still holds it.
func TestRunHistoryFromAStore(t *testing.T) {
	t.Parallel()
	env, s, root := historyEnv(t, Options{})
	var ids []string // oldest first
	for i, body := range []string{`{"skill":"hello"}`, `{"skill":"word-count","input":{"text":"a b"}}`, `{"skill":"trap"}`,
		`{"skill":"hello"}`, `{"skill":"word-count","input":{"text":"c"}}`} {
		r := post(t, env.ts.URL+"/v1/runs", body)
		var res struct {
			RunID string `json:"run_id"`
		}
		r.decode(t, &res)
		if res.RunID == "" {
			t.Fatalf("run %d: %s", i, r)
		}
		ids = append(ids, res.RunID)
	}
	// Refused before it ran: no run, not in the history.
	wantError(t, post(t, env.ts.URL+"/v1/runs", `{"skill":"word-count","input":{"top":1}}`), 422, "invalid_args")
	newest := slices.Clone(ids)
	slices.Reverse(newest)

	page := func(query string) store.Page {
		t.Helper()
		r := get(t, env.ts.URL+"/v1/runs"+query)
		if r.status != 200 {
			t.Fatalf("GET /v1/runs%s: %s", query, r)
		}
		if strings.Contains(string(r.body), root) {
			t.Errorf("GET /v1/runs%s hands a client a host path: %s", query, r.body)
		}
		var p store.Page
		r.decode(t, &p)
		return p
	}
	runIDs := func(p store.Page) []string {
		var out []string
		for _, r := range p.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := runIDs(page("")); !slices.Equal(got, newest) {
		t.Errorf("all runs: %v, want newest first %v", got, newest)
	}
	// Two at a time, following next_cursor: every run once, in order, and the last page says so.
	var paged []string
	for cursor, n := "", 0; ; n++ {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := page(q)
		paged = append(paged, runIDs(p)...)
		if cursor = p.Next; cursor == "" || n > len(ids) {
			break
		}
	}
	if !slices.Equal(paged, newest) {
		t.Errorf("paged: %v, want %v", paged, newest)
	}
	if got := runIDs(page("?skill=word-count")); !slices.Equal(got, []string{ids[4], ids[1]}) {
		t.Errorf("skill=word-count: %v", got)
	}
	failed := page("?status=failed")
	if got := runIDs(failed); !slices.Equal(got, []string{ids[2]}) || failed.Runs[0].Error == nil || failed.Runs[0].Error.Kind != "trap" {
		t.Errorf("status=failed: %+v", failed.Runs)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := get(t, env.ts.URL+"/v1/runs?since="+future); r.status != 200 || !strings.Contains(string(r.body), `"runs":[]`) {
		t.Errorf("since the future: %s", r)
	}
	if got := runIDs(page("?skill=hello&since=" + url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339Nano)))); !slices.Equal(got, []string{ids[3], ids[0]}) {
		t.Errorf("skill and since: %v", got)
	}
	// By caller (the keyless server's runs are anonymous's) and before until: a run of another
	// caller, two hours old, is the only one of either.
	ci := store.Run{ID: "run_of_ci", Skill: "hello", Face: "cli", Caller: "ci", Status: store.StatusSucceeded, Success: true,
		StartedAt: time.Now().Add(-2 * time.Hour).UTC()}
	if err := s.FinishRun(t.Context(), ci); err != nil {
		t.Fatal(err)
	}
	if got := runIDs(page("?caller=ci")); !slices.Equal(got, []string{ci.ID}) {
		t.Errorf("caller=ci: %v", got)
	}
	if got := runIDs(page("?caller=anonymous")); !slices.Equal(got, newest) {
		t.Errorf("caller=anonymous: %v, want %v", got, newest)
	}
	hourAgo := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339Nano))
	if got := runIDs(page("?until=" + hourAgo)); !slices.Equal(got, []string{ci.ID}) {
		t.Errorf("until an hour ago: %v", got)
	}
	if got := runIDs(page("?caller=anonymous&since=" + hourAgo + "&until=" + future + "&limit=2")); !slices.Equal(got, newest[:2]) {
		t.Errorf("anonymous's between an hour ago and the future: %v, want %v", got, newest[:2])
	}

	// One run: the history's record, and the result the runtime still holds.
	var one struct {
		store.Run
		Result map[string]any `json:"result"`
		Logs   []run.LogEntry `json:"logs"`
	}
	r := get(t, env.ts.URL+"/v1/runs/"+ids[1])
	r.decode(t, &one)
	if one.ID != ids[1] || one.Status != store.StatusSucceeded || one.Face != "http" || one.FinishedAt.IsZero() || one.Result["words"] != float64(2) {
		t.Errorf("GET /v1/runs/{id}: %s", r)
	}
	// A run only the history has (another replica's, or from before a restart): no result.
	old := store.Run{ID: "run_from_elsewhere", Skill: "hello", Face: "cli", Status: store.StatusSucceeded, Success: true,
		StartedAt: time.Now().Add(-time.Minute).UTC()}
	if err := s.FinishRun(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	r = get(t, env.ts.URL+"/v1/runs/run_from_elsewhere")
	if r.status != 200 || !strings.Contains(string(r.body), `"face":"cli"`) || strings.Contains(string(r.body), `"result"`) {
		t.Errorf("a run only the history has: %s", r)
	}
	wantError(t, get(t, env.ts.URL+"/v1/runs/run_nope"), 404, "not_found")
}

// Each bad parameter is refused 400, and the message names it.
func TestRunHistoryBadParameters(t *testing.T) {
	t.Parallel()
	env, _, _ := historyEnv(t, Options{})
	doc, _ := loadOpenAPI(t)
	op, _ := doc.operation(t, "/v1/runs", "get")
	for _, status := range []int{200, 400, 501, 503} {
		if _, ok := op.Responses[strconv.Itoa(status)]; !ok {
			t.Errorf("GET /v1/runs: %d is not documented", status)
		}
	}
	for query, names := range map[string]string{
		"status=done":      "status",
		"since=yesterday":  "since",
		"since=2026-01-02": "since",
		"until=tomorrow":   "until",
		"since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z": "until",
		"caller=a&caller=b":   "caller",
		"limit=abc":           "limit",
		"limit=0":             "limit",
		"limit=-3":            "limit",
		"limit=1001":          "limit",
		"cursor=not-a-cursor": "cursor",
		"cursor=e30":          "cursor", // base64url of {}: decodes, but is not one we made
		"skil=hello":          "skil",
		"skill=a&skill=b":     "skill",
	} {
		e := wantError(t, get(t, env.ts.URL+"/v1/runs?"+query), 400, "bad_request")
		if !strings.Contains(e.Error.Message, names) {
			t.Errorf("?%s: the message does not name %q: %s", query, names, e.Error.Message)
		}
	}
}

// A history that cannot be read answers 503 without its cause (the log has it); a run the
// runtime still holds is answered from memory.
func TestRunHistoryDown(t *testing.T) {
	t.Parallel()
	env, s, _ := historyEnv(t, Options{})
	res := runResult(t, post(t, env.ts.URL+"/v1/runs", `{"skill":"hello"}`))
	s.Close()
	e := wantError(t, get(t, env.ts.URL+"/v1/runs"), 503, "unavailable")
	if strings.Contains(e.Error.Message, "closed") {
		t.Errorf("the client sees the cause: %s", e.Error.Message)
	}
	r := get(t, env.ts.URL+"/v1/runs/"+res.RunID)
	if r.status != 200 || !strings.Contains(string(r.body), `"status":"succeeded"`) {
		t.Errorf("a run in memory while the history is down: %s", r)
	}
	wantError(t, get(t, env.ts.URL+"/v1/runs/run_nope"), 503, "unavailable")
}

// The history is the viewer's to read, as the runs are: no key, no history.
func TestRunHistoryNeedsAViewer(t *testing.T) {
	t.Parallel()
	viewer := "viewer-key-0123456789"
	env, _, _ := historyEnv(t, Options{Keys: []APIKey{{Name: "v", Key: viewer, Role: access.RoleViewer}}})
	wantError(t, get(t, env.ts.URL+"/v1/runs"), 401, "unauthorized")
	if r := get(t, env.ts.URL+"/v1/runs", "Authorization", "Bearer "+viewer); r.status != 200 {
		t.Errorf("a viewer's GET /v1/runs: %s", r)
	}
}

// GET /v1/runs/{id} answers the same after a restart as before: the stored record keeps the
// result and the logs, within the policy's bound; a policy that omits them keeps neither.
func TestRunReadsTheSameAfterARestart(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, sqlite.FileName)
	var rec *store.Recorder
	serve := func(pol string) *testEnv {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		rec = storetest.NewRecorder(t, s, store.RecorderOptions{})
		var p *policy.Policy
		if pol != "" {
			if p, err = policy.Parse("policy.yaml", []byte(pol), nil); err != nil {
				t.Fatal(err)
			}
		}
		return newEnvRuntime(t, Options{History: s}, runtime.Config{Recorder: rec, Policy: p}, filepath.Join("..", "skills"))
	}
	read := func(env *testEnv, id string) string {
		t.Helper()
		if err := rec.Flush(t.Context()); err != nil { // its end written, not on its way
			t.Fatal(err)
		}
		r := get(t, env.ts.URL+"/v1/runs/"+id)
		if r.status != 200 {
			t.Fatalf("GET /v1/runs/%s: %s", id, r)
		}
		return string(r.body)
	}
	env := serve("")
	var kept run.Result
	post(t, env.ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"to be or not to be"}}`).decode(t, &kept)
	early := string(get(t, env.ts.URL+"/v1/runs/"+kept.RunID).body) // perhaps before its end is written
	before := read(env, kept.RunID)
	if early != before {
		t.Errorf("read at once\n%s\nonce written\n%s", early, before)
	}
	if !strings.Contains(before, `"result":{`) || !strings.Contains(before, `"status":"succeeded"`) {
		t.Fatalf("before: %s", before)
	}
	env2 := serve("runs: {omitResults: true, omitLogs: true}\n") // the same store, a new process
	if after := read(env2, kept.RunID); after != before {
		t.Fatalf("after a restart\n%s\nbefore\n%s", after, before)
	}
	var omitted run.Result
	post(t, env2.ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"a"}}`).decode(t, &omitted)
	if got := read(env2, omitted.RunID); strings.Contains(got, `"result"`) || strings.Contains(got, `"logs"`) {
		t.Fatalf("with omitResults and omitLogs: %s", got)
	}
	env3 := serve("runs: {maxRecordBytes: 8}\n")
	var big run.Result
	post(t, env3.ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"more words than eight bytes hold"}}`).decode(t, &big)
	if got := read(env3, big.RunID); strings.Contains(got, `"result"`) || !strings.Contains(got, `"trimmed":true`) {
		t.Fatalf("past maxRecordBytes: %s", got)
	}
}
