package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Presence is what a node says of itself in the nodes bucket, every presenceEvery: for
// GET /v1/cluster and metrics, never for a decision (a node's word may be seconds old).
type Presence struct {
	Node string `json:"node"`
	// Addr is where the node's HTTP API answers, when it knows.
	Addr    string `json:"addr,omitempty"`
	Version string `json:"version,omitempty"`
	// Slots are the runs the node admits at once; Free those it could admit now.
	Slots int `json:"slots"`
	Free  int `json:"free"`
	// FreeMemory is what its memory budget has left, in bytes.
	FreeMemory int64     `json:"free_memory"`
	At         time.Time `json:"at"`
}

// How often a node says it is there, and how long the bucket keeps its word: a node that died
// leaves the list within nodesTTL.
const (
	presenceEvery = 5 * time.Second
	nodesTTL      = 15 * time.Second
)

// Node is this process's membership of the cluster: its connection, the embedded server when
// it runs one, the shared streams and the nodes bucket.
type Node struct {
	cfg   Config
	srv   *server.Server // nil when the cluster is external
	nc    *nats.Conn
	js    jetstream.JetStream
	runs  jetstream.Stream
	evs   jetstream.Stream
	nodes jetstream.KeyValue

	presence func() Presence
	// events are the events PublishEvent queued, not yet stored; dropped counts those a full
	// queue refused.
	events  chan *nats.Msg
	dropped atomic.Int64
	cancels jetstream.KeyValue
	// catalog says which version each installed skill is at (see installs.go).
	catalog jetstream.KeyValue
	// quota holds each tenant's quota across the nodes; mine, what this node holds of it (see
	// quota.go).
	quota jetstream.KeyValue
	mine  quotaMine
	// held counts the queued runs this node holds; reached is when JetStream last answered it
	// (unix nanoseconds).
	held    atomic.Int64
	reached atomic.Int64
	// backlog is whether runs wait in the queue, as this node last saw it (QueueBacklog).
	backlog atomic.Bool
	// settleWait is how long pull waits for a run it took to settle (the constant settleWait):
	// a field, so that a test need not race it.
	settleWait time.Duration
	// life ends when the node closes: what waits on NATS stops waiting.
	life    context.Context
	endLife context.CancelFunc
	stop    chan struct{}
	done    sync.WaitGroup
	once    sync.Once
}

// Names of what a cluster named name shares.
func runsStream(name string) string   { return strings.ToUpper(name) + "_RUNS" }
func eventsStream(name string) string { return strings.ToUpper(name) + "_EVENTS" }
func nodesBucket(name string) string  { return strings.ToUpper(name) + "_NODES" }

// Join makes this process a node of the cluster cfg names: it starts the embedded server (or
// connects to the external cluster), creates or updates the shared streams and buckets with
// cfg's bounds, and says every presenceEvery what presence returns. It waits for the cluster's
// JetStream until ctx ends: a member of three waits for a second one to form a quorum.
func Join(ctx context.Context, cfg Config, presence func() Presence) (*Node, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, presence: presence, stop: make(chan struct{}), events: make(chan *nats.Msg, eventQueue), settleWait: settleWait}
	var err error
	opts := []nats.Option{nats.Name("skillbox " + cfg.NodeID), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	url := strings.Join(cfg.URLs, ",")
	if cfg.Embedded {
		if n.srv, err = startServer(cfg); err != nil {
			return nil, err
		}
		url = n.srv.ClientURL()
		opts = append(opts, nats.InProcessServer(n.srv))
	} else if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if n.nc, err = nats.Connect(url, opts...); err != nil {
		n.shutdownServer()
		return nil, fmt.Errorf("cluster: connect to NATS at %s: %w", redact(cfg.URLs, url), err)
	}
	if n.js, err = jetstream.New(n.nc, jetstream.WithPublishAsyncTimeout(publishAckWait)); err != nil {
		n.closeConn()
		return nil, fmt.Errorf("cluster: JetStream: %w", err)
	}
	if err := n.provision(ctx); err != nil {
		n.closeConn()
		return nil, err
	}
	n.life, n.endLife = context.WithCancel(context.Background())
	n.reached.Store(time.Now().UnixNano())
	n.say(ctx)
	n.done.Go(func() { n.every(presenceEvery, presenceEvery, n.say) })
	// A probe may take longer than a beat (a busy cluster commits slowly): it is timed from
	// when it asked, so a slow answer still counts.
	n.done.Go(func() { n.every(beatEvery(n.cfg.AckWait), n.cfg.AckWait/4, n.probe) })
	n.done.Go(n.publishEvents)
	return n, nil
}

