package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is one event of a run as the nodes share it: N is its number among the run's events
// (from 1, the id a watcher resumes after), Name its type ("result" is the last), Data its JSON.
type Event struct {
	Tenant, Run string
	N           int
	Name        string
	Data        []byte
}

// last reports whether e ends its run's events.
func (e Event) last() bool { return e.Name == "result" }

// The headers an event message carries besides its data.
const (
	headerN    = "Skillbox-Event-N"
	headerName = "Skillbox-Event"
)

// Bounds of the events a node has yet to store: the queue the runs hand them to, the batch one
// round of publishing sends, how long a run's result may wait for room in a full queue, and how
// long a closing node goes on storing what is queued.
const (
	eventQueue   = 8192
	eventBatch   = 256
	resultWait   = 5 * time.Second
	drainOnClose = 5 * time.Second
	// publishAckWait bounds the wait for a stored event's ack. An ack can be lost (the
	// stream's leader changes under the publish) and never come: the event is then sent
	// again (stored once: its message id), well before a watcher asks the history
	// (historyCheck, 5 s), rather than wait forever with every later event behind it.
	publishAckWait = 2 * time.Second
	// maxGapWait is how long a watcher that has a run's result waits for an event before it
	// that is missing (a publish retried after later ones), before it goes on without it;
	// maxGapHold how long it waits for one while the run goes on.
	maxGapWait = 500 * time.Millisecond
	maxGapHold = 2 * time.Second
	// maxWatchResets bounds how often a watch recreates its consumer (1 s, 2 s, 4 s… apart).
	maxWatchResets = 5
	// maxReorder bounds the events a watcher holds while it waits for a missing one.
	maxReorder = 2048
	// watchHeartbeat is how often the server tells a watch it is there while no event comes,
	// and watchPull how long each of the watch's pull requests lasts. A watch made on one
	// member whose consumer another member holds can send its first pull before that
	// member's interest has reached it: the pull is lost, and only two missing heartbeats
	// tell. Under the client's default for an ordered consumer (5 s) that was 10 s without
	// an event that was stored, 2 watches in 150 here, and a watcher asked the history after
	// 5 s (the HTTP face's historyCheck) and ended without the run's events. 500 ms is the
	// least the client allows.
	watchHeartbeat = 500 * time.Millisecond
	watchPull      = 2 * time.Second
)

// ErrNoEvents is what WatchEvents answers for a run the event stream holds no event of: it
// never ran on a node, or its events are older than --keep-events.
var ErrNoEvents = errors.New("cluster: the event stream holds no event of this run")

// token is s as one token of a subject: a tenant ("" is "_", the default tenant) or a run id.
// Anything that is not a name (a '.', '*', '>' or space would reach other subjects) is refused.
func token(s string) (string, bool) {
	if s == "" {
		return "_", true
	}
	return s, validName(s)
}

// runKey is "<tenant>.<run>", the last tokens of a run's subjects and its key in the cancels
// bucket; false when run (or tenant) is no name.
func runKey(tenant, run string) (string, bool) {
	t, ok := token(tenant)
	return t + "." + run, ok && validName(run)
}

// eventSubject is the subject of run's events.
func (n *Node) eventSubject(tenant, run string) (string, error) {
	key, ok := runKey(tenant, run)
	if !ok {
		return "", fmt.Errorf("%w: %q of tenant %q is not a run id", ErrNoEvents, run, tenant)
	}
	return n.cfg.Name + ".events." + key, nil
}

