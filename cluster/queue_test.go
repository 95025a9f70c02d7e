package cluster

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A run queued on one node is taken by another that has a free slot, once, with its tenant,
// id and body, and is gone from the queue once done; a node with no free slot takes nothing.
func TestAQueuedRunIsTakenByANodeWithRoom(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	queued, why, err := a.SubmitRun(ctx, "t1", "run_q1", []byte(`{"skill":"s"}`))
	if err != nil || !queued {
		t.Fatalf("submit: %v %q %v", queued, why, err)
	}
	if again, _, err := a.SubmitRun(ctx, "t1", "run_q1", []byte(`{"skill":"s"}`)); err != nil || !again {
		t.Fatalf("a second submission of the same run: %v %v", again, err)
	}
	var room atomic.Bool
	got := make(chan queuedRun, 4)
	if err := b.ServeRuns(room.Load, func(_ context.Context, tenant, run string, body []byte, delivered uint64, _ func()) bool {
		got <- queuedRun{tenant: tenant, run: run, body: body, delivered: delivered}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for range 10 { // a node with no free slot asks for nothing
		time.Sleep(slotPoll)
		if len(got) != 0 {
			t.Fatal("a node with no free slot took a run")
		}
	}
	room.Store(true)
	r := <-got
	if r.tenant != "t1" || r.run != "run_q1" || string(r.body) != `{"skill":"s"}` || r.delivered != 1 {
		t.Fatalf("took %+v", r)
	}
	waitQueued(t, ctx, a, 0)
	select {
	case r := <-got:
		t.Fatalf("the run was taken twice: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
}

// A node says runs wait in the queue once it queued one or took one (until it is admitted, the
// slot is that run's), and says none once a whole fetch found nothing.
func TestQueueBacklogSaysWhetherRunsWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	if a.QueueBacklog() || b.QueueBacklog() {
		t.Fatal("a backlog before any run was queued")
	}
	for _, id := range []string{"run_b1", "run_b2"} {
		if queued, why, err := a.SubmitRun(ctx, "t1", id, []byte(`{}`)); err != nil || !queued {
			t.Fatalf("submit %s: %v %q %v", id, queued, why, err)
		}
	}
	if !a.QueueBacklog() {
		t.Fatal("the node that queued runs says none wait")
	}
	var room atomic.Bool
	room.Store(true)
	got := make(chan string, 2)
	proceed := make(chan struct{})
	if err := b.ServeRuns(room.Load, func(_ context.Context, _, run string, _ []byte, _ uint64, _ func()) bool {
		room.Store(false) // one at a time, so the test sees what each take says
		got <- run
		<-proceed
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r != "run_b1" || !b.QueueBacklog() {
		t.Fatalf("took %s: backlog %v", r, b.QueueBacklog())
	}
	room.Store(true)
	proceed <- struct{}{}
	if r := <-got; r != "run_b2" || !b.QueueBacklog() {
		t.Fatalf("took the last run %s: backlog %v", r, b.QueueBacklog())
	}
	close(proceed)
	room.Store(true) // b looks again, and finds nothing
	for b.QueueBacklog() {
		select {
		case <-ctx.Done():
			t.Fatal("b still says runs wait in an empty queue")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitQueued waits until the queue holds want runs.
func waitQueued(t *testing.T, ctx context.Context, n *Node, want uint64) {
	t.Helper()
	for {
		st, err := n.State(ctx)
		if err == nil && st.Queued == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the queue holds %d runs (%v), want %d", st.Queued, err, want)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A run a node could not admit after all goes back to the queue and is delivered again, saying
// it was delivered before.
func TestARunNotTakenIsDeliveredAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	if q, why, err := a.SubmitRun(ctx, "", "run_q2", []byte(`{}`)); !q || err != nil {
		t.Fatal(why, err)
	}
	got := make(chan queuedRun, 4)
	var tries atomic.Int32
	if err := b.ServeRuns(func() bool { return true }, func(_ context.Context, tenant, run string, body []byte, delivered uint64, _ func()) bool {
		got <- queuedRun{tenant: tenant, run: run, body: body, delivered: delivered}
		return tries.Add(1) > 1
	}); err != nil {
		t.Fatal(err)
	}
	if first, second := <-got, <-got; first.delivered != 1 || second.delivered != 2 || second.tenant != "" {
		t.Fatalf("deliveries %+v then %+v", first, second)
	}
	waitQueued(t, ctx, a, 0)
}

// The queue refuses a tenant's run past --tenant-max-queue, saying so, and takes another
// tenant's.
func TestAFullQueueRefusesTheNewestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	n := join(t, ctx, Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", MaxQueue: 3, TenantMaxQueue: 2}, 1)
	for _, id := range []string{"run_a", "run_b"} {
		if q, why, err := n.SubmitRun(ctx, "t", id, []byte(`{}`)); !q || err != nil {
			t.Fatal(why, err)
		}
	}
	q, why, err := n.SubmitRun(ctx, "t", "run_c", []byte(`{}`))
	if q || err != nil || !strings.Contains(why, "queue is full") || !strings.Contains(why, "2 of one tenant") {
		t.Fatalf("a third run of one tenant: %v %q %v", q, why, err)
	}
	if q, why, err := n.SubmitRun(ctx, "u", "run_d", []byte(`{}`)); !q || err != nil {
		t.Fatalf("another tenant's run: %q %v", why, err)
	}
	if q, _, _ := n.SubmitRun(ctx, "v", "run_e", []byte(`{}`)); q {
		t.Fatal("a run past --cluster-max-queue 3 was queued")
	}
	if q, why, _ := n.SubmitRun(ctx, "t", "x.>", []byte(`{}`)); q || !strings.Contains(why, "not a run id") {
		t.Fatalf("a wildcard id: %v %q", q, why)
	}
}

// A cancel asked while no node holds the run is kept for the node that takes it.
func TestACancelOfAQueuedRunIsKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	if _, held, err := a.CancelRun(ctx, "t1", "run_q3", `key "ops" asked for it`); held || err != nil {
		t.Fatalf("cancel: held %v, %v", held, err)
	}
	if cause, ok := b.QueuedCancel(ctx, "t1", "run_q3"); !ok || cause != `key "ops" asked for it` {
		t.Fatalf("the other node reads %q %v", cause, ok)
	}
	if _, ok := b.QueuedCancel(ctx, "t2", "run_q3"); ok {
		t.Fatal("another tenant's run of that id reads the cancel")
	}
}

// A node cut from NATS stops the run it holds, saying it lost the cluster, before the ack wait
// would give the run to another node.
func TestANodeCutFromNATSStopsItsRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a := join(t, ctx, Config{Embedded: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: "a"}, 1)
	p := newProxy(t, strings.TrimPrefix(a.URL(), "nats://"))
	b := join(t, ctx, Config{URLs: []string{"nats://" + p.ln.Addr().String()}, NodeID: "b", AckWait: 600 * time.Millisecond}, 1)
	if q, why, err := a.SubmitRun(ctx, "", "run_q4", []byte(`{}`)); !q || err != nil {
		t.Fatal(why, err)
	}
	taken := make(chan struct{})
	stopped := make(chan error, 1)
	if err := b.ServeRuns(func() bool { return true }, func(ctx context.Context, _, _ string, _ []byte, _ uint64, _ func()) bool {
		close(taken)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	<-taken
	p.partition("*")
	if err := <-stopped; !errors.Is(err, ErrLostCluster) {
		t.Fatalf("the run ended with %v, want ErrLostCluster", err)
	}
}

// A node asks for a second run only once the first it took holds its slot (settled): asked
// before, its free slot would still count the first, and the second would be given back.
func TestANodeTakesTheNextRunOnceTheLastIsSettled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), joinBound)
	defer cancel()
	a, b := pair(t, ctx)
	for _, id := range []string{"run_s1", "run_s2"} {
		if queued, why, err := a.SubmitRun(ctx, "", id, []byte(`{}`)); err != nil || !queued {
			t.Fatalf("submit %s: %v %q %v", id, queued, why, err)
		}
	}
	b.settleWait = time.Hour // only settled lets the next ask go
	got := make(chan func(), 2)
	if err := b.ServeRuns(func() bool { return true }, func(ctx context.Context, _, _ string, _ []byte, _ uint64, settled func()) bool {
		got <- settled
		<-ctx.Done()
		return true
	}); err != nil {
		t.Fatal(err)
	}
	settle := <-got
	time.Sleep(200 * time.Millisecond) // room for a second ask, were it made
	if len(got) != 0 {
		t.Fatal("the node took a second run before the first was settled")
	}
	settle()
	<-got
}
