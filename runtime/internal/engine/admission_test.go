package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/run"
)

// waitFor polls cond until it holds; the bound is for a hang, not a measure of speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// acquireLater acquires in a goroutine; the result arrives on the channel.
func acquireLater(ctx context.Context, a *Admission, charge int64) chan error {
	done := make(chan error, 1)
	go func() {
		t, err := a.Acquire(ctx, charge, true)
		if err == nil {
			a.Release(t)
		}
		done <- err
	}()
	return done
}

// The admission's run slots and queue: a run beyond MaxRuns waits, first come first served, one
// beyond MaxQueue is refused busy at once, a waiter whose caller gives up (or whose Runtime
// closes) leaves the queue, and Close refuses the waiting and every later one. (MaxWait is long: nothing here races a clock.)
func TestAdmissionSlotsAndQueue(t *testing.T) {
	a := NewAdmission(AdmissionConfig{MaxRuns: 1, MaxQueue: 1, MaxWait: 10 * time.Minute, MemoryBudget: 1 << 30, MaxCompiles: 1}, func(int64) {})
	ctx := context.Background()
	first, err := a.Acquire(ctx, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	queued := acquireLater(ctx, a, 1)
	waitFor(t, "a run to queue", func() bool { return a.Stats().Queued == 1 })
	var busy *BusyError
	if _, err := a.Acquire(ctx, 1, true); !errors.As(err, &busy) {
		t.Fatalf("a run past the queue: %v, want busy", err)
	}
	a.Release(first)
	if err := <-queued; err != nil {
		t.Fatalf("the queued run: %v", err)
	}
	if st := a.Stats(); st.Running != 0 || st.Queued != 0 || st.MemoryInUse != 0 || st.PeakRunning != 1 {
		t.Fatalf("after both: %+v", st)
	}

	first, _ = a.Acquire(ctx, 1, true)
	gone, giveUp := context.WithCancel(ctx)
	left := acquireLater(gone, a, 1)
	waitFor(t, "a run to queue", func() bool { return a.Stats().Queued == 1 })
	giveUp()
	if err := <-left; !errors.Is(err, context.Canceled) || a.Stats().Queued != 0 {
		t.Fatalf("a waiter whose caller gave up: %v, queue %d", err, a.Stats().Queued)
	}

	// A waiter that abandons (its Runtime closing) leaves with ErrClosed; the admission goes on.
	abandon := make(chan struct{})
	abandoned := make(chan error, 1)
	go func() { _, err := a.AcquireUntil(ctx, 1, true, abandon); abandoned <- err }()
	waitFor(t, "a run to queue", func() bool { return a.Stats().Queued == 1 })
	close(abandon)
	if err := <-abandoned; !errors.Is(err, run.ErrClosed) || a.Stats().Queued != 0 {
		t.Fatalf("an abandoned waiter: %v, queue %d", err, a.Stats().Queued)
	}

	refused := acquireLater(ctx, a, 1)
	waitFor(t, "a run to queue", func() bool { return a.Stats().Queued == 1 })
	a.Close()
	if err := <-refused; !errors.Is(err, run.ErrClosed) {
		t.Fatalf("a waiter at Close: %v", err)
	}
	if _, err := a.Acquire(ctx, 1, true); !errors.Is(err, run.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	a.Release(first)
}

// The memory budget: a charge over the whole budget is refused at once; one that does not fit
// beside what is admitted first asks for idle warm memory to be reclaimed (exactly what it
// lacks), then waits; a release lets it in.
func TestAdmissionMemoryBudget(t *testing.T) {
	var asked []int64
	a := NewAdmission(AdmissionConfig{MaxRuns: 8, MaxQueue: 8, MaxWait: 10 * time.Minute, MemoryBudget: 100, MaxCompiles: 1}, func(need int64) { asked = append(asked, need) })
	ctx := context.Background()
	if _, err := a.Acquire(ctx, 101, true); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("a charge over the budget: %v", err)
	}
	big, err := a.Acquire(ctx, 60, true)
	if err != nil {
		t.Fatal(err)
	}
	second := acquireLater(ctx, a, 60)
	waitFor(t, "the second charge to queue", func() bool { return a.Stats().Queued == 1 })
	if len(asked) != 1 || asked[0] != 20 {
		t.Fatalf("reclaim asked for %v, want [20]: what the charge lacks", asked)
	}
	if st := a.Stats(); st.MemoryInUse != 60 {
		t.Fatalf("in use %d, want 60", st.MemoryInUse)
	}
	a.Release(big)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.MemoryInUse != 0 || st.PeakMemoryInUse != 60 {
		t.Fatalf("after both: %+v", st)
	}
}

// An admitted run grows its charge now or not at all, past the queue, within the budget; what
// it gives back lets a waiting run in.
func TestAdmissionGrow(t *testing.T) {
	var asked []int64
	a := NewAdmission(AdmissionConfig{MaxRuns: 8, MaxQueue: 8, MaxWait: 10 * time.Minute, MemoryBudget: 100, MaxCompiles: 1}, func(need int64) { asked = append(asked, need) })
	ctx := context.Background()
	r, err := a.Acquire(ctx, 50, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, 40, true); err != nil { // held: 90 of 100 in use
		t.Fatal(err)
	}
	var busy *BusyError
	if err := a.Grow(r, 20); !errors.As(err, &busy) {
		t.Fatalf("a grow past the budget: %v", err)
	}
	if len(asked) != 1 || asked[0] != 10 {
		t.Fatalf("reclaim asked for %v, want [10]", asked)
	}
	if err := a.Grow(r, 10); err != nil {
		t.Fatalf("a grow that fits: %v", err)
	}
	if st := a.Stats(); st.MemoryInUse != 100 || st.PeakMemoryInUse != 100 {
		t.Fatalf("after the grow: %+v", st)
	}
	third := acquireLater(ctx, a, 10)
	waitFor(t, "the third run to queue", func() bool { return a.Stats().Queued == 1 })
	a.Shrink(r, 10)
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	a.Release(r) // its charge, grown and shrunk, goes back whole
	if st := a.Stats(); st.MemoryInUse != 40 {
		t.Fatalf("after the release: %+v", st)
	}
}
