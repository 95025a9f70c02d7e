package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// ids are the ids of runs, in order.
func ids(runs []store.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

func testListNewestFirst(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	// Written out of order, and two with the same start time: the order is by start, then id.
	for _, i := range []int{3, 1, 4, 0, 2} {
		mustFinish(t, s, finished(i, "echo", store.StatusSucceeded))
	}
	tie := finished(4, "echo", store.StatusSucceeded)
	tie.ID = "run_000004b"
	mustFinish(t, s, tie)
	page, err := s.ListRuns(t.Context(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run_000004b", "run_000004", "run_000003", "run_000002", "run_000001", "run_000000"}
	if got := ids(page.Runs); !slices.Equal(got, want) || page.Next != "" {
		t.Fatalf("ListRuns = %v next %q, want %v and no next", got, page.Next, want)
	}
	// Paged two at a time, the same order, each run once.
	var all []string
	q := store.Query{Limit: 2}
	for range 10 {
		p, err := s.ListRuns(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids(p.Runs)...)
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	if !slices.Equal(all, want) {
		t.Fatalf("paged: %v, want %v", all, want)
	}
	// An empty store lists an empty page, not null.
	empty, err := open(t, h, h.New(t)).ListRuns(t.Context(), store.Query{})
	if err != nil || empty.Runs == nil || len(empty.Runs) != 0 {
		t.Fatalf("empty store: %#v, %v", empty, err)
	}
}

func testListFilters(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	for i := range 30 {
		skill, status := "a", store.StatusSucceeded
		if i%3 == 0 {
			skill = "b"
		}
		if i%5 == 0 {
			status = store.StatusFailed
		}
		r := finished(i, skill, status)
		if i%4 == 0 {
			r.Caller = "bob"
		}
		mustFinish(t, s, r)
	}
	live := store.Run{ID: "run_live", Skill: "b", Face: "cli", StartedAt: base.Add(time.Second), Owner: "o", LeaseUntil: time.Now().Add(time.Hour)}
	if err := s.BeginRun(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	count := func(q store.Query, check func(store.Run) bool) int {
		t.Helper()
		n := 0
		for {
			p, err := s.ListRuns(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range p.Runs {
				if !check(r) {
					t.Fatalf("query %+v listed %s (skill %s, status %s, started %v)", q, r.ID, r.Skill, r.Status, r.StartedAt)
				}
			}
			n += len(p.Runs)
			if p.Next == "" {
				return n
			}
			q.Cursor = p.Next
		}
	}
	if n := count(store.Query{Skill: "b", Limit: 3}, func(r store.Run) bool { return r.Skill == "b" }); n != 11 {
		t.Errorf("skill b: %d runs, want 11", n)
	}
	if n := count(store.Query{Status: store.StatusFailed, Limit: 4}, func(r store.Run) bool { return r.Status == store.StatusFailed }); n != 6 {
		t.Errorf("failed: %d runs, want 6", n)
	}
	if n := count(store.Query{Status: store.StatusRunning}, func(r store.Run) bool { return r.ID == "run_live" }); n != 1 {
		t.Errorf("running: %d runs, want 1", n)
	}
	since := base.Add(20 * time.Millisecond)
	if n := count(store.Query{Since: since, Skill: "a", Limit: 2}, func(r store.Run) bool { return !r.StartedAt.Before(since) && r.Skill == "a" }); n != 7 {
		t.Errorf("skill a since +20ms: %d runs, want 7 (20, 22, 23, 25, 26, 28, 29)", n)
	}
	// A caller's runs: 0, 4, ..., 28 are bob's, the rest key-a's (the running one has none).
	if n := count(store.Query{Caller: "bob", Limit: 3}, func(r store.Run) bool { return r.Caller == "bob" }); n != 8 {
		t.Errorf("caller bob: %d runs, want 8", n)
	}
	if n := count(store.Query{Caller: "bob", Skill: "b"}, func(r store.Run) bool { return r.Caller == "bob" && r.Skill == "b" }); n != 3 {
		t.Errorf("caller bob, skill b: %d runs, want 3 (0, 12, 24)", n)
	}
	if n := count(store.Query{Caller: "nobody"}, func(store.Run) bool { return false }); n != 0 {
		t.Errorf("caller nobody: %d runs, want none", n)
	}
	// Until is before it, not at it: [since, until) pages without a run twice or missed.
	until := base.Add(10 * time.Millisecond)
	if n := count(store.Query{Until: until, Limit: 4}, func(r store.Run) bool { return r.StartedAt.Before(until) }); n != 10 {
		t.Errorf("until +10ms: %d runs, want 10 (0 to 9)", n)
	}
	if n := count(store.Query{Since: since.Add(-5 * time.Millisecond), Until: until.Add(10 * time.Millisecond), Caller: "key-a", Limit: 2},
		func(r store.Run) bool {
			return !r.StartedAt.Before(since.Add(-5*time.Millisecond)) && r.StartedAt.Before(until.Add(10*time.Millisecond)) && r.Caller == "key-a"
		}); n != 4 {
		t.Errorf("key-a in [+15ms, +20ms): %d runs, want 4 (15, 17, 18, 19)", n)
	}
}

func testBadQueries(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	for _, q := range []store.Query{
		{Limit: -1}, {Limit: store.MaxLimit + 1}, {Status: "done"}, {Cursor: "not base64!"},
		{Cursor: "eyJ4IjoxfQ"}, // {"x":1}: base64 JSON, but not a cursor
		// No run starts in between.
		{Since: base, Until: base}, {Since: base, Until: base.Add(-time.Second)},
	} {
		if _, err := s.ListRuns(t.Context(), q); !errors.Is(err, store.ErrBadQuery) {
			t.Errorf("ListRuns(%+v) = %v, want ErrBadQuery", q, err)
		}
	}
}

func testRetention(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	for i := range 20 {
		mustFinish(t, s, finished(i, "echo", store.StatusSucceeded))
	}
	live := store.Run{ID: "run_old_live", Skill: "echo", Face: "cli", StartedAt: base.Add(-time.Hour), Owner: "o", LeaseUntil: time.Now().Add(time.Hour)}
	if err := s.BeginRun(ctx, live); err != nil {
		t.Fatal(err)
	}
	// By count: the newest 15 finished stay (and the running one, however old).
	n, err := s.PruneRuns(ctx, store.Retention{MaxRuns: 15, MaxAge: store.Unlimited}, base)
	if err != nil || n != 5 {
		t.Fatalf("prune by count: %d, %v; want 5", n, err)
	}
	p, _ := s.ListRuns(ctx, store.Query{})
	if len(p.Runs) != 16 || p.Runs[0].ID != "run_000019" || p.Runs[14].ID != "run_000005" || p.Runs[15].ID != live.ID {
		t.Fatalf("after prune by count: %v", ids(p.Runs))
	}
	// By age: older than 10 ms at base+20ms goes: runs 5..9.
	n, err = s.PruneRuns(ctx, store.Retention{MaxRuns: store.Unlimited, MaxAge: 10 * time.Millisecond}, base.Add(20*time.Millisecond))
	if err != nil || n != 5 {
		t.Fatalf("prune by age: %d, %v; want 5", n, err)
	}
	p, _ = s.ListRuns(ctx, store.Query{})
	if len(p.Runs) != 11 || p.Runs[9].ID != "run_000010" || p.Runs[10].ID != live.ID {
		t.Fatalf("after prune by age: %v", ids(p.Runs))
	}
	// The defaults keep all of these.
	if n, err := s.PruneRuns(ctx, store.Retention{}, base); err != nil || n != 0 {
		t.Fatalf("prune with defaults: %d, %v", n, err)
	}
}

func testClosed(t *testing.T, h Harness) {
	s, err := h.Open(t.Context(), h.New(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.ListRuns(t.Context(), store.Query{}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("ListRuns after Close = %v, want ErrClosed", err)
	}
	if err := s.FinishRun(t.Context(), finished(1, "s", store.StatusSucceeded)); !errors.Is(err, store.ErrClosed) {
		t.Errorf("FinishRun after Close = %v, want ErrClosed", err)
	}
}
