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

// placedRun is what a node puts in the cluster's queue for a run it accepted and could not
// admit at once: what the node that takes it needs to run it as this one would have.
type placedRun struct {
	Skill       string           `json:"skill"`
	Digest      string           `json:"digest,omitempty"`
	Args        json.RawMessage  `json:"args,omitempty"`
	Script      string           `json:"script,omitempty"`
	Argv        []string         `json:"argv,omitempty"`
	Stdin       []byte           `json:"stdin,omitempty"`
	Face        run.Face         `json:"face"`
	Who         access.Principal `json:"who"`
	TraceParent string           `json:"traceparent,omitempty"`
	QueuedAt    time.Time        `json:"queued_at"`
	// Deadline is when the run stops waiting: the node that takes it later ends it busy.
	Deadline time.Time `json:"deadline"`
}

// request is the run p asks for, under id, refused at once when the node has no room now
// (the cluster then gives it to another node).
func (p *placedRun) request(id string) run.Request {
	return run.Request{ID: id, Skill: p.Skill, Digest: p.Digest, Args: p.Args, Script: p.Script, Argv: p.Argv, Stdin: p.Stdin,
		Face: p.Face, Who: p.Who, TraceParent: p.TraceParent, NoWait: true, Asker: p.asker()}
}

// asker is how the run reaches a person for its permission requests: through the API when the
// HTTP face placed it; a run another face placed has no one to ask on this node.
func (p *placedRun) asker() run.Asker {
	if p.Face == run.FaceHTTP {
		return run.AnswerThroughAPI
	}
	return nil
}

// placedLinger is how long the node that queued a run keeps it after its deadline: enough for
// the node that takes it to start it, after which the run history knows it.
const placedLinger = time.Minute

// placeable reports whether a run refused with err may go to the cluster's queue: this node
// is a node of a cluster, and only had no room now.
func (s *view) placeable(err error) bool {
	return s.opts.Cluster != nil && errors.Is(err, run.ErrNoRoomNow)
}

// place queues req, which this node's runtime refused for want of room now (refused is that
// refusal's result, which named the run), for whichever node of the cluster has room. It
// shares the run's first event, status queued, and keeps the run as placed, so this node
// answers for it (events, cancel) until the history knows it. It returns the run's id, or the
// HTTP error of a queue that refused it.
func (s *view) place(ctx context.Context, req run.Request, refused *run.Result) (string, error) {
	id, cl := refused.RunID, s.opts.Cluster
	now := time.Now()
	wait := s.rt.AdmissionStats().MaxWait
	p := placedRun{Skill: req.Skill, Digest: req.Digest, Args: req.Args, Script: req.Script, Argv: req.Argv, Stdin: req.Stdin,
		Face: req.Face, Who: req.Who, TraceParent: req.TraceParent, QueuedAt: now.UTC(), Deadline: now.Add(wait).UTC()}
	body, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode a run for the cluster's queue: %w", err)
	}
	// Kept as placed before it is queued: this node may take it back from the queue at once,
	// and then holds it (trackQueued) over what it placed, not under it.
	s.live.addPlaced(id, runOwner{req.Who.Caller(), s.rt.VisibleTo(req.Skill)}, p.Deadline.Add(placedLinger))
	queued, why, err := cl.SubmitRun(ctx, s.t.name, id, body)
	if err != nil || !queued {
		s.live.unplace(id)
	}
	switch {
	case err != nil:
		return "", &retryError{after: time.Second, err: httpError(http.StatusServiceUnavailable, "busy",
			"this node has no room to run now, and the cluster's queue cannot be reached: %v", err)}
	case !queued:
		return "", &retryError{after: time.Second, err: httpError(http.StatusTooManyRequests, "busy",
			"this node has no room to run now, and %s; try again later", why)}
	}
	data, _ := json.Marshal(run.Event{Type: "status", RunID: id, Status: "queued"})
	cl.PublishEvent(s.t.name, id, 1, "status", data)
	// Recorded after it is queued: a run the queue refused leaves no record. A node that takes
	// it first records its start, which this record never undoes.
	req.ID = id
	if err := s.rt.RecordQueued(context.WithoutCancel(ctx), req, p.QueuedAt, p.Deadline.Add(placedLinger)); err != nil {
		s.logger.Error("a queued run is not in the history until it starts", "run", id, "err", err)
	}
	return id, nil
}

// awaitPlaced follows a placed run's events in the cluster to its result, for the synchronous
// request that placed it: to sse when the client asked for events (each with its number, as
// any node serves them), and the result to return. A client that goes away cancels the run.
func (s *view) awaitPlaced(c echo.Context, id string, sse *sseWriter) (*run.Result, error) {
	if sse == nil {
		return s.awaitResult(c.Request().Context(), id, nil, nil)
	}
	return s.awaitResult(c.Request().Context(), id, sse.sendRaw, func() { sse.send(0, "", nil) })
}

