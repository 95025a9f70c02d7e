package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/skillbox-dev/skillbox/server"
)

// A Node is what the HTTP face shares runs through.
var _ server.Cluster = (*Node)(nil)

// pair is two nodes of one cluster of one: the first embeds the NATS server, the second joins
// it as an external cluster, as a second replica on another machine would.
func pair(t *testing.T, ctx context.Context) (*Node, *Node) {
	t.Helper()
	a := join(t, ctx, Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "a"}, 2)
	b := join(t, ctx, Config{URLs: []string{a.URL()}, NodeID: "b"}, 2)
	return a, b
}

// follow reads events from next until the result, or fails after want events more than asked.
func follow(t *testing.T, ctx context.Context, next func(context.Context) (int, string, []byte, error), most int) []Event {
	t.Helper()
	var got []Event
	for len(got) <= most {
		n, name, data, err := next(ctx)
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got = append(got, Event{N: n, Name: name, Data: data})
	}
	t.Fatalf("more than %d events: %v", most, got)
	return nil
}

func numbers(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d:%s ", e.N, e.Name)
	}
	return strings.TrimSpace(b.String())
}

// A run's events published on one node are read on another in the order of their numbers,
// each once, however they were stored (out of order, twice); a watch resumes after any of them;
// and a run the stream holds nothing of, or an id that is no run's (a subject wildcard), has
// no events rather than someone else's.
func TestEventsFromAnyNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	const run = "run_0123abcd"
	for _, e := range []struct {
		n    int
		name string
	}{{1, "status"}, {3, "log"}, {2, "status"}, {2, "status"}, {4, "log"}, {1, "status"}, {5, "result"}} {
		a.PublishEvent("t1", run, e.n, e.name, fmt.Appendf(nil, `{"n":%d}`, e.n))
	}
	a.PublishEvent("t1", "run_other", 1, "status", []byte(`{}`))
	next, stop, err := b.WatchEvents(ctx, "t1", run, 0, true) // the node stores them after PublishEvent returns
	if err != nil || next == nil {
		t.Fatalf("watch: %v (events: %v)", err, next != nil)
	}
	got := follow(t, ctx, next, 5)
	stop()
	if s := numbers(got); s != "1:status 2:status 3:log 4:log 5:result" || string(got[2].Data) != `{"n":3}` {
		t.Fatalf("events %s (%s)", s, got[2].Data)
	}
	next, stop, err = b.WatchEvents(ctx, "t1", run, 3, false)
	if err != nil || next == nil {
		t.Fatal(err)
	}
	if s := numbers(follow(t, ctx, next, 2)); s != "4:log 5:result" {
		t.Fatalf("resumed after 3: %s", s)
	}
	stop()
	for _, c := range []struct{ tenant, run string }{{"t1", "run_none"}, {"t2", run}, {"t1", ">"}, {"t1", "*"}, {"*", run}, {"t1", "run_0123abcd.x"}, {"t1", ""}} {
		next, _, err := b.WatchEvents(ctx, c.tenant, c.run, 0, false)
		if err != nil || next != nil {
			t.Errorf("run %q of tenant %q: %v, events %v; want none", c.run, c.tenant, err, next != nil)
		}
	}
}

// A watch that has the result waits a little for an event before it that is missing, then goes
// on without it: a run's result always ends its watch.
func TestAWatchEndsAtTheResultDespiteAGap(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	for _, n := range []int{1, 2, 4} {
		name := "log"
		if n == 4 {
			name = "result"
		}
		a.PublishEvent("", "run_gap", n, name, []byte(`{}`))
	}
	next, stop, err := b.WatchEvents(ctx, "", "run_gap", 0, true)
	if err != nil || next == nil {
		t.Fatal(err)
	}
	defer stop()
	if s := numbers(follow(t, ctx, next, 3)); s != "1:log 2:log 4:result" {
		t.Fatalf("events %s", s)
	}
}

