package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// askSkill fetches each of args.urls, reads args.env and args.file, and says what each gave: a
// status, or the error's name.
const askSkill = `export async function execute(args, ctx) {
  const out = [];
  for (const u of args.urls || []) {
    try { const r = await ctx.fetch(u); out.push(String(r.status)); } catch (e) { out.push(e.name); }
  }
  let env = null, file = null;
  if (args.env) env = ctx.env(args.env);
  if (args.file) { try { file = await ctx.readFile(args.file); } catch (e) { file = e.name; } }
  return {out, env, file};
}`

// askSkillPy is askSkill in Python: its calls go through the broker.
const askSkillPy = `def execute(args, ctx):
    out = []
    for u in args.get("urls", []):
        try:
            out.append(str(ctx.fetch(u).status))
        except Exception as e:
            out.append(type(e).__name__)
    env = ctx.env(args["env"]) if args.get("env") else None
    f = None
    if args.get("file"):
        try:
            f = ctx.read_file(args["file"])
        except Exception as e:
            f = type(e).__name__
    return {"out": out, "env": env, "file": f}
`

// scriptedAsker answers every request with answer, after noting it.
type scriptedAsker struct {
	mu     sync.Mutex
	asked  []run.PermissionRequest
	answer func(run.PermissionRequest) (run.PermissionAnswer, error)
}

func (a *scriptedAsker) Ask(ctx context.Context, q run.PermissionRequest) (run.PermissionAnswer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q)
	a.mu.Unlock()
	return a.answer(q)
}

func (a *scriptedAsker) requests() []run.PermissionRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]run.PermissionRequest(nil), a.asked...)
}

func answering(d run.Decision, secs int64) *scriptedAsker {
	return &scriptedAsker{answer: func(run.PermissionRequest) (run.PermissionAnswer, error) {
		return run.PermissionAnswer{Decision: d, ForSeconds: secs}, nil
	}}
}

type askFixture struct {
	rt   *Runtime
	url  string // the loopback server every fetch reaches
	data string // the askable directory's host side
}

func newAskFixture(t *testing.T, ask policy.Ask) askFixture {
	t.Helper()
	return newAskFixtureOn(t, ask, nil)
}

// newAskFixtureOn is newAskFixture with the permits kept in permits.
func newAskFixtureOn(t *testing.T, ask policy.Ask, permits permit.Store) askFixture {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(srv.Close)
	dir, data := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(data, "notes.txt"), []byte("from the asked directory"), 0o644))
	scriptFixture(t, dir, "asker", simple("asker", `"parameters":{"urls":{"type":"array","items":{"type":"string"}},"env":{"type":"string"},"file":{"type":"string"}}`),
		map[string]string{"execute.js": askSkill})
	scriptFixture(t, dir, "pyasker", simple("pyasker", `"parameters":{"urls":{"type":"array","items":{"type":"string"}},"env":{"type":"string"},"file":{"type":"string"}}`),
		map[string]string{"execute.py": askSkillPy})
	ask.Env = map[string]string{"TOKEN": "t0ken"}
	ask.Files = []policy.Mount{{Path: "/data", HostPath: data, Access: "read-only"}}
	p := &policy.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ask: ask}
	return askFixture{rt: newRuntime(t, Config{SkillDirs: []string{dir}, Policy: p, Permits: permits}), url: srv.URL, data: data}
}

type askResult struct {
	Out  []string `json:"out"`
	Env  *string  `json:"env"`
	File *string  `json:"file"`
}

func (f askFixture) run(t *testing.T, who access.Principal, asker run.Asker, args map[string]any) (askResult, *run.Result, []run.Event) {
	t.Helper()
	out, res, events, err := f.try(who, asker, args)
	if err != nil {
		t.Fatal(err)
	}
	return out, res, events
}

// try is run for another goroutine than the test's: it returns its failure.
func (f askFixture) try(who access.Principal, asker run.Asker, args map[string]any) (askResult, *run.Result, []run.Event, error) {
	return f.tryOn("asker", who, asker, args)
}