// redact is where a node connects, for a message: the external URLs without a password they
// may hold (nats://user:password@host), or the embedded server's URL.
func redact(urls []string, embedded string) string {
	if len(urls) == 0 {
		return embedded
	}
	out := make([]string, len(urls))
	for i, u := range urls {
		p, err := neturl.Parse(u)
		switch {
		case err != nil:
			out[i] = "(a URL that does not parse)"
		case p.User != nil:
			p.User = neturl.User(p.User.Username())
			out[i] = p.String()
		default:
			out[i] = u
		}
	}
	return strings.Join(out, ",")
}

// provisionTry bounds one try to create the streams and buckets; minProvisionBackoff is the
// first wait before the next.
const (
	provisionTry        = 2 * time.Second
	minProvisionBackoff = 50 * time.Millisecond
)

// provision creates the streams and buckets, or updates their bounds to cfg's, retrying while
// the cluster has no JetStream leader yet (its members are still starting).
func (n *Node) provision(ctx context.Context) error {
	c := n.cfg
	runs := jetstream.StreamConfig{
		Name:     runsStream(c.Name),
		Subjects: []string{c.Name + ".runs.>"},
		// A run is taken once, by the node that runs it.
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
		Replicas:  c.Replicas,
		MaxMsgs:   c.MaxQueue,
		// One subject per tenant: a tenant's queue is bounded apart, and a full one refuses
		// the newest run (the client is told busy), never drops an accepted one.
		MaxMsgsPerSubject:    c.TenantMaxQueue,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		MaxMsgSize:           1 << 20,
		Duplicates:           2 * time.Minute,
	}
	events := jetstream.StreamConfig{
		Name:       eventsStream(c.Name),
		Subjects:   []string{c.Name + ".events.>"},
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		Replicas:   c.Replicas,
		MaxAge:     c.KeepEvents,
		MaxBytes:   c.MaxEventBytes,
		Discard:    jetstream.DiscardOld,
		MaxMsgSize: 1 << 20,
		Duplicates: min(2*time.Minute, c.KeepEvents),
	}
	nodes := jetstream.KeyValueConfig{Bucket: nodesBucket(c.Name), TTL: nodesTTL, Replicas: c.Replicas, Storage: jetstream.FileStorage}
	cancels := jetstream.KeyValueConfig{Bucket: cancelsBucket(c.Name), TTL: cancelsTTL, Replicas: c.Replicas, Storage: jetstream.FileStorage,
		MaxValueSize: maxCause, MaxBytes: 64 << 20}
	catalog := jetstream.KeyValueConfig{Bucket: catalogBucket(c.Name), History: 1, Replicas: c.Replicas, Storage: jetstream.FileStorage,
		MaxValueSize: 256, MaxBytes: maxCatalogBytes}
	quota := jetstream.KeyValueConfig{Bucket: quotaBucket(c.Name), History: 1, Replicas: c.Replicas, Storage: jetstream.FileStorage,
		MaxValueSize: maxQuotaValue, MaxBytes: maxQuotaBytes}
	err := untilLeader(ctx, func(ctx context.Context) error {
		var err error
		if n.runs, err = n.js.CreateOrUpdateStream(ctx, runs); err == nil {
			n.evs, err = n.js.CreateOrUpdateStream(ctx, events)
		}
		for _, b := range []struct {
			cfg  jetstream.KeyValueConfig
			into *jetstream.KeyValue
		}{{nodes, &n.nodes}, {cancels, &n.cancels}, {catalog, &n.catalog}, {quota, &n.quota}} {
			if err == nil {
				*b.into, err = n.js.CreateOrUpdateKeyValue(ctx, b.cfg)
			}
		}
		if err != nil && !c.Embedded && (errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders)) {
			// An external server without JetStream stays so: say it now, not at SIGTERM.
			return permanent{fmt.Errorf("cluster: the NATS servers at %s do not run JetStream: start them with it (nats-server -js, or jetstream {} in their configuration): %w",
				redact(c.URLs, ""), err)}
		}
		return err
	}, func(err error) {
		c.Logger.Info("cluster: waiting for JetStream: a quorum of the members must be up", "err", err)
	})
	var p permanent
	switch {
	case err == nil:
		return nil
	case errors.As(err, &p):
		return p.error
	case !retryable(err):
		return fmt.Errorf("cluster: create the streams of %q: %w", c.Name, err)
	}
	return fmt.Errorf("cluster: JetStream has no quorum yet (start the other members listed in --cluster-routes): %w", err)
}

