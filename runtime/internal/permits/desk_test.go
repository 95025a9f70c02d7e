package permits

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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

// A lasting grant covers its caller (every caller, when it has none), its skill's version and
// its target, until it expires; the grants held are bounded.
func TestDeskGrants(t *testing.T) {
	var d Desk
	now := time.Unix(1_000_000, 0)
	d.Grant(Grant{Skill: "s", Digest: "d", Caller: "ann", Kind: "network", Target: "a.example", Until: now.Add(time.Hour), At: now})
	q := req("r", "q")
	if _, ok := d.Granted(q, now); !ok {
		t.Errorf("ann's grant does not cover her request")
	}
	for _, other := range []func(*run.PermissionRequest){
		func(q *run.PermissionRequest) { q.Caller = "bob" },
		func(q *run.PermissionRequest) { q.Digest = "d2" },
		func(q *run.PermissionRequest) { q.Target = "b.example" },
		func(q *run.PermissionRequest) { q.Kind = "env" },
		func(q *run.PermissionRequest) { q.Skill = "t" },
	} {
		o := q
		other(&o)
		if _, ok := d.Granted(o, now); ok {
			t.Errorf("ann's grant covers %+v", o)
		}
	}
	if _, ok := d.Granted(q, now.Add(time.Hour)); ok {
		t.Errorf("an expired grant covers")
	}
	d.Grant(Grant{Skill: "s", Digest: "d", Kind: "network", Target: "b.example", Until: now.Add(time.Hour), At: now})
	if _, ok := d.Granted(run.PermissionRequest{Skill: "s", Digest: "d", Caller: "bob", Kind: "network", Target: "b.example"}, now); !ok {
		t.Errorf("a tenant's grant does not cover bob")
	}
	for i := range maxGrants + 10 {
		d.Grant(Grant{Skill: "s", Kind: "env", Target: fmt.Sprint(i), Until: now.Add(time.Duration(i+2) * time.Hour), At: now})
	}
	if len(d.grants) != maxGrants {
		t.Errorf("%d grants held, want at most %d", len(d.grants), maxGrants)
	}
	d.Grant(Grant{Skill: "s", Kind: "env", Target: "late", Until: now.Add(time.Hour * 10000), At: now.Add(time.Hour * 5000)})
	if len(d.grants) > maxGrants-4000 {
		t.Errorf("%d grants held after most expired, want them dropped", len(d.grants))
	}
}