func (f askFixture) tryOn(skill string, who access.Principal, asker run.Asker, args map[string]any) (askResult, *run.Result, []run.Event, error) {
	b, _ := json.Marshal(args)
	var mu sync.Mutex
	var events []run.Event
	var out askResult
	res, err := f.rt.Run(context.Background(), run.Request{Skill: skill, Args: b, Who: who, Asker: asker,
		OnEvent: func(e run.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	if err != nil {
		return out, res, nil, fmt.Errorf("run: %w", err)
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		return out, res, nil, fmt.Errorf("result %s: %w", res.Result, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out, res, append([]run.Event(nil), events...), nil
}

var runner = access.Principal{Key: "k-ann", User: "ann", Role: access.RoleRunner}

// A host, a variable and a directory the policy makes askable are put to the face's person;
// allowed once, the calls succeed, and the run's usage says who allowed what.
func TestAskedPermissionAllowedOnce(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}})
	a := answering(run.AllowOnce, 0)
	got, res, events := f.run(t, runner, a, map[string]any{"urls": []string{f.url, f.url}, "env": "TOKEN", "file": "/data/notes.txt"})
	if strings.Join(got.Out, ",") != "204,204" || got.Env == nil || *got.Env != "t0ken" || got.File == nil || *got.File != "from the asked directory" {
		t.Fatalf("got %+v, want two 204s, the token and the file", got)
	}
	qs := a.requests()
	if len(qs) != 3 {
		t.Fatalf("asked %d times, want 3 (the host once, the variable, the directory): %+v", len(qs), qs)
	}
	want := [][3]string{{"network", "127.0.0.1", ""}, {"env", "TOKEN", ""}, {"files", "/data", "read-only"}}
	for i, q := range qs {
		if q.Kind != want[i][0] || q.Target != want[i][1] || q.Access != want[i][2] || q.Skill != "asker" || q.Caller != "ann" ||
			q.RunID != res.RunID || !strings.HasPrefix(q.ID, "preq_") || q.Scope != "caller" || !q.Deadline.After(q.AskedAt) {
			t.Errorf("request %d = %+v, want %v of ann's run %s", i, q, want[i], res.RunID)
		}
	}
	if n := len(res.Usage.Asked); n != 3 {
		t.Fatalf("usage.asked has %d entries, want 3", n)
	}
	for _, ak := range res.Usage.Asked {
		if ak.Outcome != run.OutcomeAllowedOnce || ak.By != "ann" {
			t.Errorf("asked %+v, want allowed_once by ann", ak)
		}
	}
	var kinds []string
	for _, e := range events {
		if e.Type == "permission_request" || e.Type == "permission_answer" || e.Status == "waiting" {
			kinds = append(kinds, e.Type+e.Status)
		}
	}
	if len(kinds) != 9 || kinds[0] != "statuswaiting" || kinds[1] != "permission_request" || kinds[2] != "permission_answer" {
		t.Errorf("events %v, want waiting, request, answer for each", kinds)
	}
}

// A Python skill's calls go through the broker, which asks before it times the operation.
func TestAskedPermissionFromPython(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}})
	a := answering(run.AllowOnce, 0)
	got, res, _, err := f.tryOn("pyasker", runner, a, map[string]any{"urls": []string{f.url}, "env": "TOKEN", "file": "/data/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Out[0] != "204" || got.Env == nil || *got.Env != "t0ken" || got.File == nil || *got.File != "from the asked directory" || len(a.requests()) != 3 {
		t.Errorf("got %+v, asked %d, usage %+v; want the host, the token and the file, each asked once", got, len(a.requests()), res.Usage.Asked)
	}
}

