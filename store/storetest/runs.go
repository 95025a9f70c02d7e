package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// base is a fixed start time: far enough in the past for retention tests to reason about.
var base = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// finished is a finished run i of skill, started i milliseconds after base.
func finished(i int, skill string, status store.Status) store.Run {
	r := store.Run{ID: fmt.Sprintf("run_%06d", i), Skill: skill, Version: "1.0.0", Digest: "sha256:ab",
		Face: "http", Caller: "key-a", Status: status, ArgsSHA256: "00ff",
		Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Usage: json.RawMessage(`{"peak_memory_bytes":65536}`),
		DurationMs: 1.5, StartedAt: base.Add(time.Duration(i) * time.Millisecond)}
	r.FinishedAt = r.StartedAt.Add(2 * time.Millisecond)
	if status == store.StatusFailed {
		r.Error = &store.RunError{Kind: "timeout", Message: "the run's deadline passed"}
	}
	return r
}

func mustFinish(t *testing.T, s store.Store, r store.Run) {
	t.Helper()
	if err := s.FinishRun(t.Context(), r); err != nil {
		t.Fatalf("FinishRun(%s): %v", r.ID, err)
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	want := finished(1, "echo", store.StatusFailed)
	want.Result, want.Logs = json.RawMessage(`{"partial":[1,2]}`), json.RawMessage(`[{"time":"2030-01-02T03:04:05Z","level":"info","message":"hi"}]`)
	want.LogsDropped, want.Trimmed = 2, true
	want.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	mustFinish(t, s, want)
	got, err := s.FindRun(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	want.Success = false
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Fatalf("read back\n got %s\nwant %s", g, w)
	}
	// A list leaves the result and the logs out (a page of them could be large); the rest reads
	// as FindRun does.
	page, err := s.ListRuns(ctx, store.Query{})
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	listed := want
	listed.Result, listed.Logs = nil, nil
	if g, w := mustJSON(page.Runs[0]), mustJSON(listed); g != w {
		t.Fatalf("listed\n got %s\nwant %s", g, w)
	}
	// A run recorded without arguments reads back without them, not as "null".
	noArgs := finished(2, "echo", store.StatusSucceeded)
	noArgs.Args = nil
	mustFinish(t, s, noArgs)
	if got, _ := s.FindRun(ctx, noArgs.ID); got.Args != nil || !got.Success || got.Error != nil {
		t.Fatalf("run without arguments read back as args=%s success=%v error=%v", got.Args, got.Success, got.Error)
	}
	if _, err := s.FindRun(ctx, "run_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindRun(missing) = %v, want ErrNotFound", err)
	}
	if err := s.FinishRun(ctx, store.Run{ID: "x", Skill: "s", Status: store.StatusRunning, StartedAt: base}); err == nil {
		t.Fatal("FinishRun with status running succeeded")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A reader sees a run as BeginRun wrote it or as FinishRun wrote it, never a mix.
func testNothingHalfWritten(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	usage := json.RawMessage(`{"peak_memory_bytes":1,"blob":"` + string(bytes.Repeat([]byte("x"), 64<<10)) + `"}`)
	const n = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad error
	var mu sync.Mutex
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			page, err := s.ListRuns(ctx, store.Query{Limit: store.MaxLimit})
			if err != nil {
				mu.Lock()
				bad = err
				mu.Unlock()
				return
			}
			for _, r := range page.Runs {
				whole := (r.Status == store.StatusRunning && r.FinishedAt.IsZero() && r.Owner == "o" && r.Usage == nil) ||
					(r.Status == store.StatusSucceeded && !r.FinishedAt.IsZero() && r.Owner == "" && bytes.Equal(r.Usage, usage) && r.DurationMs == 7)
				if !whole {
					mu.Lock()
					bad = fmt.Errorf("run %s half written: status %s finished %v owner %q usage %d bytes", r.ID, r.Status, r.FinishedAt, r.Owner, len(r.Usage))
					mu.Unlock()
					return
				}
			}
		}
	})
	for i := range n {
		r := store.Run{ID: fmt.Sprintf("run_%03d", i), Skill: "s", Face: "cli", StartedAt: base.Add(time.Duration(i)), Owner: "o", LeaseUntil: time.Now().Add(time.Hour)}
		if err := s.BeginRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Status, r.Usage, r.DurationMs, r.FinishedAt = store.StatusSucceeded, usage, 7, base.Add(time.Second)
		mustFinish(t, s, r)
	}
	// A write whose context is already over writes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	late := finished(999, "s", store.StatusSucceeded)
	if err := s.FinishRun(cctx, late); err == nil {
		t.Error("FinishRun with a canceled context succeeded")
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatal(bad)
	}
	if _, err := s.FindRun(ctx, late.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the canceled write left a run: %v", err)
	}
}

