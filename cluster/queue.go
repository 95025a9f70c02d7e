package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The queue's reader, shared by every node: a run is delivered to one of them at a time.
const runnersConsumer = "runners"

// headerRun names the run a queued message carries.
const headerRun = "Skillbox-Run"

// Bounds of the queue as a node uses it.
const (
	// submitWait bounds a run's submission, its retries included: past it the run is refused
	// (the cluster is unreachable, or electing a leader for longer).
	submitWait = 5 * time.Second
	// fetchWait is how long one pull waits for a run; a node with no free slot looks again
	// every slotPoll.
	fetchWait = time.Second
	slotPoll  = 5 * time.Millisecond
	// notTakenDelay is how long a run a node could not admit after all waits before it is
	// delivered again (to any node).
	notTakenDelay = 100 * time.Millisecond
	// settleWait bounds how long a node waits for a run it took to be admitted (or refused)
	// before it asks for another.
	settleWait = time.Second
	// cancelsTTL is how long a cancel asked for a run that no node held stays: longer than a
	// run waits in the queue.
	cancelsTTL = 10 * time.Minute
)

// Names of the buckets of cancels asked for runs no node held yet.
func cancelsBucket(name string) string { return strings.ToUpper(name) + "_CANCELS" }

// SubmitRun queues run of tenant for whichever node has room, with body (what the node that
// takes it needs; this package does not read it). queued is false when the queue refuses it
// (--tenant-max-queue or --cluster-max-queue reached): the run is not queued and why says so.
// A submission is deduplicated by run; it is retried within submitWait while the cluster
// elects a leader, and err is set when it could not be made at all.
func (n *Node) SubmitRun(ctx context.Context, tenant, run string, body []byte) (queued bool, why string, err error) {
	if _, ok := runKey(tenant, run); !ok {
		return false, fmt.Sprintf("%q of tenant %q is not a run id", run, tenant), nil
	}
	t, _ := token(tenant)
	subj := n.cfg.Name + ".runs." + t // one subject per tenant: its queue is bounded apart
	m := nats.NewMsg(subj)
	m.Header.Set(headerRun, run)
	m.Data = body
	ctx, cancel := context.WithTimeout(ctx, submitWait)
	defer cancel()
	_, err = n.js.PublishMsg(ctx, m, jetstream.WithMsgID(run), jetstream.WithRetryAttempts(20), jetstream.WithRetryWait(250*time.Millisecond))
	var api *jetstream.APIError
	switch {
	case err == nil:
		n.backlog.Store(true)
		return true, "", nil
	case errors.As(err, &api) && strings.Contains(api.Description, "maximum"):
		// The stream refuses a run past MaxMsgs or MaxMsgsPerSubject (DiscardNew): "maximum
		// messages exceeded", "maximum messages per subject exceeded".
		return false, fmt.Sprintf("the cluster's queue is full (%s): at most %d runs wait in all, and %d of one tenant", api.Description, n.cfg.MaxQueue, n.cfg.TenantMaxQueue), nil
	}
	return false, "", fmt.Errorf("cluster: queue run %q: %w", run, err)
}

// queuedRun is one run a node took from the queue.
type queuedRun struct {
	tenant, run string
	body        []byte
	// delivered counts the deliveries of the run, this one included: more than 1 when a node
	// took it before and did not finish it (it died, or lost the cluster).
	delivered uint64
	// settled tells pull that the run was admitted, or will not be: a slot of this node counts
	// it from then, and pull may ask for another. Safe to call more than once.
	settled func()
}