// LastEvent is the number of the last event of run the stream holds, 0 when none: a node that
// ends a run another node started numbers its result after it.
func (n *Node) LastEvent(ctx context.Context, tenant, run string) (int, error) {
	subj, err := n.eventSubject(tenant, run)
	if err != nil {
		return 0, nil
	}
	num := 0
	err = n.duringElection(ctx, func(ctx context.Context) error {
		m, err := n.evs.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		num, _ = strconv.Atoi(m.Header.Get(headerN))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cluster: read the last event of run %q: %w", run, err)
	}
	return num, nil
}

// MaxEventBytes is the most data one event may carry: what NATS carries in one message, less
// room for its headers. A face sends a smaller stand-in for a bigger event.
func (n *Node) MaxEventBytes() int {
	return int(min(n.nc.MaxPayload(), 1<<20)) - 1024
}

// PublishEvent hands event num (from 1) of a run of tenant ("" the default one), its type name
// and its JSON data, to the node, which stores it in the event stream, retrying until it is
// stored (each try is deduplicated by the run and num). It does not wait for the store: a run's
// events must not hold its guest. When the node has eventQueue events queued (NATS is away), a
// further event other than a result is dropped, and a result waits up to resultWait for room.
func (n *Node) PublishEvent(tenant, run string, num int, name string, data []byte) {
	e := Event{Tenant: tenant, Run: run, N: num, Name: name}
	subj, err := n.eventSubject(tenant, run)
	if err != nil {
		n.cfg.Logger.Error("cluster: an event of a run with no id", "err", err)
		return
	}
	m := nats.NewMsg(subj)
	m.Header.Set(headerN, strconv.Itoa(num))
	m.Header.Set(headerName, name)
	m.Header.Set(jetstream.MsgIDHeader, run+":"+strconv.Itoa(num))
	m.Data = data
	select {
	case n.events <- m:
		return
	default:
	}
	if !e.last() {
		n.dropped.Add(1)
		n.cfg.Logger.Warn("cluster: the event queue is full (is NATS reachable?): an event is not shared", "run", e.Run, "event", e.Name)
		return
	}
	t := time.NewTimer(resultWait)
	defer t.Stop()
	select {
	case n.events <- m:
	case <-t.C:
		n.dropped.Add(1)
		n.cfg.Logger.Error("cluster: the event queue stayed full: a run's result is not shared (its record has it)", "run", e.Run)
	case <-n.stop:
	}
}

// publishEvents stores what PublishEvent queues, a batch at a time, until the node closes; then
// it stores what is still queued, for up to drainOnClose.
func (n *Node) publishEvents() {
	batch := make([]*nats.Msg, 0, eventBatch)
	for {
		select {
		case m := <-n.events:
			batch = n.take(append(batch[:0], m))
			if n.publishAll(n.life, batch) != nil { // the node closes: what is unsent is sent again
				n.drain(batch)
				return
			}
		case <-n.stop:
			n.drain(nil)
			return
		}
	}
}

// drain stores pending and what is still queued, for up to drainOnClose: a closing node's last
// runs end while it closes, and their results must reach the other nodes.
func (n *Node) drain(pending []*nats.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), drainOnClose)
	defer cancel()
	batch := pending
	for {
		if batch = n.take(batch); len(batch) == 0 || n.publishAll(ctx, batch) != nil {
			return
		}
		batch = batch[:0]
	}
}

// take adds to batch what is queued now, up to eventBatch.
func (n *Node) take(batch []*nats.Msg) []*nats.Msg {
	for len(batch) < eventBatch {
		select {
		case m := <-n.events:
			batch = append(batch, m)
		default:
			return batch
		}
	}
	return batch
}