// untilLeader calls f until it succeeds, fails for a reason other than the cluster having no
// JetStream leader now (retryable), or ctx ends, and returns its last error. A request made
// before the members elect a leader goes unanswered: each try has provisionTry of its own.
// waiting, when set, hears the first failure that is retried.
func untilLeader(ctx context.Context, f func(context.Context) error, waiting func(error)) error {
	backoff := minProvisionBackoff
	for {
		tctx, cancel := context.WithTimeout(ctx, provisionTry)
		err := f(tctx)
		cancel()
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		if backoff == minProvisionBackoff && waiting != nil {
			waiting(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// permanent marks an error no retry can help, whatever it wraps.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// retryable reports whether err is the cluster not being ready yet, rather than refusing.
func retryable(err error) bool {
	var p permanent
	if errors.As(err, &p) {
		return false
	}
	return errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || strings.Contains(err.Error(), "insufficient resources") ||
		strings.Contains(err.Error(), "no suitable peers") || strings.Contains(err.Error(), "JetStream system temporarily unavailable")
}

// say puts this node's presence in the nodes bucket.
func (n *Node) say(ctx context.Context) {
	if err := n.putPresence(ctx); err != nil {
		n.cfg.Logger.Warn("cluster: say this node is there", "err", err)
	}
}

// putPresence writes this node's presence, now, to the nodes bucket.
func (n *Node) putPresence(ctx context.Context) error {
	p := Presence{Node: n.cfg.NodeID}
	if n.presence != nil {
		p = n.presence()
		p.Node = n.cfg.NodeID
	}
	p.At = time.Now().UTC()
	data, _ := json.Marshal(p)
	_, err := n.nodes.Put(ctx, n.cfg.NodeID, data)
	return err
}

// every calls f every d (or once the last call returned, when it took longer), with a context
// that ends after within, until the node closes.
func (n *Node) every(d, within time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(n.life, within)
			f(ctx)
			cancel()
		}
	}
}

// Status is what GET /v1/cluster answers: the nodes that said they are there within nodesTTL,
// and the shared queue.
type Status struct {
	Name     string     `json:"name"`
	Node     string     `json:"node"`
	Replicas int        `json:"replicas"`
	Nodes    []Presence `json:"nodes"`
	// Queued are the runs waiting in all; QueueBytes what they hold.
	Queued     uint64 `json:"queued"`
	QueueBytes uint64 `json:"queue_bytes"`
	// Consumers are the queue's readers and how far behind each is.
	Consumers []ConsumerLag `json:"consumers"`
	// Events and EventBytes are what the event stream holds.
	Events     uint64 `json:"events"`
	EventBytes uint64 `json:"event_bytes"`
	// EventsUnsent are this node's events not stored yet; EventsDropped those it could not
	// queue (NATS was away and its queue full) since it started.
	EventsUnsent  int   `json:"events_unsent"`
	EventsDropped int64 `json:"events_dropped"`
	// Held are the queued runs this node holds now.
	Held int64 `json:"held"`
	// QueueLeader and EventsLeader are the NATS servers that lead the run queue and the event
	// stream now ("" without a cluster of servers): the one whose death pauses publishing for
	// an election.
	QueueLeader  string `json:"queue_leader,omitempty"`
	EventsLeader string `json:"events_leader,omitempty"`
}

// ConsumerLag is one reader of the queue: runs not yet delivered to it, and delivered but not
// yet acknowledged.
type ConsumerLag struct {
	Name       string `json:"name"`
	Pending    uint64 `json:"pending"`
	AckPending int    `json:"ack_pending"`
}

// URL is the NATS server this node is connected to, without a password: another node joins
// the same cluster through it (an embedded server's client URL).
func (n *Node) URL() string { return n.nc.ConnectedUrlRedacted() }

// Status is State as GET /v1/cluster answers it.
func (n *Node) Status(ctx context.Context) (any, error) { return n.State(ctx) }

// State reads the cluster's state from JetStream.
func (n *Node) State(ctx context.Context) (Status, error) {
	st := Status{Name: n.cfg.Name, Node: n.cfg.NodeID, Replicas: n.cfg.Replicas, Nodes: []Presence{}, Consumers: []ConsumerLag{},
		EventsUnsent: len(n.events), EventsDropped: n.dropped.Load(), Held: n.held.Load()}
	keys, err := n.nodes.ListKeys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return n.queueStatus(ctx, st)
	}
	if err != nil {
		return st, fmt.Errorf("cluster: list the nodes: %w", err)
	}
	for k := range keys.Keys() {
		e, err := n.nodes.Get(ctx, k)
		if err != nil {
			continue // gone since it was listed
		}
		var p Presence
		if json.Unmarshal(e.Value(), &p) == nil {
			st.Nodes = append(st.Nodes, p)
		}
	}
	slices.SortFunc(st.Nodes, func(a, b Presence) int { return strings.Compare(a.Node, b.Node) })
	return n.queueStatus(ctx, st)
}

// queueStatus adds the run queue's and the event stream's state to st.
func (n *Node) queueStatus(ctx context.Context, st Status) (Status, error) {
	ri, err := n.runs.Info(ctx)
	if err != nil {
		return st, fmt.Errorf("cluster: the run queue: %w", err)
	}
	st.Queued, st.QueueBytes = ri.State.Msgs, ri.State.Bytes
	if ri.Cluster != nil {
		st.QueueLeader = ri.Cluster.Leader
	}
	for c := range n.runs.ListConsumers(ctx).Info() {
		st.Consumers = append(st.Consumers, ConsumerLag{Name: c.Name, Pending: c.NumPending, AckPending: c.NumAckPending})
	}
	ei, err := n.evs.Info(ctx)
	if err != nil {
		return st, fmt.Errorf("cluster: the event stream: %w", err)
	}
	st.Events, st.EventBytes = ei.State.Msgs, ei.State.Bytes
	if ei.Cluster != nil {
		st.EventsLeader = ei.Cluster.Leader
	}
	return st, nil
}

// Close leaves the cluster: it stores the events still queued (for up to drainOnClose), stops
// saying it is there and takes its word back, drains its connection and shuts the embedded
// server down. Close it after the runs it holds have ended, so their results are shared.
func (n *Node) Close() {
	n.once.Do(func() {
		close(n.stop)
		n.endLife()
		n.done.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = n.nodes.Delete(ctx, n.cfg.NodeID)
		cancel()
		n.closeConn()
	})
}

func (n *Node) closeConn() {
	if n.nc != nil {
		n.nc.Close()
	}
	n.shutdownServer()
}

func (n *Node) shutdownServer() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
}
