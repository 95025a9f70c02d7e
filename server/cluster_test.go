package server

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// GET /v1/cluster answers a node's cluster to the operator's admin keys only, and a server that
// is no node says so.
func TestClusterEndpoint(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	node, err := cluster.Join(ctx, cluster.Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "here"},
		func() cluster.Presence { return cluster.Presence{Slots: 3, Free: 2} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	const (
		admin  = "admin-key-0123456789abcdef"
		viewer = "viewer-key-0123456789abcdef"
		user   = "user-admin-0123456789abcdef"
	)
	keys := []APIKey{{Name: "ops", Key: admin, Role: access.RoleAdmin}, {Name: "look", Key: viewer, Role: access.RoleViewer},
		{Name: "alice", Key: user, Role: access.RoleAdmin, User: "alice"}}
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	env := newEnvRuntime(t, Options{Keys: keys, Cluster: node}, runtime.Config{}, dir)
	r := get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+admin)
	var st cluster.Status
	if r.status != 200 || json.Unmarshal(r.body, &st) != nil {
		t.Fatalf("the operator's admin: %s", r)
	}
	if st.Node != "here" || len(st.Nodes) != 1 || st.Nodes[0].Slots != 3 || st.Nodes[0].Free != 2 || st.Replicas != 1 {
		t.Errorf("status %+v", st)
	}
	wantError(t, get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+viewer), 403, "forbidden")
	wantError(t, get(t, env.ts.URL+"/v1/cluster", "Authorization", "Bearer "+user), 403, "forbidden")

	alone := newEnvRuntime(t, Options{}, runtime.Config{}, dir)
	wantError(t, get(t, alone.ts.URL+"/v1/cluster"), 404, "not_clustered")
}

// Two replicas that share a run history and are nodes of one cluster answer for each other's
// runs: a run on one is watched on the other, from the start or after any Last-Event-ID, with
// the same events, numbers and data as on its own replica, without gaps or repeats; it is
// canceled from the other (by its key or an admin, not by another key), and a cancel that comes
// too late says how it finished.
func TestClusterNodesAnswerForEachOthersRuns(t *testing.T) {
	t.Parallel()
	const (
		runner = "runner-key-0123456789abcdef"
		nosy   = "nosy-runner-0123456789abcdef"
		admin  = "admin-key-0123456789abcdef"
	)
	keys := []APIKey{{Name: "alice", Key: runner, Role: access.RoleRunner}, {Name: "eve", Key: nosy, Role: access.RoleRunner},
		{Name: "ops", Key: admin, Role: access.RoleAdmin}}
	a, b, _ := clusterPair(t, keys, runtime.Admission{})
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }

	// A short run, watched whole on both replicas once it is over.
	short := startAsync(t, a.ts.URL, "/v1/skills/ticker/runs", `{"args":{"count":5,"ms":1}}`, as(runner)...)
	here := watch(t, a.ts.URL+short.Links.Events, as(runner)...)
	there := watch(t, b.ts.URL+short.Links.Events, as(runner)...)
	if len(here) < 8 || !reflect.DeepEqual(sequence(here), sequence(there)) {
		t.Fatalf("on its replica %v\non the other %v", sequence(here), sequence(there))
	}
	for i := range here {
		if string(here[i].data) != string(there[i].data) {
			t.Fatalf("event %s differs:\n%s\n%s", here[i].id, here[i].data, there[i].data)
		}
	}
	resumed := watch(t, b.ts.URL+short.Links.Events, append(as(runner), "Last-Event-ID", "3")...)
	if !reflect.DeepEqual(sequence(resumed), sequence(here)[3:]) {
		t.Fatalf("resumed after 3 on the other replica: %v, want %v", sequence(resumed), sequence(here)[3:])
	}
	wantError(t, post(t, b.ts.URL+short.Links.Cancel, ``, as(runner)...), 409, "run_finished")

	// An endless run, watched live on the other replica, then canceled from it.
	long := startAsync(t, a.ts.URL, "/v1/skills/ticker/runs", endlessTicks, as(runner)...)
	resp := openEvents(t, t.Context(), b.ts.URL+long.Links.Events, as(runner)...)
	var live []sseEvent
	if err := readSSE(t, resp.Body, func(e sseEvent) bool { live = append(live, e); return len(live) < 5 }); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := sequence(live); got[0] != "1:status:started" || got[4] != "5:log" {
		t.Fatalf("live on the other replica: %v", got)
	}
	wantError(t, post(t, b.ts.URL+long.Links.Cancel, ``, as(nosy)...), 403, "forbidden")
	if r := post(t, b.ts.URL+long.Links.Cancel, ``, as(runner)...); r.status != 202 {
		t.Fatalf("cancel from the other replica: %s", r)
	}
	rest := watch(t, b.ts.URL+long.Links.Events, append(as(admin), "Last-Event-ID", "5")...)
	if rest[0].id != "6" {
		t.Fatalf("resumed after 5: %v", sequence(rest))
	}
	for i, e := range rest {
		if e.id != strconv.Itoa(6+i) {
			t.Fatalf("a gap or a repeat: %v", sequence(rest))
		}
	}
	res := lastResult(t, rest)
	if res.Error == nil || res.Error.Kind != run.KindCanceled || !strings.Contains(res.Error.Message, `key "alice" asked for it`) {
		t.Fatalf("result %+v", res)
	}
	// Nothing of another key's run leaks: an unknown run is 404 on every replica.
	wantError(t, get(t, b.ts.URL+"/v1/runs/run_000000000000000000000000/events", as(runner)...), 404, "not_found")
	wantError(t, post(t, b.ts.URL+"/v1/runs/run_000000000000000000000000/cancel", ``, as(admin)...), 404, "not_found")
}

