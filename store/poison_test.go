package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

func finishedRecord(id, msg, result string) *history.Record {
	return &history.Record{Result: &run.Result{RunID: id, Skill: "s", Success: false, Result: []byte(result),
		Error: &run.ResultError{Kind: run.KindSkillError, Message: msg}}, Face: run.FaceHTTP, StartedAt: time.Now()}
}

// A record whose texts PostgreSQL refuses (a NUL byte, invalid UTF-8: a skill's error message
// and result are the skill's to choose) is kept, its bad bytes made U+FFFD, and holds up nothing.
func TestRecordsWithBadTextAreKept(t *testing.T) {
	dsn, err := pgtest.Start(t).NewDatabase(t.Context())
	must(t, err)
	s, err := postgres.Open(t.Context(), dsn)
	must(t, err)
	defer s.Close()
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
	ctx := context.Background()
	must(t, rec.FinishRun(ctx, finishedRecord("run_bad", "nul \x00 and \xff", "{\"s\":\"\xff\"}")))
	must(t, rec.FinishRun(ctx, finishedRecord("run_good", "fine", `{"s":"ok"}`)))
	must(t, rec.Flush(ctx))
	bad, err := s.FindRun(ctx, "run_bad")
	if err != nil || bad.Error == nil || bad.Error.Message != "nul \uFFFD and \uFFFD" || string(bad.Result) != "{\"s\":\"\uFFFD\"}" {
		t.Fatalf("the record with bad text: %+v %s, %v", bad.Error, bad.Result, err)
	}
	if _, err := s.FindRun(ctx, "run_good"); err != nil {
		t.Fatalf("the record after it: %v", err)
	}
}

// refusing is a store that refuses, always, the runs whose id starts with "run_poison".
type refusing struct{ store.Store }

func (r refusing) WriteRuns(ctx context.Context, runs []store.Run) error {
	for _, run := range runs {
		if strings.HasPrefix(run.ID, "run_poison") {
			return fmt.Errorf("%w: run %s", store.ErrRefused, run.ID)
		}
	}
	return r.Store.WriteRuns(ctx, runs)
}

// A record the store will never take is dropped, logged, and holds up none of the records
// written with it or after it.
func TestARefusedRecordHoldsUpNothing(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	must(t, err)
	defer s.Close()
	rec := storetest.NewRecorder(t, refusing{s}, store.RecorderOptions{})
	ctx := context.Background()
	for _, id := range []string{"run_a", "run_poison", "run_b"} {
		must(t, rec.FinishRun(ctx, finishedRecord(id, "m", `1`)))
	}
	must(t, rec.Flush(ctx))
	for _, id := range []string{"run_a", "run_b"} {
		if _, err := s.FindRun(ctx, id); err != nil {
			t.Errorf("%s, written with a refused record: %v", id, err)
		}
	}
	if st := rec.Stats(); !st.Up || st.Spooled != 0 || st.Dropped != 1 {
		t.Fatalf("the outbox: %+v, want the refused record counted dropped", st)
	}
}

// flaky is a store whose writes fail, every other one, until it has failed fails times: a
// database restarting, its pool holding connections that died with it.
type flaky struct {
	store.Store
	mu    sync.Mutex
	calls int
	fails int
}

func (f *flaky) WriteRuns(ctx context.Context, runs []store.Run) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls%2 == 1 && f.fails > 0
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if fail {
		return errors.New("write: connection reset by peer")
	}
	return f.Store.WriteRuns(ctx, runs)
}

// A store that fails a batch, then takes some of its runs written alone and fails others, is
// failing, not refusing them: no record is dropped, and every one is written once it recovers.
// (A run written alone that failed was once taken for one the store refuses, and dropped: runs
// lost when PostgreSQL was killed and restarted under load.)
func TestAFailingStoreIsNotARefusingOne(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	must(t, err)
	defer s.Close()
	rec := storetest.NewRecorder(t, &flaky{Store: s, fails: 4}, store.RecorderOptions{})
	ctx := context.Background()
	ids := []string{"run_a", "run_b", "run_c", "run_d"}
	for _, id := range ids {
		must(t, rec.FinishRun(ctx, finishedRecord(id, "m", `1`)))
	}
	deadline := time.Now().Add(2 * time.Minute) // a bound for a hang, not a measure
	for {
		must(t, rec.Flush(ctx))
		if st := rec.Stats(); st.Spooled == 0 && st.Up {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the records were not written: %+v", rec.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range ids {
		if _, err := s.FindRun(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if st := rec.Stats(); st.Dropped != 0 {
		t.Fatalf("records dropped: %+v", st)
	}
}
