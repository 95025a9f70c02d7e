package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// A queued run (accepted for a cluster's queue, not started) is read, listed and counted as
// in flight: its start replaces it, a late note of its wait never undoes a start or an end,
// retention never prunes it, and the sweep ends it failed (busy) once its lease passes, as it
// does nothing to the running runs' leases.
func testQueuedRuns(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	queued := func(id string, until time.Time) store.Run {
		return store.Run{ID: id, Skill: "s", Face: "http", Caller: "key_a", StartedAt: now, Status: store.StatusQueued, LeaseUntil: until}
	}
	write := func(rs ...store.Run) {
		t.Helper()
		if err := s.WriteRuns(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	status := func(id string) store.Run {
		t.Helper()
		r, err := s.FindRun(ctx, id)
		if err != nil {
			t.Fatalf("find %s: %v", id, err)
		}
		return r
	}
	if store.StatusQueued.Final() || !store.StatusQueued.Valid() {
		t.Fatal("queued must be a valid status that is not final")
	}

	// Waits, then starts: the start takes the run, its version and lease; the start time stays
	// the wait's.
	write(queued("run_q1", now.Add(time.Hour)))
	if r := status("run_q1"); r.Status != store.StatusQueued || r.Caller != "key_a" || r.Owner != "" {
		t.Fatalf("queued run: %+v", r)
	}
	page, err := s.ListRuns(ctx, store.Query{Status: store.StatusQueued})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].ID != "run_q1" {
		t.Fatalf("list queued: %+v %v", page, err)
	}
	if err := s.BeginRun(ctx, store.Run{ID: "run_q1", Skill: "s", Version: "1.0.0", Face: "http", Caller: "key_a",
		StartedAt: now.Add(time.Second), Owner: "node_b", LeaseUntil: now.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if r := status("run_q1"); r.Status != store.StatusRunning || r.Owner != "node_b" || r.Version != "1.0.0" || !r.StartedAt.Equal(now) {
		t.Fatalf("started queued run: %+v", r)
	}
	// A wait written late (its node was slow to say so) changes nothing, running or ended.
	write(queued("run_q1", now.Add(time.Hour)))
	if r := status("run_q1"); r.Status != store.StatusRunning || r.Owner != "node_b" {
		t.Fatalf("a late wait undid the start: %+v", r)
	}
	done := store.Run{ID: "run_q1", Skill: "s", Face: "http", StartedAt: now, FinishedAt: now.Add(3 * time.Second), Status: store.StatusSucceeded, Success: true}
	mustFinish(t, s, done)
	write(queued("run_q1", now.Add(time.Hour)))
	if err := s.BeginRun(ctx, store.Run{ID: "run_q1", Skill: "s", StartedAt: now, Owner: "node_c", LeaseUntil: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if r := status("run_q1"); r.Status != store.StatusSucceeded {
		t.Fatalf("a late wait or start undid the end: %+v", r)
	}

	// Waits, then ends without running (canceled, or past its deadline): the end replaces it.
	write(queued("run_q2", now.Add(time.Hour)))
	mustFinish(t, s, store.Run{ID: "run_q2", Skill: "s", Face: "http", StartedAt: now, FinishedAt: now, Status: store.StatusFailed,
		Error: &store.RunError{Kind: "canceled", Message: "canceled while it waited"}})
	if r := status("run_q2"); r.Status != store.StatusFailed || r.Error == nil || r.Error.Kind != "canceled" {
		t.Fatalf("a queued run's end: %+v", r)
	}

	// A wait and its start in one batch, either way round: the start stands.
	for i, order := range [][2]store.Status{{store.StatusQueued, store.StatusRunning}, {store.StatusRunning, store.StatusQueued}} {
		id := fmt.Sprintf("run_batch%d", i)
		var rs []store.Run
		for _, st := range order {
			r := queued(id, now.Add(time.Hour))
			if st == store.StatusRunning {
				r.Status, r.Owner = st, "node_b"
			}
			rs = append(rs, r)
		}
		write(rs...)
		if r := status(id); r.Status != store.StatusRunning || r.Owner != "node_b" {
			t.Fatalf("batch %v: %+v", order, r)
		}
	}

	// Never started, and its lease passes: the sweep ends it busy, and leaves a running run's
	// lease alone; the runs it holds are never renewed by an owner, nor pruned.
	write(queued("run_q3", now.Add(time.Minute)))
	if err := s.BeginRun(ctx, store.Run{ID: "run_live", Skill: "s", StartedAt: now, Owner: "node_b", LeaseUntil: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.RenewRuns(ctx, "", now.Add(2*time.Hour)); err != nil || n != 0 {
		t.Fatalf("renewing the runs of no owner renewed %d (%v)", n, err)
	}
	if n, err := s.PruneRuns(ctx, store.Retention{MaxRuns: 1}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	} else if r := status("run_q3"); r.Status != store.StatusQueued {
		t.Fatalf("pruned %d, and the queued run is %+v", n, r)
	}
	if n, err := s.SweepRuns(ctx, now.Add(59*time.Second)); err != nil || n != 0 {
		t.Fatalf("a sweep before the wait's lease ended %d (%v)", n, err)
	}
	if n, err := s.SweepRuns(ctx, now.Add(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("a sweep after the wait's lease ended %d (%v), want 1", n, err)
	}
	r := status("run_q3")
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Kind != "busy" || !r.FinishedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("swept queued run: %+v", r)
	}
	if r := status("run_live"); r.Status != store.StatusRunning {
		t.Fatalf("the running run: %+v", r)
	}
}

// A cancel ends a queued run at once, and only while it is queued: a start recorded first is
// left alone, and so is a run that ended.
func testCancelQueuedRun(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, r := range []store.Run{
		{ID: "run_wait", Skill: "s", Face: "mcp", Caller: "key_a", StartedAt: now, Status: store.StatusQueued, LeaseUntil: now.Add(time.Hour)},
		{ID: "run_began", Skill: "s", Face: "http", StartedAt: now, Status: store.StatusQueued, LeaseUntil: now.Add(time.Hour)},
		{ID: "run_began", Skill: "s", Face: "http", StartedAt: now, Status: store.StatusRunning, Owner: "node_b", LeaseUntil: now.Add(time.Hour)},
	} {
		if err := s.WriteRuns(ctx, []store.Run{r}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.CancelQueuedRun(ctx, "run_began", now.Add(time.Second), "canceled"); ok || err != nil {
		t.Fatalf("a started run was canceled in the queue: %v %v", ok, err)
	}
	if ok, err := s.CancelQueuedRun(ctx, "run_wait", now.Add(time.Second), "key \"a\" asked for it"); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	got, _ := s.FindRun(ctx, "run_wait")
	if got.Status != store.StatusFailed || got.Error == nil || got.Error.Kind != "canceled" || got.Error.Message != `key "a" asked for it` ||
		got.Face != "mcp" || got.Caller != "key_a" || !got.FinishedAt.Equal(now.Add(time.Second)) || got.DurationMs < 999 || got.DurationMs > 1001 {
		t.Fatalf("canceled queued run: %+v", got)
	}
	if ok, _ := s.CancelQueuedRun(ctx, "run_wait", now.Add(2*time.Second), "again"); ok {
		t.Fatal("a run was canceled twice")
	}
	if r, _ := s.FindRun(ctx, "run_began"); r.Status != store.StatusRunning {
		t.Fatalf("the started run: %+v", r)
	}
}