// A watch does not stall behind an event that does not come while the run goes on: it skips it
// after maxGapHold.
func TestAWatchSkipsAGapThatLasts(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	a.PublishEvent("", "run_hole", 1, "status", []byte(`{}`))
	a.PublishEvent("", "run_hole", 3, "log", []byte(`{}`))
	next, stop, err := b.WatchEvents(ctx, "", "run_hole", 0, true)
	if err != nil || next == nil {
		t.Fatal(err)
	}
	defer stop()
	for _, want := range []int{1, 3} {
		if n, _, _, err := next(ctx); err != nil || n != want {
			t.Fatalf("got %d (%v), want %d", n, err, want)
		}
	}
}

// A watch waits for events not stored yet, and a wait that ends (its context) leaves the watch
// usable.
func TestAWatchWaitsForNewEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	next, stop, err := b.WatchEvents(ctx, "", "run_live", 0, true) // before the run's first event
	if err != nil || next == nil {
		t.Fatal(err)
	}
	defer stop()
	a.PublishEvent("", "run_live", 1, "status", []byte(`{}`))
	if n, _, _, err := next(ctx); err != nil || n != 1 {
		t.Fatalf("first: %d %v", n, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	_, _, _, err = next(short)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait with nothing new: %v, want its deadline", err)
	}
	a.PublishEvent("", "run_live", 2, "result", []byte(`{}`))
	if n, name, _, err := next(ctx); err != nil || n != 2 || name != "result" {
		t.Fatalf("after the wait: %d %s %v", n, name, err)
	}
	if _, _, _, err := next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the result: %v", err)
	}
}