// ServeRuns takes runs from the queue, one at a time while free reports a free run slot on this
// node, and hands each to handle in a goroutine of its own (its tenant, id and body, and how
// many times the queue delivered it, this time included: more than 1 when a node took it before
// and did not finish it), with a context that ends if the
// node loses the cluster for two thirds of --run-ack-wait (the run would be delivered to
// another node) or closes. While handle runs, the node tells the cluster every third of the
// ack wait that it holds the run. handle returns true when the run is done with (it ran, or
// was ended without running), and false when this node could not admit it after all: the run
// is delivered again, to any node, after a short delay.
func (n *Node) ServeRuns(free func() bool, handle func(ctx context.Context, tenant, run string, body []byte, delivered uint64, settled func()) bool) error {
	ctx, cancel := context.WithTimeout(n.life, submitWait)
	defer cancel()
	cons, err := n.runs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       runnersConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       n.cfg.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: -1,
		FilterSubject: n.cfg.Name + ".runs.>",
	})
	if err != nil {
		return fmt.Errorf("cluster: the queue's reader: %w", err)
	}
	n.done.Go(func() {
		n.pull(cons, free, func(ctx context.Context, r queuedRun) bool {
			return handle(ctx, r.tenant, r.run, r.body, r.delivered, r.settled)
		})
	})
	return nil
}

// QueueBacklog reports whether runs wait in the cluster's queue, as this node last saw it (it
// queued one, or took one: until that run is admitted, a free slot here is its): a new run then
// joins them (run.Request.Yield). A node whose slots are all taken does not look, and goes on
// saying what it saw last; once it looks and a whole fetch finds nothing, it says none again.
func (n *Node) QueueBacklog() bool { return n.backlog.Load() }

