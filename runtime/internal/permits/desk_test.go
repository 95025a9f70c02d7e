package permits

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

func req(runID, id string) run.PermissionRequest {
	return run.PermissionRequest{ID: id, RunID: runID, Skill: "s", Digest: "d", Caller: "ann", Kind: "network", Target: "a.example"}
}

// The first answer wins; a second, or one after the wait ended, is ErrRequestOver; an answer for
// another run, or no request, is ErrNoRequest; MaxPending bounds what waits.
func TestDeskAnswers(t *testing.T) {
	var d Desk
	lim := Limits{MaxPending: 1}
	if err := d.Open(req("r1", "q1"), lim); err != nil {
		t.Fatal(err)
	}
	if err := d.Open(req("r2", "q2"), lim); !errors.Is(err, ErrFull) {
		t.Errorf("a second request over MaxPending: %v, want ErrFull", err)
	}
	if got := d.Pending(func(run.PermissionRequest) bool { return true }); len(got) != 1 || got[0].ID != "q1" {
		t.Errorf("pending %+v", got)
	}
	if err := d.Answer("r2", "q1", run.PermissionAnswer{Decision: run.AllowOnce}, "x"); !errors.Is(err, run.ErrNoRequest) {
		t.Errorf("another run's answer: %v", err)
	}
	if err := d.Answer("r1", "q1", run.PermissionAnswer{Decision: run.Deny}, "root"); err != nil {
		t.Fatal(err)
	}
	if err := d.Answer("r1", "q1", run.PermissionAnswer{Decision: run.AllowOnce}, "ann"); !errors.Is(err, run.ErrRequestOver) {
		t.Errorf("a second answer: %v, want ErrRequestOver", err)
	}
	a, by, ok := d.Wait(context.Background(), "q1")
	if !ok || a.Decision != run.Deny || by != "root" {
		t.Errorf("wait: %+v %q %v, want root's deny", a, by, ok)
	}
	if err := d.Answer("r1", "q1", run.PermissionAnswer{Decision: run.AllowOnce}, "root"); !errors.Is(err, run.ErrRequestOver) {
		t.Errorf("an answer after the wait: %v, want ErrRequestOver", err)
	}
	if err := d.Open(req("r2", "q2"), lim); err != nil {
		t.Errorf("room again after the wait ended: %v", err)
	}
	d.GiveUp("r2", "q2")
	if _, _, ok := d.Wait(context.Background(), "q2"); ok {
		t.Errorf("a request given up is answered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	must(t, d.Open(req("r3", "q3"), lim))
	if _, _, ok := d.Wait(ctx, "q3"); ok {
		t.Errorf("a wait whose context ended is answered")
	}
	// The ended requests remembered are bounded: the oldest is forgotten.
	for i := range maxEnded {
		id := fmt.Sprintf("e%d", i)
		must(t, d.Open(req("r", id), lim))
		d.GiveUp("r", id)
		d.Wait(context.Background(), id)
	}
	if _, err := d.Request("r1", "q1"); !errors.Is(err, run.ErrNoRequest) {
		t.Errorf("the oldest ended request: %v, want forgotten", err)
	}
	if _, err := d.Request("r", "e1"); !errors.Is(err, run.ErrRequestOver) {
		t.Errorf("a recent ended request: %v, want ErrRequestOver", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