// Denied, or not answered before the policy's timeout, the call is refused as without asking.
func TestAskedPermissionDeniedOrUnanswered(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}, Timeout: 50 * time.Millisecond})
	got, res, _ := f.run(t, runner, answering(run.Deny, 0), map[string]any{"urls": []string{f.url, f.url}})
	if strings.Join(got.Out, ",") != "PermissionDenied,PermissionDenied" || len(res.Usage.Asked) != 1 || res.Usage.Asked[0].Outcome != run.OutcomeDenied {
		t.Errorf("denied: %+v, asked %+v; want two refusals after one request", got, res.Usage.Asked)
	}
	silent := &scriptedAsker{answer: func(run.PermissionRequest) (run.PermissionAnswer, error) {
		return run.PermissionAnswer{}, errors.New("no one is there")
	}}
	got, res, _ = f.run(t, runner, silent, map[string]any{"urls": []string{f.url}})
	if strings.Join(got.Out, ",") != "PermissionDenied" || len(res.Usage.Asked) != 1 || res.Usage.Asked[0].Outcome != run.OutcomeNoAnswer {
		t.Errorf("unanswered: %+v, asked %+v; want a refusal after no answer", got, res.Usage.Asked)
	}
}

// What the policy's ask section does not list is never asked, nor is anything when the face
// reaches nobody.
func TestNothingUnaskableIsAsked(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"api.example.com"}})
	a := answering(run.AllowOnce, 0)
	got, res, _ := f.run(t, runner, a, map[string]any{"urls": []string{f.url}, "env": "HOME", "file": "/etc/passwd"})
	if got.Out[0] != "PermissionDenied" || got.Env != nil || got.File == nil || *got.File != "PermissionDenied" || len(a.requests()) != 0 || len(res.Usage.Asked) != 0 {
		t.Errorf("got %+v, asked %d; want refusals and nothing asked", got, len(a.requests()))
	}
	f = newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}})
	got, res, _ = f.run(t, runner, nil, map[string]any{"urls": []string{f.url}, "env": "TOKEN"})
	if got.Out[0] != "PermissionDenied" || got.Env != nil || len(res.Usage.Asked) != 0 {
		t.Errorf("no asker: got %+v, asked %+v; want refusals and nothing asked", got, res.Usage.Asked)
	}
}

// An allowance for a time covers the caller's later runs of the same version without asking;
// another caller is asked again, unless the policy's scope is the tenant.
func TestAskedPermissionAllowedForATime(t *testing.T) {
	for _, tenant := range []bool{false, true} {
		f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}, Tenant: tenant})
		a := answering(run.AllowFor, 600)
		f.run(t, runner, a, map[string]any{"urls": []string{f.url}})
		got, res, _ := f.run(t, runner, a, map[string]any{"urls": []string{f.url}})
		if got.Out[0] != "204" || len(a.requests()) != 1 || res.Usage.Asked[0].Outcome != run.OutcomeGranted || res.Usage.Asked[0].By != "ann" {
			t.Fatalf("tenant=%v: second run %+v asked %d, usage %+v; want it granted by ann's answer", tenant, got, len(a.requests()), res.Usage.Asked)
		}
		// A permit holds whatever face the caller's next run comes through, one that reaches
		// nobody included.
		got, res, _ = f.run(t, runner, nil, map[string]any{"urls": []string{f.url}})
		if got.Out[0] != "204" || res.Usage.Asked[0].Outcome != run.OutcomeGranted {
			t.Errorf("tenant=%v: a run with no one to ask: %+v, %+v; want the permit honoured", tenant, got, res.Usage.Asked)
		}
		bob := access.Principal{Key: "k-bob", User: "bob", Role: access.RoleRunner}
		f.run(t, bob, a, map[string]any{"urls": []string{f.url}})
		if asked, want := len(a.requests()), map[bool]int{false: 2, true: 1}[tenant]; asked != want {
			t.Errorf("tenant=%v: asked %d times after bob's run, want %d", tenant, asked, want)
		}
	}
	f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}, MaxGrant: time.Minute})
	got, res, _ := f.run(t, runner, answering(run.AllowFor, 61), map[string]any{"urls": []string{f.url}})
	if got.Out[0] != "PermissionDenied" || res.Usage.Asked[0].Outcome != run.OutcomeNoAnswer {
		t.Errorf("an answer past maxGrant: %+v, %+v; want it refused as no answer", got, res.Usage.Asked)
	}
}

