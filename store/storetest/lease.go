package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
)

// The environment of the child process: the store's address.
const childEnv = "SKILLBOX_STORETEST_CHILD"

// childLease is the child's lease, renewed every childRenew: so long that however slow the
// machine, the live child's lease never runs out between two renewals (the test reads a lease's
// end from the store and sweeps at times around it, rather than waiting for it).
const (
	childLease = 10 * time.Minute
	childRenew = 100 * time.Millisecond
)

// hangTimeout bounds a wait that only guards against a hang.
const hangTimeout = 3 * time.Minute

func testLeaseSweep(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	now := time.Now()
	r := store.Run{ID: "run_leased", Skill: "s", Face: "http", StartedAt: now, Owner: "p1", LeaseUntil: now.Add(time.Second)}
	if err := s.BeginRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	other := store.Run{ID: "run_other", Skill: "s", Face: "http", StartedAt: now, Owner: "p2", LeaseUntil: now.Add(time.Second)}
	if err := s.BeginRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepRuns(ctx, now.Add(999*time.Millisecond)); err != nil || n != 0 {
		t.Fatalf("sweep before expiry marked %d (%v)", n, err)
	}
	// p1 renews; p2 does not.
	if n, err := s.RenewRuns(ctx, "p1", now.Add(5*time.Second)); err != nil || n != 1 {
		t.Fatalf("renew: %d, %v", n, err)
	}
	if n, err := s.SweepRuns(ctx, now.Add(2*time.Second)); err != nil || n != 1 {
		t.Fatalf("sweep after p2's expiry marked %d (%v), want 1", n, err)
	}
	got, _ := s.FindRun(ctx, other.ID)
	if got.Status != store.StatusInterrupted || got.Error == nil || got.Error.Kind != "interrupted" || !got.FinishedAt.Equal(other.LeaseUntil.UTC().Truncate(0)) {
		t.Fatalf("expired run: %+v", got)
	}
	if got, _ := s.FindRun(ctx, r.ID); got.Status != store.StatusRunning {
		t.Fatalf("renewed run is %s", got.Status)
	}
	// A finished run is not renewed, nor swept.
	r.Status, r.FinishedAt = store.StatusSucceeded, now
	mustFinish(t, s, r)
	if n, _ := s.RenewRuns(ctx, "p1", now.Add(time.Hour)); n != 0 {
		t.Fatalf("renew after finish renewed %d", n)
	}
	if n, _ := s.SweepRuns(ctx, now.Add(time.Hour)); n != 0 {
		t.Fatalf("sweep after finish marked %d", n)
	}
}

// InterruptRun marks a run interrupted only while it is running under the owner named: not
// another owner's, nor a finished one, and once.
func testInterruptRun(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	now := time.Now()
	r := store.Run{ID: "run_lost", Skill: "s", Face: "http", StartedAt: now, Owner: "dead", LeaseUntil: now.Add(time.Hour)}
	if err := s.BeginRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.InterruptRun(ctx, r.ID, "alive", now.Add(time.Second), "lost"); ok || err != nil {
		t.Fatalf("another owner's run: %v %v", ok, err)
	}
	if ok, err := s.InterruptRun(ctx, r.ID, "dead", now.Add(time.Second), "its node stopped"); !ok || err != nil {
		t.Fatalf("interrupt: %v %v", ok, err)
	}
	got, _ := s.FindRun(ctx, r.ID)
	if got.Status != store.StatusInterrupted || got.Error == nil || got.Error.Message != "its node stopped" || got.Owner != "" ||
		!got.FinishedAt.Equal(now.Add(time.Second).UTC().Truncate(0)) || got.DurationMs < 999 || got.DurationMs > 1001 {
		t.Fatalf("interrupted run: %+v", got)
	}
	if ok, _ := s.InterruptRun(ctx, r.ID, "dead", now.Add(2*time.Second), "again"); ok {
		t.Fatal("a run was interrupted twice")
	}
}

