package runtime

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// A queued run that ends without running is recorded once, with its result event; a run a lost
// node had started is marked interrupted once, and only while it still runs under that node.
func TestQueuedRunsEndWithOneRecord(t *testing.T) {
	t.Parallel()
	s, rec, rt := recordedRuntime(t)
	const id = "run_00000000000000000000000a"
	var events []run.Event
	res := rt.EndQueued(t.Context(), run.Request{ID: id, Skill: "hello", Who: testAdmin, OnEvent: func(e run.Event) { events = append(events, e) }},
		time.Now().Add(-time.Second), run.KindCanceled, "canceled while it waited")
	if res.RunID != id || res.Error == nil || res.Error.Kind != run.KindCanceled || res.DurationMs < 999 {
		t.Fatalf("result %+v", res)
	}
	if len(events) != 1 || events[0].Type != "result" || events[0].Result != res {
		t.Fatalf("events %+v", events)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindRun(t.Context(), id)
	if err != nil || got.Status != store.StatusFailed || got.Skill != "hello" || got.Error == nil || got.Error.Kind != "canceled" {
		t.Fatalf("record %+v, %v", got, err)
	}

	const lost = "run_00000000000000000000000b"
	if err := s.BeginRun(t.Context(), store.Run{ID: lost, Skill: "hello", Face: "http", StartedAt: time.Now(), Owner: "gone", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := rt.InterruptQueued(t.Context(), lost, "hello", "someone-else"); ok || err != nil {
		t.Fatalf("another owner's run: %v %v", ok, err)
	}
	res, ok, err := rt.InterruptQueued(t.Context(), lost, "hello", "gone")
	if !ok || err != nil || res.Error == nil || res.Error.Kind != run.KindInterrupted {
		t.Fatalf("interrupt: %+v %v %v", res, ok, err)
	}
	if got, _ := s.FindRun(t.Context(), lost); got.Status != store.StatusInterrupted {
		t.Fatalf("the lost run is %s", got.Status)
	}
	if _, ok, _ := rt.InterruptQueued(t.Context(), lost, "hello", "gone"); ok {
		t.Fatal("a run was interrupted twice")
	}
}

// A run accepted for a cluster's queue is in the history as queued, with who asked and its
// version here, until a node records its start over it or a cancel ends it; a request with no
// run id is refused.
func TestRecordQueuedKeepsTheWaitingRun(t *testing.T) {
	t.Parallel()
	s, _, rt := recordedRuntime(t)
	const id = "run_00000000000000000000000c"
	queuedAt := time.Now().Add(-time.Second).UTC().Truncate(time.Microsecond)
	req := run.Request{ID: id, Skill: "hello", Face: run.FaceHTTP, Who: testAdmin, Args: []byte(`{"name":"Ada"}`)}
	if err := rt.RecordQueued(t.Context(), req, queuedAt, queuedAt.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindRun(t.Context(), id)
	if err != nil || got.Status != store.StatusQueued || got.Skill != "hello" || got.Face != "http" || got.Caller != testAdmin.Caller() ||
		!got.StartedAt.Equal(queuedAt) || got.ArgsSHA256 == "" || !got.LeaseUntil.Equal(queuedAt.Add(time.Minute)) {
		t.Fatalf("record %+v, %v", got, err)
	}
	if err := rt.RecordQueued(t.Context(), run.Request{Skill: "hello"}, queuedAt, queuedAt); err == nil {
		t.Fatal("a queued run without an id was recorded")
	}
	// A cancel ends it at once, once.
	res, ok, err := rt.CancelQueued(t.Context(), id, "hello", "canceled while it waited")
	if !ok || err != nil || res.Error == nil || res.Error.Kind != run.KindCanceled || res.RunID != id {
		t.Fatalf("cancel: %+v %v %v", res, ok, err)
	}
	if got, _ := s.FindRun(t.Context(), id); got.Status != store.StatusFailed || got.Error == nil || got.Error.Kind != "canceled" || got.Caller != testAdmin.Caller() {
		t.Fatalf("the canceled record: %+v", got)
	}
	if _, ok, _ := rt.CancelQueued(t.Context(), id, "hello", "again"); ok {
		t.Fatal("a queued run was canceled twice")
	}
}

// recordedRuntime is a runtime whose runs a store.Recorder keeps in a SQLite store.
func recordedRuntime(t *testing.T) (store.Store, *store.Recorder, *Runtime) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
	return s, rec, pipelineRuntime(t, Config{Recorder: rec}, Admission{}, 1000)
}