// A result larger than a cluster message is shared as a stand-in that fits: the result without
// its value and logs, saying where the whole is; other events are not replaced.
func TestClusterStandInForALargeResult(t *testing.T) {
	big := &run.Result{RunID: "run_1", Skill: "s", Success: true, Result: json.RawMessage(`"` + strings.Repeat("x", 8000) + `"`),
		Logs: []run.LogEntry{{Level: "info", Message: strings.Repeat("y", 3000)}}}
	data := standIn(keptEvent{ev: run.Event{Type: "result", RunID: "run_1", Result: big}}, 2048)
	var e run.Event
	if len(data) == 0 || len(data) > 2048 || json.Unmarshal(data, &e) != nil || e.Type != "result" || e.Result == nil {
		t.Fatalf("stand-in %s", data)
	}
	if r := e.Result; !r.Success || r.Result != nil || r.LogsDropped != 1 || len(r.Logs) != 1 || !strings.Contains(r.Logs[0].Message, "GET /v1/runs/run_1") {
		t.Errorf("stand-in result %+v", r)
	}
	if standIn(keptEvent{ev: run.Event{Type: "log", RunID: "run_1", Log: &run.LogEntry{}}}, 10) != nil {
		t.Error("a log event got a stand-in")
	}
}

// clusterPair is two replicas that share a SQLite run history and are nodes of one cluster,
// serving ticker with keys and admission.
// twoNodes is two nodes of one cluster of one: hub embeds the NATS server, other joins it.
func twoNodes(t *testing.T) (hub, other *cluster.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	hub, err := cluster.Join(ctx, cluster.Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	if other, err = cluster.Join(ctx, cluster.Config{URLs: []string{hub.URL()}, NodeID: "b"}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	return hub, other
}

func clusterPair(t *testing.T, keys []APIKey, admission runtime.Admission) (a, b *testEnv, s store.Store) {
	t.Helper()
	hub, other := twoNodes(t)
	var err error
	if s, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	replica := func(node Cluster) *testEnv {
		rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
		dir := t.TempDir()
		fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000}`), "ticker", nil)
		sh := testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache, Admission: admission})
		return newEnvRuntime(t, Options{Keys: keys, History: s, Cluster: node}, runtime.Config{Recorder: rec, Shared: sh}, dir)
	}
	return replica(hub), replica(other), s
}

// A run a node has no room for is queued for the cluster (202, status queued) and run by the
// node that has room: its events, queued first, are served on both nodes alike, and a cancel on
// the node that queued it reaches the node that runs it. A run no node has room for waits in
// the queue; canceled there, the node that takes it later ends it canceled without running it,
// with one history row.
func TestClusterQueuesARunForTheNodeWithRoom(t *testing.T) {
	t.Parallel()
	a, b, s := clusterPair(t, nil, runtime.Admission{MaxRuns: 1})
	first := startAsyncStatus(t, a.ts.URL, endlessTicks, "running")
	// A synchronous run the node has no room for answers its result from the node that ran it.
	r := post(t, a.ts.URL+"/v1/skills/ticker/runs", `{"args":{"count":2,"ms":1}}`)
	var res run.Result
	if r.status != 200 || json.Unmarshal(r.body, &res) != nil || !res.Success || !run.ValidID(res.RunID) {
		t.Fatalf("a synchronous run queued for the cluster: %s", r)
	}
	waitHistory(t, s, res.RunID, store.StatusSucceeded)
	second := startAsyncStatus(t, a.ts.URL, endlessTicks, "queued")
	waitHistory(t, s, second.RunID, store.StatusRunning) // b took it
	resp := openEvents(t, t.Context(), a.ts.URL+second.Links.Events)
	var live []sseEvent
	if err := readSSE(t, resp.Body, func(e sseEvent) bool { live = append(live, e); return len(live) < 4 }); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := sequence(live); got[0] != "1:status:queued" || got[1] != "2:status:started" || got[3] != "4:log" {
		t.Fatalf("the queued run's events on the node that queued it: %v", got)
	}
	if r := post(t, a.ts.URL+second.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel on the node that queued it: %s", r)
	}
	evs := watch(t, b.ts.URL+second.Links.Events)
	if res := lastResult(t, evs); res.Error == nil || res.Error.Kind != run.KindCanceled {
		t.Fatalf("the queued run ended %+v", res.Error)
	}
	waitHistory(t, s, second.RunID, store.StatusFailed)

	// b's slot is free again; take it, then queue a third run nobody has room for, and cancel
	// it while it waits. (b took a run from the queue lately, so its new run may join the
	// queue first; b takes it from there, having the only free slot.)
	busy := startAsyncStatus(t, b.ts.URL, endlessTicks, "running|queued")
	waitHistory(t, s, busy.RunID, store.StatusRunning)
	third := startAsyncStatus(t, a.ts.URL, `{"args":{"count":1,"ms":1}}`, "queued")
	// While it waits, every node reads it: the history has it queued, and b, which did not
	// queue it, answers its record and its first event, and cancels it.
	waitHistory(t, s, third.RunID, store.StatusQueued)
	var rec store.Run
	if r := get(t, b.ts.URL+"/v1/runs/"+third.RunID); r.status != 200 || json.Unmarshal(r.body, &rec) != nil || rec.Status != store.StatusQueued || rec.Skill != "ticker" {
		t.Fatalf("the waiting run on the node that did not queue it: %s", r)
	}
	resp = openEvents(t, t.Context(), b.ts.URL+third.Links.Events)
	var first3 []sseEvent
	if err := readSSE(t, resp.Body, func(e sseEvent) bool { first3 = append(first3, e); return false }); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := sequence(first3); len(got) != 1 || got[0] != "1:status:queued" {
		t.Fatalf("the waiting run's events on the node that did not queue it: %v", got)
	}
	// The answer says queued, or running when a node that asked for a run while it had room
	// holds it for the moment it takes to find it has none now (it then gives it back).
	if r := post(t, b.ts.URL+third.Links.Cancel, ``); r.status != 202 {
		t.Fatalf("cancel of a run waiting in the queue, on a node that did not queue it: %s", r)
	}
	// It ends at once, not when a node has room: both nodes still run their runs.
	evs = watch(t, a.ts.URL+third.Links.Events)
	for _, r := range []acceptedReply{first, busy} {
		if rec, err := s.FindRun(t.Context(), r.RunID); err != nil || rec.Status != store.StatusRunning {
			t.Errorf("run %s is %s (%v): the canceled run ended only when a node had room", r.RunID, rec.Status, err)
		}
		if got := post(t, a.ts.URL+r.Links.Cancel, ``); got.status != 202 {
			t.Fatalf("cancel %s: %s", r.RunID, got)
		}
	}
	last := lastResult(t, evs)
	if last.Error == nil || last.Error.Kind != run.KindCanceled || !strings.Contains(last.Error.Message, "while it waited in the cluster's queue") {
		t.Fatalf("the canceled queued run ended %+v (%v)", last.Error, sequence(evs))
	}
	if got := sequence(evs); got[0] != "1:status:queued" || got[1] != "2:result" {
		t.Fatalf("a run canceled in the queue has events %v, want queued then its result", got)
	}
	waitHistory(t, s, third.RunID, store.StatusFailed)
	page, err := s.ListRuns(t.Context(), store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, r := range page.Runs {
		ids[r.ID]++
	}
	for _, r := range []acceptedReply{first, second, busy, third} {
		if ids[r.RunID] != 1 {
			t.Errorf("run %s has %d history rows, want 1", r.RunID, ids[r.RunID])
		}
	}
}

// startAsyncStatus starts ticker asynchronously on base with body and wants 202 with status.
func startAsyncStatus(t *testing.T, base, body, status string) acceptedReply {
	t.Helper()
	r := post(t, base+"/v1/skills/ticker/runs?async=true", body)
	var a acceptedReply
	if r.status != 202 || json.Unmarshal(r.body, &a) != nil || !slices.Contains(strings.Split(status, "|"), a.Status) {
		t.Fatalf("async run: %s, want 202 %s", r, status)
	}
	return a
}

// waitHistory waits until the history has run id at status.
func waitHistory(t *testing.T, s store.Store, id string, status store.Status) {
	t.Helper()
	if !waitFor(hangGuard, func() bool {
		r, err := s.FindRun(t.Context(), id)
		return err == nil && r.Status == status
	}) {
		r, err := s.FindRun(t.Context(), id)
		t.Fatalf("run %s: %+v %v, want %s in the history", id, r, err, status)
	}
}

// soloNode is a server that is the one node of a cluster of its own (embedded NATS), over a
// SQLite run history the test writes to as a node that died would have.
func soloNode(t *testing.T, ctx context.Context) (*cluster.Node, store.Store, *testEnv) {
	t.Helper()
	node, err := cluster.Join(ctx, cluster.Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return node, s, newEnvRuntime(t, Options{History: s, Cluster: node}, runtime.Config{}, t.TempDir())
}

// A run whose node died before it shared its result (the history's lease sweep ended it) does
// not hold its watchers: at a keep-alive, the stream ends with the history's result.
func TestClusterWatchEndsWithTheHistorysResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	node, s, env := soloNode(t, ctx)
	const id = "run_0000000000000000000000ff"
	now := time.Now()
	if err := s.BeginRun(ctx, store.Run{ID: id, Skill: "gone", Face: "http", StartedAt: now, Owner: "dead", LeaseUntil: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(run.Event{Type: "status", RunID: id, Status: "started"})
	node.PublishEvent("", id, 1, "status", data)
	resp := openEvents(t, ctx, env.ts.URL+"/v1/runs/"+id+"/events")
	defer resp.Body.Close()
	var evs []sseEvent
	done := make(chan error, 1)
	go func() { done <- readSSE(t, resp.Body, func(e sseEvent) bool { evs = append(evs, e); return true }) }()
	if n, err := s.SweepRuns(ctx, now.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := sequence(evs); len(got) != 2 || got[0] != "1:status:started" || got[1] != ":result" {
		t.Fatalf("events %v, want the shared one then the history's result", got)
	}
	if res := lastResult(t, evs); res.Error == nil || res.Error.Kind != run.KindInterrupted {
		t.Fatalf("result %+v", res)
	}
}

// A run that ended without any of its events reaching the stream (its node died before it
// shared them, and the history's lease sweep ended it) still has its one result event on
// every node: the history's, not a 404.
func TestClusterFinishedRunWithNoSharedEventsAnswersItsResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, s, env := soloNode(t, ctx)
	const id = "run_0000000000000000000000fe"
	now := time.Now()
	if err := s.BeginRun(ctx, store.Run{ID: id, Skill: "gone", Face: "http", StartedAt: now, Owner: "dead", LeaseUntil: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepRuns(ctx, now.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	for _, after := range []string{"0", "3"} {
		resp := openEvents(t, ctx, env.ts.URL+"/v1/runs/"+id+"/events?after="+after)
		var evs []sseEvent
		err := readSSE(t, resp.Body, func(e sseEvent) bool { evs = append(evs, e); return true })
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := sequence(evs); len(got) != 1 || got[0] != ":result" {
			t.Fatalf("after %q: events %v, want the history's result alone", after, got)
		}
		if res := lastResult(t, evs); res.Error == nil || res.Error.Kind != run.KindInterrupted {
			t.Fatalf("result %+v", res)
		}
	}
}

// backlogged is a node that says runs wait in the cluster's queue.
type backlogged struct{ *cluster.Node }

func (backlogged) QueueBacklog() bool { return true }

// While runs wait in the cluster's queue, a new run joins them, though the node has room: it
// does not take a slot ahead of them. It still runs, on a node that takes it from the queue.
func TestClusterNewRunsJoinTheQueueBehindWaitingRuns(t *testing.T) {
	t.Parallel()
	hub, other := twoNodes(t)
	replica := func(node Cluster) *testEnv {
		dir := t.TempDir()
		fixture(t, dir, "ticker", manifestJSON("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":60000}`), "ticker", nil)
		sh := testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache, Admission: runtime.Admission{MaxRuns: 2}})
		return newEnvRuntime(t, Options{Cluster: node}, runtime.Config{Shared: sh}, dir)
	}
	a, _ := replica(backlogged{hub}), replica(other)
	queued := startAsyncStatus(t, a.ts.URL, `{"args":{"count":1,"ms":1}}`, "queued")
	evs := watch(t, a.ts.URL+queued.Links.Events)
	if res := lastResult(t, evs); !res.Success {
		t.Fatalf("the run that joined the queue: %+v", res.Error)
	}
	var res run.Result
	if r := post(t, a.ts.URL+"/v1/skills/ticker/runs", `{"args":{"count":1,"ms":1}}`); r.status != http.StatusOK || json.Unmarshal(r.body, &res) != nil || !res.Success {
		t.Fatalf("a synchronous run that joined the queue: %s", r)
	}
}
