package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/internal/pgserver"
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
	srv, err := pgserver.Start(t.Context())
	if errors.Is(err, pgserver.ErrAbsent) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	dsn, err := srv.NewDatabase(t.Context())
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
			return errors.New("refused")
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
	if st := rec.Stats(); !st.Up || st.Spooled != 0 {
		t.Fatalf("the outbox: %+v", st)
	}
}