// awaitResult follows a placed run's events in the cluster to its result: each event to each
// as it comes (nil: none), and quiet after each sseKeepAlive without one. A ctx that ends
// cancels the run. Its errors are the HTTP face's: the events could not be read.
func (s *view) awaitResult(ctx context.Context, id string, each func(n int, name string, data []byte), quiet func()) (*run.Result, error) {
	next, stop, err := s.opts.Cluster.WatchEvents(ctx, s.t.name, id, 0, true)
	if err != nil {
		return nil, httpError(http.StatusServiceUnavailable, "cluster_unavailable", "run %q was queued, and its events cannot be read from the cluster now: %v", id, err)
	}
	defer stop()
	for {
		wctx, cancel := context.WithTimeout(ctx, sseKeepAlive)
		n, name, data, err := next(wctx)
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			s.cancelPlaced(context.WithoutCancel(ctx), id, "its client went away")
			return nil, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if quiet != nil {
				quiet()
			}
			continue
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("run %q: the events ended without a result", id)
		default:
			return nil, httpError(http.StatusServiceUnavailable, "cluster_unavailable", "run %q: its events cannot be read from the cluster now: %v", id, err)
		}
		if each != nil {
			each(n, name, data)
		}
		if name != "result" {
			continue
		}
		var e run.Event
		if err := json.Unmarshal(data, &e); err != nil || e.Result == nil {
			return nil, fmt.Errorf("run %q: its result event does not read: %v", id, err)
		}
		return e.Result, nil
	}
}

// cancelPlaced cancels run id, which this node placed, for cause: the node that holds it
// cancels it, and one that still waits in the queue ends at once.
func (s *view) cancelPlaced(ctx context.Context, id, cause string) {
	_, held, err := s.opts.Cluster.CancelRun(ctx, s.t.name, id, cause)
	if err != nil || held || s.history == nil {
		return
	}
	if rec, err := s.history.FindRun(ctx, id); err == nil && rec.Status == store.StatusQueued {
		s.cancelInQueue(ctx, &rec, cause)
	}
}

// clusterRun makes a run of a face other than HTTP's (MCP's tool calls) on a node of a
// cluster, as the HTTP face makes its own: a run this node cannot admit now goes to the
// cluster's queue for a node with room, and while runs wait there a new one joins them. Its
// events reach req.OnEvent as they are shared, and its result is returned. A run the queue
// refuses, or whose result cannot be read, is refused as the runtime refuses one (its result
// says why, with the run's id when it has one).
func (s *view) clusterRun(ctx context.Context, req run.Request) (*run.Result, error) {
	req.NoWait, req.Yield = true, s.opts.Cluster.QueueBacklog()
	res, err := s.rt.Run(ctx, req)
	if !s.placeable(err) {
		return res, err
	}
	onEvent := req.OnEvent
	req.OnEvent = nil
	id, err := s.place(ctx, req, res)
	if err != nil {
		return refused(res, run.KindBusy, err)
	}
	var each func(int, string, []byte)
	if onEvent != nil {
		each = func(_ int, _ string, data []byte) {
			var e run.Event
			if json.Unmarshal(data, &e) == nil && e.Type != "result" { // the result is returned
				onEvent(e)
			}
		}
	}
	out, err := s.awaitResult(ctx, id, each, nil)
	if err != nil {
		kind := run.KindInternal
		if ctx.Err() != nil {
			kind = run.KindCanceled
		}
		res.RunID = id
		return refused(res, kind, err)
	}
	if out.Error != nil {
		return out, &run.Error{Kind: out.Error.Kind, Message: out.Error.Message}
	}
	return out, nil
}

// refused is res refused with kind for err, as the runtime answers a refusal: the result
// and a *run.Error of the same kind, with the message a client of the HTTP face would read.
func refused(res *run.Result, kind run.ErrorKind, err error) (*run.Result, error) {
	out := *res
	out.Success, out.Result = false, nil
	out.Error = &run.ResultError{Kind: kind, Message: apiMessage(err)}
	return &out, &run.Error{Kind: kind, Skill: res.Skill, Message: out.Error.Message, Err: err}
}

