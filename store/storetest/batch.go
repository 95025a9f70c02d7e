package storetest

import (
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// WriteRuns writes a batch of starts and ends in order, in one transaction; a start that comes
// after its run's end (a spool replayed) leaves the end; writing the batch again changes
// nothing; a batch of hundreds of runs is written whole; a batch with one bad run writes none of
// it.
func testWriteRunsBatch(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	start := func(r store.Run) store.Run {
		r.Status, r.Error, r.Usage, r.DurationMs, r.FinishedAt = store.StatusRunning, nil, nil, 0, time.Time{}
		r.Owner, r.LeaseUntil = "rec_a", base.Add(time.Hour)
		return r
	}
	a, b, c := finished(1, "echo", store.StatusSucceeded), finished(2, "echo", store.StatusFailed), finished(3, "echo", store.StatusSucceeded)
	batch := []store.Run{start(a), start(b), a, start(c), b, start(a)} // c runs on; a's start comes again after its end
	for range 2 {
		if err := s.WriteRuns(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []store.Run{a, b} {
		got, err := s.FindRun(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		want.Success = want.Status == store.StatusSucceeded
		if g, w := mustJSON(got), mustJSON(want); g != w {
			t.Fatalf("%s read back\n got %s\nwant %s", want.ID, g, w)
		}
	}
	if got, err := s.FindRun(ctx, c.ID); err != nil || got.Status != store.StatusRunning || got.Owner != "rec_a" {
		t.Fatalf("a run still running reads back as %+v, %v", got, err)
	}
	page, err := s.ListRuns(ctx, store.Query{})
	if err != nil || len(page.Runs) != 3 {
		t.Fatalf("listed %d runs (%v), want 3", len(page.Runs), err)
	}

	// A batch larger than one statement takes (the stores write many rows a statement), with a
	// run that ended twice in it (the later end is kept).
	var big []store.Run
	for i := 100; i < 400; i++ {
		big = append(big, start(finished(i, "echo", store.StatusSucceeded)))
	}
	for i := 100; i < 400; i += 2 {
		big = append(big, finished(i, "echo", store.StatusSucceeded))
	}
	again := finished(100, "echo", store.StatusFailed)
	big = append(big, again)
	if err := s.WriteRuns(ctx, big); err != nil {
		t.Fatal(err)
	}
	for i := 100; i < 400; i++ {
		got, err := s.FindRun(ctx, finished(i, "", "").ID)
		want := store.StatusRunning
		if i%2 == 0 {
			want = store.StatusSucceeded
		}
		if i == 100 {
			want = store.StatusFailed
		}
		if err != nil || got.Status != want {
			t.Fatalf("run %d of a large batch: %s, %v; want %s", i, got.Status, err, want)
		}
	}

	d := finished(4, "echo", store.StatusSucceeded)
	bad := finished(5, "", store.StatusSucceeded)
	if err := s.WriteRuns(ctx, []store.Run{d, bad}); err == nil {
		t.Fatal("a batch with a run without a skill was written")
	}
	if _, err := s.FindRun(ctx, d.ID); err == nil {
		t.Fatal("a refused batch was written in part")
	}
}