// publishAll stores batch in the event stream: it sends them all, waits for their acks, and
// sends again those that failed, with a growing pause, until every one is stored or ctx ends.
func (n *Node) publishAll(ctx context.Context, batch []*nats.Msg) error {
	backoff := 50 * time.Millisecond
	for {
		futures := make([]jetstream.PubAckFuture, len(batch))
		for i, m := range batch {
			futures[i], _ = n.js.PublishMsgAsync(copyMsg(m))
		}
		var failed []*nats.Msg
		var lastErr error
		for i, f := range futures {
			if f == nil {
				failed, lastErr = append(failed, batch[i]), errors.New("not sent")
				continue
			}
			select {
			case <-f.Ok():
			case err := <-f.Err():
				failed, lastErr = append(failed, batch[i]), err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if len(failed) == 0 {
			return nil
		}
		n.cfg.Logger.Warn("cluster: events not stored yet, trying again", "events", len(failed), "err", lastErr)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
		batch = failed
	}
}

// copyMsg is m to send once more: a send takes the message's reply subject for its ack.
func copyMsg(m *nats.Msg) *nats.Msg {
	c := nats.NewMsg(m.Subject)
	for k, v := range m.Header {
		c.Header[k] = v
	}
	c.Data = m.Data
	return c
}

// watch follows one run's events in the event stream, in the order of their numbers.
type watch struct {
	it jetstream.MessagesContext
	// in is what pump reads from it: it.Next may block past any context while the client
	// recreates its consumer (a member died), and a watch must still answer its context.
	in      chan pumped
	next    int           // the number of the event Next returns next
	held    map[int]Event // events that came before one missing before them
	resultN int           // the result's number, once it came
	gapFrom time.Time     // since when an event before those held is missing
	done    bool
}

// WatchEvents follows run's events after the first `after` of them, from any node: those the
// stream holds, then new ones as they are stored, to the result. next returns the next event,
// waiting until its ctx ends (its error; the watch goes on), and io.EOF after the result; stop
// ends the watch. Unless wait is set, next is nil when the stream holds none of the run's
// events (it never ran on a node, or its events are older than --keep-events); with wait, the
// watch waits for a run whose first event may not be stored yet. next is nil for a run that is
// no run id.
func (n *Node) WatchEvents(ctx context.Context, tenant, run string, after int, wait bool) (next func(context.Context) (int, string, []byte, error), stop func(), err error) {
	w, err := n.watch(ctx, tenant, run, after, wait)
	if errors.Is(err, ErrNoEvents) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) (int, string, []byte, error) {
		e, err := w.Next(ctx)
		return e.N, e.Name, e.Data, err
	}, w.Stop, nil
}

// electionWait bounds how long a read of the cluster waits for JetStream to elect a leader (a
// member died): measured 4–7 s on this machine.
const electionWait = 15 * time.Second

// duringElection is untilLeader for at most electionWait.
func (n *Node) duringElection(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	return untilLeader(ctx, f, nil)
}

// watch follows run's events after the first `after`; ErrNoEvents, unless wait, when the
// stream holds none.
func (n *Node) watch(ctx context.Context, tenant, run string, after int, wait bool) (*watch, error) {
	subj, err := n.eventSubject(tenant, run)
	if err != nil {
		return nil, err
	}
	var cons jetstream.Consumer
	err = n.duringElection(ctx, func(ctx context.Context) error {
		if !wait {
			if _, err := n.evs.GetLastMsgForSubject(ctx, subj); errors.Is(err, jetstream.ErrMsgNotFound) {
				return fmt.Errorf("%w: run %q", ErrNoEvents, run)
			} else if err != nil {
				return fmt.Errorf("cluster: read the events of run %q: %w", run, err)
			}
		}
		var err error
		// A bounded number of resets: past them the watch fails, and its client resumes with
		// Last-Event-ID on a new one, rather than wait on one that cannot be made.
		if cons, err = n.js.OrderedConsumer(ctx, eventsStream(n.cfg.Name), jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subj}, MaxResetAttempts: maxWatchResets}); err != nil {
			return fmt.Errorf("cluster: follow the events of run %q: %w", run, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	it, err := cons.Messages(jetstream.PullHeartbeat(watchHeartbeat), jetstream.PullExpiry(watchPull))
	if err != nil {
		return nil, fmt.Errorf("cluster: follow the events of run %q: %w", run, err)
	}
	w := &watch{it: it, in: make(chan pumped, pumpBuffer), next: after + 1, held: map[int]Event{}}
	go w.pump()
	return w, nil
}

// pumped is one read of a watch's iterator.
type pumped struct {
	m   jetstream.Msg
	err error
}

// pumpBuffer bounds the messages a watch reads ahead of its reader.
const pumpBuffer = 64

// pump reads the iterator until it fails or is stopped, the failure last.
func (w *watch) pump() {
	for {
		m, err := w.it.Next()
		w.in <- pumped{m, err}
		if err != nil {
			close(w.in)
			return
		}
	}
}

// Next returns the run's next event, waiting for it until ctx ends (ctx's error; the watch
// may go on), and io.EOF once the result has been returned. Events come in the order of their
// numbers, each once, however often it was stored; a number that does not come (an event a
// full queue dropped, or one still being retried) is skipped after maxGapHold (maxGapWait once
// the result is in), so a watcher never stalls behind it.
func (w *watch) Next(ctx context.Context) (Event, error) {
	for {
		if w.done {
			return Event{}, io.EOF
		}
		if e, ok := w.held[w.next]; ok {
			delete(w.held, w.next)
			w.next++
			w.done = e.last()
			w.gapFrom = time.Time{} // a gap after it waits its own time, from when it is seen
			return e, nil
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if len(w.held) > 0 { // an event before those held is missing: wait for it a little
			if w.gapFrom.IsZero() {
				w.gapFrom = time.Now()
			}
			limit := maxGapHold
			if w.resultN > 0 {
				limit = maxGapWait
			}
			wctx, cancel = context.WithTimeout(ctx, max(limit-time.Since(w.gapFrom), 0))
		}
		var m jetstream.Msg
		var err error
		select {
		case p, ok := <-w.in:
			m, err = p.m, p.err
			if !ok {
				err = jetstream.ErrMsgIteratorClosed
			}
		case <-wctx.Done():
			err = wctx.Err()
		}
		cancel()
		if err != nil {
			if len(w.held) > 0 && ctx.Err() == nil {
				w.skipGap()
				continue
			}
			return Event{}, err
		}
		w.hold(m)
	}
}

// hold keeps m's event until its turn, unless it was returned already (a copy stored twice, or
// one before the point the watch resumed after).
func (w *watch) hold(m jetstream.Msg) {
	h := m.Headers()
	num, err := strconv.Atoi(h.Get(headerN))
	if err != nil || num < w.next {
		return
	}
	e := Event{N: num, Name: h.Get(headerName), Data: m.Data()}
	w.held[num] = e
	if e.last() {
		w.resultN = num
	}
	if len(w.held) > maxReorder {
		w.skipGap()
	}
}

// skipGap moves past missing events to the first one held.
func (w *watch) skipGap() {
	first := 0
	for k := range w.held {
		if first == 0 || k < first {
			first = k
		}
	}
	if first > 0 {
		w.next = first
	}
	w.gapFrom = time.Time{}
}

// Stop ends the watch.
func (w *watch) Stop() {
	w.it.Stop()
	go func() { // the pump's last reads, unread: let it end
		for range w.in {
		}
	}()
}
