package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

// Cluster is the node of a cluster a server is: what it shares with the other nodes so that
// any of them answers for any run. The cluster package's Node is one; the server does not
// import that package (the methods take and return the language's own types), so a program
// that mounts the routes without a cluster links no NATS.
//
// Tenants are named as Options.Tenants names them ("" the default tenant).
type Cluster interface {
	// Status is what GET /v1/cluster answers.
	Status(ctx context.Context) (any, error)
	// PublishEvent shares event n (from 1) of a run this node holds: its type and its JSON. It
	// must not wait for the cluster (it is called on the run's goroutine): the node stores it
	// later, and retries. data is at most MaxEventBytes.
	PublishEvent(tenant, run string, n int, name string, data []byte)
	MaxEventBytes() int
	// WatchEvents follows a run's shared events after the first `after` of them, to its result:
	// next returns the next event, waiting until its ctx ends (its error; the watch goes on),
	// and io.EOF after the result; stop ends the watch. Unless wait is set, next is nil when
	// the cluster holds none of the run's events; with wait, the watch waits for the first.
	WatchEvents(ctx context.Context, tenant, run string, after int, wait bool) (next func(context.Context) (n int, name string, data []byte, err error), stop func(), err error)
	// CancelRun asks the node that holds a run to cancel it for cause, and returns that node's
	// answer (what ServeCancels' held returned); held is false when no node answered.
	CancelRun(ctx context.Context, tenant, run, cause string) (answer string, held bool, err error)
	// ServeCancels has the node answer the cancels other nodes ask for with held: it cancels the
	// run when this node holds it, and returns its answer and true; false when it does not. It
	// must not wait.
	ServeCancels(held func(tenant, run, cause string) (string, bool)) error
	// AnswerPermission hands body, an answer to a permission request of a run, to the node that
	// holds the run, and returns that node's reply (what ServeAnswers' held returned); held is
	// false when no node answered.
	AnswerPermission(ctx context.Context, tenant, run string, body []byte) (reply []byte, held bool, err error)
	// ServeAnswers has the node give the answers other nodes hand on to its runs with held, and
	// reply with what it returns and true; false when it holds no such request. It must not
	// wait long.
	ServeAnswers(held func(tenant, run string, body []byte) ([]byte, bool)) error
	// GatherPermissionRequests asks every node for the permission requests waiting there that
	// body's principal may see, and returns the replies that came (what ServePermissionRequests'
	// list returned on each).
	GatherPermissionRequests(ctx context.Context, tenant string, body []byte) ([][]byte, error)
	ServePermissionRequests(list func(tenant string, body []byte) []byte) error
	// SubmitRun queues a run this node accepted and named, with what another node needs to run
	// it (body), for whichever node has room; queued is false when the queue is full, and why
	// says so.
	SubmitRun(ctx context.Context, tenant, run string, body []byte) (queued bool, why string, err error)
	// ServeRuns has the node take queued runs while free says it has a free run slot, and run
	// each with handle, in a goroutine of its own, with a context that ends when the node
	// loses the cluster; handle returns false when the node could not admit the run after
	// all (the queue gives it to another node). delivered counts the deliveries, this one
	// included; handle calls settled once the run holds a slot here, or will not: until then
	// the node asks for no other run.
	ServeRuns(free func() bool, handle func(ctx context.Context, tenant, run string, body []byte, delivered uint64, settled func()) bool) error
	// QueueBacklog reports whether runs wait in the queue: a new run then joins them.
	QueueBacklog() bool
	// QueuedCancel is the cause of a cancel asked for a run while no node held it, if any.
	QueuedCancel(ctx context.Context, tenant, run string) (cause string, ok bool)
	// LastEvent is the number of the last shared event of a run, 0 when none.
	LastEvent(ctx context.Context, tenant, run string) (int, error)
}

// cluster answers GET /v1/cluster: the cluster's nodes and queue, for the operator's admin keys
// (a key of the default tenant, with no user): a tenant's admin runs on the cluster, and does not
// see it.
func (s *Server) cluster(c echo.Context) error {
	if !principal(c).Operator() {
		return httpError(http.StatusForbidden, "forbidden",
			"the cluster is the operator's: only an admin key of the default tenant, without a user, reads it")
	}
	if s.opts.Cluster == nil {
		return httpError(http.StatusNotFound, "not_clustered",
			"this server is not a node of a cluster: serve --cluster embedded or --cluster nats://... makes it one (see docs/cluster.md)")
	}
	st, err := s.opts.Cluster.Status(c.Request().Context())
	if err != nil {
		return httpError(http.StatusServiceUnavailable, "cluster_unavailable", "the cluster's state cannot be read now: %v", err)
	}
	return c.JSON(http.StatusOK, st)
}