// A cancel asked on one node reaches the node that holds the run, whose answer comes back; a run
// no node holds is said so, and no wildcard id reaches a run.
func TestCancelReachesTheNodeThatHoldsTheRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	asked := make(chan string, 4)
	if err := a.ServeCancels(func(tenant, run, cause string) (string, bool) {
		if run != "run_held" {
			return "", false
		}
		asked <- tenant + "/" + run + ": " + cause
		return "running", true
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.ServeCancels(func(string, string, string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	answer, held, err := b.CancelRun(ctx, "", "run_held", "key \"ops\" asked for it")
	if err != nil || !held || answer != "running" {
		t.Fatalf("cancel: %q %v %v", answer, held, err)
	}
	if got := <-asked; got != `/run_held: key "ops" asked for it` {
		t.Errorf("the holder heard %q", got)
	}
	for _, id := range []string{"run_gone", "*", ">"} {
		if _, held, err := b.CancelRun(ctx, "", id, "x"); held || err != nil {
			t.Errorf("cancel of %q: held %v, %v", id, held, err)
		}
	}
	if len(asked) != 0 {
		t.Errorf("a wildcard reached the holder: %q", <-asked)
	}
}

// With NATS away, a node queues eventQueue events and drops further ones but results, counting
// them; it never blocks the run that sends them.
func TestEventsPastTheQueueAreDroppedAndCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	a.Close()                                     // the NATS server b is connected to stops
	for i := range eventQueue + eventBatch + 10 { // the publisher holds one batch it cannot store
		b.PublishEvent("", "run_lost", i+1, "log", []byte(`{}`))
	}
	if got := b.dropped.Load(); got < 10 {
		t.Fatalf("dropped %d events, want at least 10 past the queue of %d", got, eventQueue)
	}
}

// heldMsg is a stored event as a watch reads it: its headers and data.
type heldMsg struct {
	jetstream.Msg
	h nats.Header
}

func (m heldMsg) Headers() nats.Header { return m.h }
func (m heldMsg) Data() []byte         { return []byte(`{}`) }

// A gap that filled does not shorten the wait for a later one: each missing event is waited
// for from when its gap is seen. (Before, the time of the first gap stayed, and every later
// gap of a long run was skipped at once, its event lost to the watcher.)
func TestAWatchWaitsForEachGapAfresh(t *testing.T) {
	in := make(chan pumped, 64)
	w := &watch{in: in, next: 1, held: map[int]Event{}}
	send := func(nums ...int) {
		for _, n := range nums {
			h := nats.Header{}
			h.Set(headerN, strconv.Itoa(n))
			h.Set(headerName, "log")
			in <- pumped{m: heldMsg{h: h}}
		}
	}
	next := func() int {
		t.Helper()
		e, err := w.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return e.N
	}
	send(1, 3, 2) // a gap, filled at once
	for want := 1; want <= 3; want++ {
		if n := next(); n != want {
			t.Fatalf("event %d, want %d", n, want)
		}
	}
	time.Sleep(maxGapHold + 100*time.Millisecond) // the first gap is long past
	// Each later gap is filled by the event right behind it: none may be skipped.
	for n := 4; n < 44; n += 2 {
		send(n+1, n)
		for _, want := range []int{n, n + 1} {
			if got := next(); got != want {
				t.Fatalf("event %d, want %d: a gap was skipped at once", got, want)
			}
		}
	}
}

// A stored event whose ack never comes (the stream's leader changed under the publish) does
// not stop the node's events: the publish is given up after publishAckWait and sent again,
// and the events after it are stored.
func TestALostAckDoesNotStopTheEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	noAck := func(on bool) {
		t.Helper()
		cfg := a.evs.CachedInfo().Config
		cfg.NoAck = on
		s, err := a.js.UpdateStream(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		a.evs = s
	}
	noAck(true) // the stream stores what it is sent and answers nothing
	a.PublishEvent("", "run_unacked", 1, "status", []byte(`{}`))
	subj, _ := a.eventSubject("", "run_unacked")
	for {
		if _, err := a.evs.GetLastMsgForSubject(ctx, subj); err == nil {
			break
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the first event was never stored")
		case <-time.After(10 * time.Millisecond):
		}
	}
	noAck(false)
	a.PublishEvent("", "run_unacked", 2, "result", []byte(`{}`))
	next, stop, err := b.WatchEvents(ctx, "", "run_unacked", 0, true)
	if err != nil || next == nil {
		t.Fatal(err)
	}
	defer stop()
	if s := numbers(follow(t, ctx, next, 2)); s != "1:status 2:result" {
		t.Fatalf("events %s", s)
	}
}

// A watch made on one member of a cluster gets an event another member stored before a watcher
// would give up on the stream and ask the history (the HTTP face's historyCheck, 5 s), every
// time: its first pull
// can be lost (the consumer's member has not told the others of it yet), and the watch finds
// out from missing heartbeats (watchHeartbeat). With the client's default heartbeat, 2 watches
// in 150 here waited 10 s.
func TestAWatchOnAnotherMemberDoesNotStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	peers := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	nodes := threeMembers(t, ctx, func(i int) Config { return Config{PeerListen: peers[i], Routes: peers} })
	var worst time.Duration
	for i := range 100 {
		run := fmt.Sprintf("run_w%d", i)
		p, w := nodes[i%3], nodes[(i+1)%3]
		p.PublishEvent("", run, 1, "status", []byte(`{}`))
		p.PublishEvent("", run, 2, "log", []byte(`{}`))
		start := time.Now()
		next, stop, err := w.WatchEvents(ctx, "", run, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		n, _, _, err := next(ctx)
		stop()
		if err != nil || n != 2 {
			t.Fatalf("watch %d: event %d, %v", i, n, err)
		}
		took := time.Since(start)
		worst = max(worst, took)
		if took >= 5*time.Second {
			t.Fatalf("watch %d on another member: its stored event came %v after it was made, past the 5 s a watcher waits before it asks the history", i, took)
		}
	}
	t.Logf("the slowest of 100 watches got its first event after %v", worst.Round(time.Millisecond))
}
