package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
)

// historySize is how many runs BenchmarkHistoryQueries fills its stores with: a million with
// SKILLBOX_BENCH_1M=1 (about a minute of filling per database on a small machine), else ten
// thousand, so that a plain -bench run still exercises every query quickly.
func historySize() int {
	if os.Getenv("SKILLBOX_BENCH_1M") == "1" {
		return 1_000_000
	}
	return 10_000
}

// The shape of the filled history: runs spread evenly over the 30 days the default retention
// keeps, 100 skills taking turns, 1 run in 20 failed, 1 in 1000 interrupted, the newest 10
// still running.
const (
	historySkills = 100
	historySpan   = 30 * 24 * time.Hour
)

// BenchmarkHistoryQueries times what GET /v1/runs and skillbox runs ask of a full history, on
// SQLite and on PostgreSQL (when its binaries are installed): the newest page, a skill's newest
// page (1% of the runs are that skill's), the newest failed page (5%), a page 90% of the way
// down through a cursor, and one run by id. Each store is filled once, in its own temporary
// directory, and every query runs on it.
func BenchmarkHistoryQueries(b *testing.B) {
	n := historySize()
	now := time.Now().UTC()
	benchStores(b, func(b *testing.B, driver string, s store.Store) {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			fillHistory(b, s, n, now)
			if driver == "postgres" {
				if _, err := s.(*sqldb.DB).SQL().ExecContext(b.Context(), "ANALYZE runs"); err != nil {
					b.Fatal(err) // as autovacuum would soon after a bulk load
				}
			}
			benchQueries(b, s, n, now)
		})
	})
}

// benchQueries times each query on a store filled by fillHistory.
func benchQueries(b *testing.B, s store.Store, n int, now time.Time) {
	deep := historyRun(n*9/10, now)
	for _, q := range []struct {
		name  string
		query store.Query
	}{
		{"newest", store.Query{}},
		{"skill", store.Query{Skill: historySkill(7)}},
		{"failed", store.Query{Status: store.StatusFailed}},
		{"deep-cursor", store.Query{Cursor: store.EncodeCursor(deep)}},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.ListRuns(b.Context(), q.query)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Runs) != store.DefaultLimit {
					b.Fatalf("a page of %d runs, want %d", len(p.Runs), store.DefaultLimit)
				}
			}
		})
	}
	b.Run("find", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			id := historyRun(i*7919%n, now).ID // a different run each time, all over the table
			if _, err := s.FindRun(b.Context(), id); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fillHistory writes n runs (historyRun 0 to n-1) into s in one transaction.
func fillHistory(b *testing.B, s store.Store, n int, now time.Time) {
	start := time.Now()
	const chunk = 10_000 // runs built at once: the memory of ten thousand, not of a million
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Minute)
	defer cancel()
	runs := make([]store.Run, 0, n)
	for i := range n {
		runs = append(runs, historyRun(i, now))
		if len(runs) == chunk || i == n-1 {
			if err := s.(*sqldb.DB).InsertRuns(ctx, runs); err != nil {
				b.Fatal(err)
			}
			runs = runs[:0]
		}
	}
	b.Logf("filled %d runs in %v", n, time.Since(start).Round(time.Millisecond))
}

// historySkill is the id of skill k of the history.
func historySkill(k int) string { return fmt.Sprintf("skill-%03d", k) }

// historyUsage is a finished run's usage as the recorder writes it.
var historyUsage = json.RawMessage(`{"peak_memory_bytes":4259840,"fetches":2,"bytes_in":18231,"bytes_out":412,"bytes_written":0,"hosts":["api.example.com"]}`)

// historyRun is run i of the history: i = 0 is the newest.
func historyRun(i int, now time.Time) store.Run {
	started := now.Add(-time.Duration(i) * (historySpan / time.Duration(historySize())))
	r := store.Run{
		ID: fmt.Sprintf("run_%024x", uint64(i)*0x9e3779b97f4a7c15>>32), Skill: historySkill(i % historySkills),
		Version: "1.4.2", Digest: fmt.Sprintf("sha256:%064x", i%historySkills), Face: []string{"http", "mcp", "cli"}[i%3],
		Caller: "key-ops", ArgsSHA256: fmt.Sprintf("%064x", i), StartedAt: started,
	}
	switch {
	case i < 10:
		r.Status, r.Owner, r.LeaseUntil = store.StatusRunning, "rec_bench", now.Add(30*time.Second)
		return r
	case i%1000 == 0:
		r.Status = store.StatusInterrupted
		r.Error = &store.RunError{Kind: "interrupted", Message: "the process running it stopped (or lost the store) before it finished: its lease expired"}
	case i%20 == 0:
		r.Status = store.StatusFailed
		r.Error = &store.RunError{Kind: "timeout", Message: "the run took longer than its 30000 ms timeout"}
	default:
		r.Status, r.Success = store.StatusSucceeded, true
	}
	r.DurationMs = float64(5 + i%400)
	r.FinishedAt = started.Add(time.Duration(r.DurationMs * float64(time.Millisecond)))
	r.Usage = historyUsage
	return r
}