// A real child process records a run start, renews its lease, and is killed with SIGKILL.
// While it lives the run stays running however long past its first lease; once it is dead the
// run is marked interrupted after the lease expires, never before.
func testKilledProcess(t *testing.T, h Harness) {
	if testing.Short() {
		t.Skip("-short: starts a child process")
	}
	addr := h.New(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "started ") {
		t.Fatalf("child said %q, %v", line, err)
	}
	runID := strings.TrimSpace(strings.TrimPrefix(line, "started "))
	s := open(t, h, addr)
	ctx := t.Context()
	// Alive past two of its leases: it renews, so a sweep at the end of its second lease (past
	// the one it started with) marks nothing, the child having renewed it again.
	leases := []time.Time{lease(t, s, runID, time.Time{})}
	for range 2 {
		leases = append(leases, lease(t, s, runID, leases[len(leases)-1]))
	}
	if n, err := s.SweepRuns(ctx, leases[1]); err != nil || n != 0 {
		t.Fatalf("a sweep at the end of the live child's second lease marked %d (%v)", n, err)
	}
	if r, _ := s.FindRun(ctx, runID); r.Status != store.StatusRunning {
		t.Fatalf("the live child's run is %s", r.Status)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	r, err := s.FindRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusRunning || !r.LeaseUntil.After(killed) {
		t.Fatalf("just after the kill: status %s, lease until %v (killed at %v)", r.Status, r.LeaseUntil, killed)
	}
	// Reopened, the store sweeps at once: the lease has not expired, so nothing is marked.
	s.Close()
	s = open(t, h, addr)
	if n, err := s.SweepRuns(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("sweep before the lease expired marked %d (%v)", n, err)
	}
	if n, err := s.SweepRuns(ctx, r.LeaseUntil.Add(-time.Millisecond)); err != nil || n != 0 {
		t.Fatalf("sweep just before the lease expires marked %d (%v)", n, err)
	}
	if n, err := s.SweepRuns(ctx, r.LeaseUntil.Add(time.Millisecond)); err != nil || n != 1 {
		t.Fatalf("sweep after the lease expired marked %d (%v), want 1", n, err)
	}
	r, _ = s.FindRun(ctx, runID)
	if r.Status != store.StatusInterrupted || r.Error == nil || r.Error.Kind != "interrupted" {
		t.Fatalf("killed child's run: %+v", r)
	}
}

// lease waits until the running run id's lease ends after after (the child renewed it) and
// returns that end.
func lease(t *testing.T, s store.Store, id string, after time.Time) time.Time {
	t.Helper()
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(childRenew / 2) {
		r, err := s.FindRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusRunning {
			t.Fatalf("the live child's run is %s", r.Status)
		}
		if r.LeaseUntil.After(after) {
			return r.LeaseUntil
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child did not renew its lease (until %v) within %v", after, hangTimeout)
		}
	}
}

// ChildMain, called first by a driver's TestMain, is the child process of the killed-process
// test when the environment says so: it opens the store, records a run start, says so on
// stdout, renews the lease until killed, and never returns. Otherwise it returns at once.
func ChildMain(openStore func(ctx context.Context, addr string) (store.Store, error)) {
	addr := os.Getenv(childEnv)
	if addr == "" {
		return
	}
	ctx := context.Background()
	s, err := openStore(ctx, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	now := time.Now()
	r := store.Run{ID: fmt.Sprintf("run_child_%d", os.Getpid()), Skill: "sleepy", Face: "cli",
		StartedAt: now, Owner: fmt.Sprintf("child-%d", os.Getpid()), LeaseUntil: now.Add(childLease)}
	if err := s.BeginRun(ctx, r); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	fmt.Println("started", r.ID)
	for {
		time.Sleep(childRenew)
		if _, err := s.RenewRuns(ctx, r.Owner, time.Now().Add(childLease)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
		}
	}
}
