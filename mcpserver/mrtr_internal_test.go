package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
)

// A parked run is resumed only by the key that parked it, one answer a question; at most
// maxParked runs park at once.
func TestParkingBelongsToItsKey(t *testing.T) {
	var k parking
	ann := access.Principal{Key: "k-ann", User: "ann", Role: access.RoleRunner}
	p := &parkedRun{owner: ann}
	token, ok := k.park(p)
	if !ok {
		t.Fatal("no room for one run")
	}
	q := run.PermissionRequest{ID: "preq_1"}
	k.asking(p, q)
	if got, _ := k.find(token, access.Principal{Key: "k-bob", User: "bob", Role: access.RoleAdmin}); got != nil {
		t.Errorf("another key, an admin's even, resumes ann's run")
	}
	if got, asked := k.find(token, ann); got != p || asked == nil || asked.ID != "preq_1" {
		t.Errorf("ann's own resume: %v, %v", got, asked)
	}
	if _, asked := k.find(token, ann); asked != nil {
		t.Errorf("a question answered twice")
	}
	for range maxParked - 1 {
		if _, ok := k.park(&parkedRun{owner: ann}); !ok {
			t.Fatal("room ran out early")
		}
	}
	if _, ok := k.park(&parkedRun{owner: ann}); ok {
		t.Errorf("more than %d runs parked", maxParked)
	}
}

// An answer that came for an earlier question is not taken for the next one.
func TestParkedAskerTakesItsOwnAnswer(t *testing.T) {
	p := &parkedRun{asks: make(chan parkedAsk, 1), reply: make(chan parkedReply, 1)}
	p.reply <- parkedReply{id: "preq_old", a: run.PermissionAnswer{Decision: run.AllowOnce}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	a, err := parkedAsker{p}.Ask(ctx, run.PermissionRequest{ID: "preq_new"})
	if err == nil {
		t.Errorf("the old question's answer %+v was taken for the new one", a)
	}
}