// shareEvents has t's runs share their events with the cluster, numbered as this server numbers
// them, so that any node serves GET /v1/runs/{id}/events the same.
func (s *Server) shareEvents(t *tenant) {
	cl := s.opts.Cluster
	t.live.share = func(id string, n int, k keptEvent) {
		data, err := json.Marshal(k.payload())
		if err != nil {
			t.logger.Error("encode a run's event for the cluster", "run", id, "err", err)
			return
		}
		if max := cl.MaxEventBytes(); len(data) > max {
			size := len(data)
			if data = standIn(k, max); data == nil {
				t.logger.Warn("a run's event is larger than a cluster message: other nodes do not see it", "run", id, "event", k.name(), "bytes", size)
				return
			}
		}
		cl.PublishEvent(t.name, id, n, k.name(), data)
	}
}

// standIn is what the cluster carries for a result event larger than max bytes: the result
// without its value and its logs, and a log entry that says where the whole is. nil for any
// other event (no other event can be that large: see LiveRunOptions.MaxEventBytes).
func standIn(k keptEvent, max int) []byte {
	if k.dropped != nil || k.ev.Result == nil {
		return nil
	}
	res := *k.ev.Result
	res.LogsDropped += len(res.Logs)
	res.Result = nil
	res.Logs = []run.LogEntry{{Time: time.Now().UTC(), Level: "warn", Source: "skillbox",
		Message: fmt.Sprintf("this result is larger than a message between the nodes of the cluster carries: GET /v1/runs/%s reads it whole", res.RunID)}}
	for range 2 {
		data, err := json.Marshal(run.Event{Type: "result", RunID: k.ev.RunID, Result: &res})
		if err == nil && len(data) <= max {
			return data
		}
		res.Artifacts = nil // the last thing that can be large: the run's record lists them
	}
	return nil
}

// clusterEvents answers GET /v1/runs/{id}/events for a run another node holds, from the
// events the cluster shares: handled is false when the run is not in the history (the caller
// answers as a server alone does). The history says whether the caller may see the run, and
// whether it is in flight: the events of a run in flight are waited for (its node shares them a
// moment after they happen), until the history says it finished without any coming (a run
// whose events were not kept). A finished run the cluster holds no event of (its node died
// before it shared them and the lease sweep ended it, or they are older than --keep-events)
// answers the history's result as its one event, without an id: every run ends with one
// result event, on every node.
func (s *view) clusterEvents(c echo.Context, id string, after int) (handled bool, err error) {
	if s.opts.Cluster == nil {
		return false, nil
	}
	rec := s.historyOf(c, id)
	if rec == nil {
		return false, nil
	}
	if handled, err := s.followEvents(c, id, after, !rec.Status.Final()); handled || !rec.Status.Final() {
		return handled, err
	}
	newSSE(c).send(0, "result", run.Event{Type: "result", RunID: id, Result: resultOf(rec)})
	return true, nil
}

// historyCheck is how often a watch of a run held elsewhere, with no event meanwhile, asks the
// history whether the run ended without its result reaching the stream.
const historyCheck = 5 * time.Second

// followEvents serves run id's events from the cluster, after the first `after`: handled is
// false when the cluster holds none of them and wait is not set. After historyCheck without an
// event, a watch asks the history whether the run has ended: then its result never reached the
// stream (its node died before it shared it, and the history's lease sweep ended it), and the
// stream ends with the history's result, without an id (its number is not known).
func (s *view) followEvents(c echo.Context, id string, after int, wait bool) (handled bool, err error) {
	ctx := c.Request().Context()
	next, stop, err := s.opts.Cluster.WatchEvents(ctx, s.t.name, id, after, wait)
	if err != nil {
		return true, httpError(http.StatusServiceUnavailable, "cluster_unavailable", "the events of run %q cannot be read from the cluster now: %v", id, err)
	}
	if next == nil {
		return false, nil
	}
	defer stop()
	sse := newSSE(c)
	sse.mu.Lock()
	sse.start()
	sse.c.Response().Flush()
	sse.mu.Unlock()
	sent := time.Now()
	for sse.err == nil {
		wctx, cancel := context.WithTimeout(ctx, historyCheck)
		n, name, data, err := next(wctx)
		cancel()
		switch {
		case err == nil:
			sse.sendRaw(n, name, data)
			sent = time.Now()
		case errors.Is(err, io.EOF), ctx.Err() != nil:
			return true, nil
		case errors.Is(err, context.DeadlineExceeded):
			if rec := s.historyOf(c, id); rec != nil && rec.Status.Final() {
				sse.send(0, "result", run.Event{Type: "result", RunID: id, Result: resultOf(rec)})
				return true, nil
			}
			if time.Since(sent) >= sseKeepAlive {
				sse.send(0, "", nil)
				sent = time.Now()
			}
		default:
			// The stream ends; the client resumes with Last-Event-ID, here or on another node.
			s.logger.Warn("follow a run's events in the cluster", "run", id, "err", err)
			return true, nil
		}
	}
	return true, nil
}