// pull is ServeRuns' loop: it asks for a run only when this node has a free slot.
func (n *Node) pull(cons jetstream.Consumer, free func() bool, handle func(context.Context, queuedRun) bool) {
	for n.life.Err() == nil {
		if !free() {
			select {
			case <-n.stop:
				return
			case <-time.After(slotPoll):
			}
			continue
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(fetchWait))
		if err != nil {
			if n.life.Err() == nil {
				n.cfg.Logger.Warn("cluster: take a run from the queue", "err", err)
				select {
				case <-n.stop:
				case <-time.After(fetchWait):
				}
			}
			continue
		}
		took := false
		for m := range batch.Messages() {
			took = true
			// Until it is admitted, a slot here is the taken run's: a new run joins the queue
			// rather than take it first (and the taken run be given back).
			n.backlog.Store(true)
			n.held.Add(1)
			settled := make(chan struct{})
			var once sync.Once
			settle := func() { once.Do(func() { close(settled) }) }
			n.done.Go(func() {
				defer n.held.Add(-1)
				defer settle()
				n.handleRun(m, settle, handle)
			})
			// The next ask waits until this run holds its slot (or will not): asked before,
			// free still counts that slot, and the second run would find no room and be
			// given back. A run slow to be admitted (its module compiles) holds it up for
			// settleWait at most.
			select {
			case <-settled:
			case <-time.After(n.settleWait):
			case <-n.stop:
			}
		}
		if !took && (batch.Error() == nil || errors.Is(batch.Error(), nats.ErrTimeout)) {
			n.backlog.Store(false) // a whole fetchWait and nothing came: nothing waits
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && n.life.Err() == nil {
			n.cfg.Logger.Warn("cluster: take a run from the queue", "err", err)
			select {
			case <-n.stop:
			case <-time.After(slotPoll):
			}
		}
	}
}

// handleRun hands one delivered run to handle, telling the cluster it holds the run meanwhile,
// and acknowledges it (or gives it back) when handle returns.
func (n *Node) handleRun(m jetstream.Msg, settled func(), handle func(context.Context, queuedRun) bool) {
	r := queuedRun{run: m.Headers().Get(headerRun), body: m.Data(), settled: settled}
	r.tenant, _ = strings.CutPrefix(m.Subject(), n.cfg.Name+".runs.")
	if r.tenant == "_" {
		r.tenant = ""
	}
	if md, err := m.Metadata(); err == nil {
		r.delivered = md.NumDelivered
	}
	ctx, cancel := context.WithCancelCause(n.life)
	defer cancel(nil)
	beat := make(chan struct{})
	go n.heartbeat(m, cancel, beat)
	done := handle(ctx, r)
	close(beat)
	if !done {
		_ = m.NakWithDelay(notTakenDelay)
		return
	}
	actx, acancel := context.WithTimeout(context.Background(), submitWait)
	defer acancel()
	if err := m.DoubleAck(actx); err != nil {
		n.cfg.Logger.Warn("cluster: acknowledge a run", "run", r.run, "err", err)
	}
}

// ErrLostCluster is the cause of a run's end when its node lost the cluster: the run would be
// delivered to another node, so this one stops it first.
var ErrLostCluster = errors.New("this node lost the cluster")

// heartbeat tells the cluster every beatEvery that this node holds m's run, until beat is
// closed. When JetStream has not answered this node (probe) for lostAfter, it cancels the run
// (ErrLostCluster): by the ack wait, the cluster delivers the run to another node, and it must
// not run twice at once.
//
// Why it stops in time: cut off at time c, the node's last heartbeat the queue's leader heard
// was at c-A/8 or later (A the ack wait), so the run is delivered again at c+7A/8 or later. Its
// last answered probe was sent at c or before, so the node stops by c+A/2+A/8 (the threshold,
// and one beat to notice): A/4 before. (With a third of the ack wait between beats and two
// thirds as the threshold, as before, the two could meet: a test with a partition of the
// routes found a run delivered again while its cut-off node still ran it.)
func (n *Node) heartbeat(m jetstream.Msg, cancel context.CancelCauseFunc, beat <-chan struct{}) {
	t := time.NewTicker(beatEvery(n.cfg.AckWait))
	defer t.Stop()
	for {
		select {
		case <-beat:
			return
		case now := <-t.C:
			_ = m.InProgress()
			if away := now.Sub(time.Unix(0, n.reached.Load())); away >= lostAfter(n.cfg.AckWait) {
				cancel(fmt.Errorf("%w for %v, and the run would be given to another node", ErrLostCluster, away.Round(time.Millisecond)))
				return
			}
		}
	}
}

// probe asks whether the cluster's majority hears this node (every beatEvery), and keeps the
// time it asked when the answer is yes: it writes the node's presence, which the nodes bucket
// acknowledges only once a quorum of its servers stored it. A node cut from the majority (a
// partition of its routes, or of its connection) gets no acknowledgement, though its own
// embedded server still takes its messages. A read would not do: a cut-off member that led
// JetStream answers reads until it steps down (a test with a partition of the routes saw its
// account info answered for seconds, and its run delivered again meanwhile).
func (n *Node) probe(ctx context.Context) {
	asked := time.Now() // the answer proves the node was heard when it asked, not later
	if n.putPresence(ctx) == nil {
		n.reached.Store(asked.UnixNano())
	}
}

// beatEvery is how often a node that holds a queued run tells the cluster so, and asks whether
// JetStream answers it, for an ack wait of a; lostAfter is how long JetStream may not answer
// before the node stops its queued runs. See heartbeat for why these.
func beatEvery(a time.Duration) time.Duration { return a / 8 }
func lostAfter(a time.Duration) time.Duration { return a / 2 }

// QueuedCancel is the cause of a cancel asked for run while no node held it (it waited in the
// queue), if one was: the node that takes the run ends it without running it.
func (n *Node) QueuedCancel(ctx context.Context, tenant, run string) (string, bool) {
	key, ok := runKey(tenant, run)
	if !ok {
		return "", false
	}
	e, err := n.leaderGet(ctx, cancelsBucket(n.cfg.Name), key)
	if err != nil {
		if !errors.Is(err, errKeyNotFound) {
			n.cfg.Logger.Warn("cluster: read the cancels", "run", run, "err", err)
		}
		return "", false
	}
	return string(e.value), true
}