// A skill that floods requests is held to the policy's bound per run: past it, nobody is asked.
func TestAskedPermissionsBoundedPerRun(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"*"}, MaxPerRun: 2})
	port := f.url[strings.LastIndexByte(f.url, ':'):]
	var urls []string
	for i := 1; i <= 6; i++ {
		urls = append(urls, fmt.Sprintf("http://127.0.0.%d%s/", i, port))
	}
	a := answering(run.Deny, 0)
	_, res, _ := f.run(t, runner, a, map[string]any{"urls": urls})
	if len(a.requests()) != 2 {
		t.Errorf("asked %d times, want 2 (maxPerRun)", len(a.requests()))
	}
	var outcomes []string
	for _, ak := range res.Usage.Asked {
		outcomes = append(outcomes, ak.Outcome)
	}
	if strings.Join(outcomes, ",") != "denied,denied,refused,refused,refused,refused" {
		t.Errorf("outcomes %v", outcomes)
	}
}

// Through the API: the request is listed to an admin and to its caller, answered by an admin (or
// the caller when the policy says so), never by another key, and not after it ended.
func TestAnswerPermissionThroughTheAPI(t *testing.T) {
	for _, callerAnswers := range []bool{false, true} {
		f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}, CallerAnswers: callerAnswers})
		viewer := access.Principal{Key: "k-vic", User: "vic", Role: access.RoleViewer}
		answerer := testAdmin
		if callerAnswers {
			answerer = runner
		}
		type ended struct {
			got askResult
			res *run.Result
		}
		done := make(chan ended, 1)
		go func() {
			got, res, _, err := f.try(runner, run.AnswerThroughAPI, map[string]any{"urls": []string{f.url}})
			if err != nil {
				t.Error(err)
			}
			done <- ended{got, res}
		}()
		var q run.PermissionRequest
		for q.ID == "" { // the run asks when it gets to its fetch; nothing here races a clock
			if qs := f.rt.PermissionRequests(testAdmin); len(qs) == 1 {
				q = qs[0]
			}
			time.Sleep(time.Millisecond)
		}
		if len(f.rt.PermissionRequests(viewer)) != 0 || len(f.rt.PermissionRequests(runner)) != 1 {
			t.Errorf("listed to vic or not to ann")
		}
		if want := map[bool]string{false: "admin", true: "caller"}[callerAnswers]; q.AnsweredBy != want {
			t.Errorf("answered_by %q, want %q", q.AnsweredBy, want)
		}
		ctx := context.Background()
		if err := f.rt.AnswerPermission(ctx, viewer, q.RunID, q.ID, run.PermissionAnswer{Decision: run.AllowOnce}); !errors.Is(err, run.ErrMayNotAnswer) {
			t.Errorf("vic's answer: %v, want ErrMayNotAnswer", err)
		}
		if !callerAnswers {
			if err := f.rt.AnswerPermission(ctx, runner, q.RunID, q.ID, run.PermissionAnswer{Decision: run.AllowOnce}); !errors.Is(err, run.ErrMayNotAnswer) {
				t.Errorf("ann's answer under answeredBy admin: %v, want ErrMayNotAnswer", err)
			}
		}
		if err := f.rt.AnswerPermission(ctx, answerer, "run_000000000000000000000000", q.ID, run.PermissionAnswer{Decision: run.AllowOnce}); !errors.Is(err, run.ErrNoRequest) {
			t.Errorf("an answer for another run: %v, want ErrNoRequest", err)
		}
		if err := f.rt.AnswerPermission(ctx, answerer, q.RunID, q.ID, run.PermissionAnswer{Decision: "maybe"}); !errors.Is(err, run.ErrBadAnswer) {
			t.Errorf("a bad decision: %v, want ErrBadAnswer", err)
		}
		if err := f.rt.AnswerPermission(ctx, answerer, q.RunID, q.ID, run.PermissionAnswer{Decision: run.AllowOnce}); err != nil {
			t.Fatalf("answer: %v", err)
		}
		e := <-done
		if e.res == nil {
			t.FailNow()
		}
		if e.got.Out[0] != "204" || e.res.Usage.Asked[0].By != answerer.Caller() {
			t.Errorf("after the answer: %+v, %+v", e.got, e.res.Usage.Asked)
		}
		if err := f.rt.AnswerPermission(ctx, answerer, q.RunID, q.ID, run.PermissionAnswer{Decision: run.Deny}); !errors.Is(err, run.ErrRequestOver) {
			t.Errorf("a late answer: %v, want ErrRequestOver", err)
		}
	}
}