func testRestartSurvival(t *testing.T, h Harness) {
	addr := h.New(t)
	s, err := h.Open(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustFinish(t, s, finished(i, "echo", store.StatusSucceeded))
	}
	running := store.Run{ID: "run_live", Skill: "echo", Face: "mcp", StartedAt: base.Add(time.Hour), Owner: "p1", LeaseUntil: time.Now().Add(time.Hour)}
	if err := s.BeginRun(t.Context(), running); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, h, addr)
	page, err := s2.ListRuns(t.Context(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 11 || page.Runs[0].ID != "run_live" || page.Runs[0].Status != store.StatusRunning {
		t.Fatalf("after reopening: %d runs, first %+v", len(page.Runs), page.Runs[0])
	}
	if r, err := s2.FindRun(t.Context(), "run_000003"); err != nil || string(r.Args) != `{"n":3}` {
		t.Fatalf("after reopening, run_000003 = %+v, %v", r, err)
	}
}

func testMigrations(t *testing.T, h Harness) {
	addr := h.New(t)
	s := open(t, h, addr)
	raw, ok := s.(interface{ SQL() *sql.DB })
	if !ok {
		t.Skip("the driver does not expose its *sql.DB")
	}
	// Opening again applies nothing twice.
	s2, err := h.Open(t.Context(), addr)
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	s2.Close()
	var n int
	if err := raw.SQL().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM schema_migrations WHERE version = 1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("schema_migrations has %d rows for version 1 (%v), want 1", n, err)
	}
	// A database another build migrated (its migration 1 is not ours) is refused.
	if _, err := raw.SQL().ExecContext(t.Context(), `UPDATE schema_migrations SET name = '0001_other.sql' WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open(t.Context(), addr); !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "0001_other.sql") {
		t.Fatalf("open of a database another build migrated = %v", err)
	}
	if _, err := raw.SQL().ExecContext(t.Context(), `UPDATE schema_migrations SET name = '0001_runs.sql' WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	// A database a newer skillbox migrated is refused, and left alone.
	if _, err := raw.SQL().ExecContext(t.Context(), `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '0999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	_, err = h.Open(t.Context(), addr)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("open of a newer database = %v, want ErrSchemaTooNew", err)
	}
	t.Logf("the refusal reads: %v", err)
}

// Many goroutines, each with its own store over the same database (as processes would be),
// record runs at once: every one is there, and none failed with "database is locked".
func testConcurrentWriters(t *testing.T, h Harness) {
	addr := h.New(t)
	const writers, each = 8, 25
	stores := make([]store.Store, writers)
	for i := range stores {
		stores[i] = open(t, h, addr)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			s := stores[w]
			for i := range each {
				r := store.Run{ID: fmt.Sprintf("run_w%d_%03d", w, i), Skill: fmt.Sprintf("s%d", w%3), Face: "http",
					StartedAt: time.Now(), Owner: fmt.Sprintf("owner%d", w), LeaseUntil: time.Now().Add(time.Minute)}
				if err := s.BeginRun(t.Context(), r); err != nil {
					errs <- err
					continue
				}
				if _, err := s.RenewRuns(t.Context(), r.Owner, time.Now().Add(time.Minute)); err != nil {
					errs <- err
				}
				r.Status, r.FinishedAt = store.StatusSucceeded, time.Now()
				if err := s.FinishRun(t.Context(), r); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := 0
	q := store.Query{Limit: 37}
	for {
		page, err := stores[0].ListRuns(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			if r.Status != store.StatusSucceeded {
				t.Errorf("run %s is %s", r.ID, r.Status)
			}
		}
		total += len(page.Runs)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if total != writers*each {
		t.Fatalf("%d runs recorded, want %d", total, writers*each)
	}
}