// resultOf is a finished run's result as the history has it.
func resultOf(r *store.Run) *run.Result {
	res := &run.Result{RunID: r.ID, Skill: r.Skill, Version: r.Version, Digest: r.Digest, Success: r.Success,
		Status: string(r.Status), Result: r.Result, Logs: []run.LogEntry{}, LogsDropped: r.LogsDropped, DurationMs: r.DurationMs,
		Artifacts: r.Artifacts}
	if r.Error != nil {
		res.Error = &run.ResultError{Kind: run.ErrorKind(r.Error.Kind), Message: r.Error.Message}
	}
	if len(r.Logs) > 0 {
		_ = json.Unmarshal(r.Logs, &res.Logs)
	}
	return res
}

// cancelElsewhere answers POST /v1/runs/{id}/cancel for a run this node does not run: one the
// history says is in flight or waits in the cluster's queue (rec), or one this node queued
// for the cluster that the history does not have yet (rec nil; caller is who started it). It
// asks the cluster's nodes, and the one that holds it cancels it. A run no node holds yet
// ends canceled at once when the history has it queued (cancelInQueue); either way the
// cancel is kept, and the node that takes the run ends it without running it. The key that
// started the run may, or an admin.
func (s *view) cancelElsewhere(c echo.Context, id string, rec *store.Run, caller string) error {
	k, _ := c.Get(keyContext).(keyEntry)
	if k.Role < access.RoleAdmin && k.Caller() != caller {
		return httpError(http.StatusForbidden, "forbidden",
			"run %q was started by another key: only that key or an admin may cancel it", id)
	}
	cause := fmt.Sprintf("key %q asked for it", k.Key)
	answer, held, err := s.opts.Cluster.CancelRun(c.Request().Context(), s.t.name, id, cause)
	switch {
	case err != nil:
		return httpError(http.StatusServiceUnavailable, "cluster_unavailable", "run %q cannot be canceled through the cluster now: %v", id, err)
	case held && answer == string(store.StatusRunning):
		return c.JSON(http.StatusAccepted, cancelAccepted{RunID: id, Status: store.StatusRunning, Links: linksFor(c, id)})
	case held:
		return finished(id, store.Status(answer))
	case rec == nil || rec.Status == store.StatusQueued:
		if rec != nil {
			s.cancelInQueue(c.Request().Context(), rec, cause)
		}
		return c.JSON(http.StatusAccepted, cancelAccepted{RunID: id, Status: placedStatus, Links: linksFor(c, id)})
	}
	// No node holds it: it has just finished, or its node has gone.
	if now := s.historyOf(c, id); now != nil && now.Status != store.StatusRunning {
		return finished(id, now.Status)
	}
	return &retryError{after: time.Second, err: httpError(http.StatusServiceUnavailable, "run_unreachable",
		"no node of the cluster answers for run %q, which the run history says is in flight: its node may have stopped (the history then marks the run when its lease ends); try again", id)}
}

// cancelInQueue ends run rec, which waits in the cluster's queue and no node holds, canceled
// for cause now, and shares its result: the cancel takes effect at once, not when a node
// takes the run. When a node recorded the run's start first, it is left to that node (it sees
// the kept cancel); when it cannot be ended now, the node that takes it ends it.
func (s *view) cancelInQueue(ctx context.Context, rec *store.Run, cause string) {
	msg := "the run was canceled while it waited in the cluster's queue: " + cause
	if _, err := s.endQueuedRun(context.WithoutCancel(ctx), s.t.name, rec.ID, func(ctx context.Context) (*run.Result, bool, error) {
		return s.rt.CancelQueued(ctx, rec.ID, rec.Skill, msg)
	}); err != nil {
		s.logger.Warn("cancel a queued run in the history: the node that takes it ends it", "run", rec.ID, "err", err)
	}
}

// heldCancel is the answer of this server to a cancel the cluster asks for: when one of its
// tenants' runs in flight is the run, it cancels it for cause and answers running, or the
// status it finished with; otherwise it is not this server's to answer (false).
func (s *Server) heldCancel(tenantName, id, cause string) (string, bool) {
	t := s.tenantNamed(tenantName)
	if t == nil {
		return "", false
	}
	r := t.live.get(id)
	if r == nil || r.placed { // a run this node queued is not held here: another node runs it
		return "", false
	}
	if !r.cancelFor(errors.New(cause)) && !r.canceledFor(cause) {
		return string(r.status()), true
	}
	return string(store.StatusRunning), true
}