// The requests waiting at once in a runtime, a tenant's, are bounded: past the policy's
// maxPending, a run's request is refused unasked while the others wait.
func TestAskedPermissionsBoundedPerTenant(t *testing.T) {
	f := newAskFixture(t, policy.Ask{Network: []string{"127.0.0.1"}, MaxPending: 1})
	done := make(chan *run.Result, 1)
	go func() {
		_, res, _, err := f.try(runner, run.AnswerThroughAPI, map[string]any{"urls": []string{f.url}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var q []run.PermissionRequest
	for len(q) == 0 { // the first run waits for its answer: nothing here races a clock
		q = f.rt.PermissionRequests(testAdmin)
		time.Sleep(time.Millisecond)
	}
	a := answering(run.AllowOnce, 0)
	got, res, _ := f.run(t, runner, a, map[string]any{"urls": []string{f.url}})
	if got.Out[0] != "PermissionDenied" || len(a.requests()) != 0 || res.Usage.Asked[0].Outcome != run.OutcomeRefused {
		t.Errorf("a request past maxPending: %+v, asked %d, usage %+v; want it refused unasked", got, len(a.requests()), res.Usage.Asked)
	}
	if err := f.rt.AnswerPermission(context.Background(), testAdmin, q[0].RunID, q[0].ID, run.PermissionAnswer{Decision: run.Deny}); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || res.Usage.Asked[0].Outcome != run.OutcomeDenied {
		t.Errorf("the first run after its deny: %+v", res)
	}
}

// A permit kept in the store is honoured by every runtime over it, as a replica would; one the
// store cannot find (another version, a revoked one) is asked for again.
func TestPermitsAreKeptInTheStore(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ask := policy.Ask{Network: []string{"127.0.0.1"}}
	one, two := newAskFixtureOn(t, ask, st), newAskFixtureOn(t, ask, st)
	one.run(t, runner, answering(run.AllowFor, 600), map[string]any{"urls": []string{one.url}})
	list, err := st.ListPermits(t.Context(), time.Now(), 10)
	if err != nil || len(list) != 1 || list[0].Caller != "ann" || list[0].By != "ann" || list[0].Target != "127.0.0.1" || list[0].Skill != "asker" {
		t.Fatalf("permits kept: %+v, %v", list, err)
	}
	a := answering(run.Deny, 0)
	got, res, _ := two.run(t, runner, a, map[string]any{"urls": []string{two.url}})
	if got.Out[0] != "204" || len(a.requests()) != 0 || res.Usage.Asked[0].Outcome != run.OutcomeGranted {
		t.Errorf("the other runtime: %+v, asked %d, %+v; want the kept permit honoured", got, len(a.requests()), res.Usage.Asked)
	}
	if err := st.RevokePermit(t.Context(), list[0].ID, "root", time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _, _ = two.run(t, runner, a, map[string]any{"urls": []string{two.url}})
	if got.Out[0] != "PermissionDenied" || len(a.requests()) != 1 {
		t.Errorf("after the revocation: %+v, asked %d; want asked again, and denied", got, len(a.requests()))
	}
}