// runQueued runs a run this node took from the cluster's queue (the handler of
// Cluster.ServeRuns): it holds it as a tracked run of its tenant (its events shared, numbered
// after the queued one, and its cancel answered), ends it without running when a cancel was
// asked while it waited or its deadline has passed, and otherwise runs it, refused at once
// when this node has no room after all (false: the queue gives it to another node).
func (s *Server) runQueued(ctx context.Context, tenantName, id string, body []byte, delivered uint64, settled func()) bool {
	t := s.tenantNamed(tenantName)
	var p placedRun
	if t == nil || !run.ValidID(id) || json.Unmarshal(body, &p) != nil {
		// No node can run it: say so, and take it off the queue.
		s.logger.Error("a run in the cluster's queue cannot be run here: its tenant is not served, or it does not read", "tenant", tenantName, "run", id)
		return true
	}
	if delivered > 1 && t.history != nil {
		// Delivered again: the history says whether it started (then it is never run again)
		// or still waits (given back by a node that had no room, or lost before it began).
		if rec, err := t.history.FindRun(ctx, id); err == nil && rec.Status != store.StatusQueued {
			return s.interruptLost(ctx, t, rec)
		}
	}
	rt, err := t.rt.ViewFor(ctx, p.Who)
	if err != nil {
		t.logger.Error("a queued run's caller cannot run here", "run", id, "err", err)
		return true
	}
	req := p.request(id)
	req.OnEvent = func(run.Event) { settled() } // its first event is its start: it holds a slot
	tr := t.live.trackQueued(ctx, &req, runOwner{p.Who.Caller(), rt.VisibleTo(p.Skill)})
	if cause, ok := s.opts.Cluster.QueuedCancel(ctx, tenantName, id); ok {
		if t.history != nil {
			if rec, err := t.history.FindRun(ctx, id); err == nil && rec.Status.Final() {
				tr.drop() // ended when the cancel was asked (cancelInQueue), its result shared
				return true
			}
		}
		tr.end(rt.EndQueued(ctx, req, p.QueuedAt, run.KindCanceled, "the run was canceled while it waited in the cluster's queue: "+cause))
		return true
	}
	if time.Now().After(p.Deadline) {
		tr.end(rt.EndQueued(ctx, req, p.QueuedAt, run.KindBusy, fmt.Sprintf(
			"the run waited %v in the cluster's queue, its most (the admission's longest wait), and no node had room: try again later",
			p.Deadline.Sub(p.QueuedAt).Round(time.Millisecond))))
		return true
	}
	res, err := rt.Run(tr.ctx, req)
	if tr.started() {
		tr.end(res)
		return true
	}
	// Not admitted: it ends here unless another node may run it.
	switch {
	case ctx.Err() != nil: // this node lost the cluster, or closes: the queue gives it to another
		tr.drop()
		return false
	case tr.ctx.Err() != nil: // a cancel came while this node held it
		res = rt.EndQueued(ctx, req, p.QueuedAt, run.KindCanceled,
			"the run was canceled while it waited in the cluster's queue: "+context.Cause(tr.ctx).Error())
	case errors.Is(err, run.ErrNoRoomNow):
		tr.drop()
		return false
	case res.Error != nil: // refused here as it would be anywhere (a refusal's result is its own)
		res = rt.EndQueued(ctx, req, p.QueuedAt, res.Error.Kind, res.Error.Message)
	default:
		res = rt.EndQueued(ctx, req, p.QueuedAt, run.KindInternal, fmt.Sprintf("the run ended without starting: %v", err))
	}
	tr.end(res)
	return true
}

// interruptLost ends a run delivered again whose start the history has: it started on a node
// that lost it, and is never run twice. While the history still says it runs (under the lost
// node's recorder), it is marked interrupted, and its result shared after its last event;
// false when that cannot be done now (the queue delivers it again).
func (s *Server) interruptLost(ctx context.Context, t *tenant, rec store.Run) bool {
	t.logger.Info("a queued run was delivered again after it started: it is not run twice", "run", rec.ID, "status", rec.Status, "owner", rec.Owner)
	if rec.Status != store.StatusRunning {
		return true // its node finished it, and died before it said so
	}
	ok, err := s.endQueuedRun(ctx, t.name, rec.ID, func(ctx context.Context) (*run.Result, bool, error) {
		return t.rt.InterruptQueued(ctx, rec.ID, rec.Skill, rec.Owner)
	})
	if err != nil {
		t.logger.Error("mark a lost run interrupted", "run", rec.ID, "err", err)
		return false
	}
	if !ok {
		t.logger.Info("a lost run ended before it could be marked interrupted", "run", rec.ID)
	}
	return true
}

// endQueuedRun ends run id of tenant, which came through the cluster's queue, in the history
// with end (a conditional update: ok is false when the record had moved on, and another
// node ends the run), and shares its result after the last event the cluster holds. It reads
// that number first, and fails when it cannot (a result numbered wrong would be taken for a
// copy, and dropped). The result comes after the queued event at least: the first event of
// every queued run, even when it is not stored yet.
func (s *Server) endQueuedRun(ctx context.Context, tenant, id string, end func(context.Context) (*run.Result, bool, error)) (bool, error) {
	cl := s.opts.Cluster
	last, err := cl.LastEvent(ctx, tenant, id)
	if err != nil {
		return false, fmt.Errorf("read its last event: %w", err)
	}
	res, ok, err := end(ctx)
	if !ok || err != nil {
		return ok, err
	}
	data, _ := json.Marshal(run.Event{Type: "result", RunID: id, Result: res})
	cl.PublishEvent(tenant, id, max(last, 1)+1, "result", data)
	return true, nil
}

// placedStatus is where a placed run stands, for its 202.
const placedStatus = store.Status("queued")
