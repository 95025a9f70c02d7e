package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/run"
)

// EndQueued ends, without running it, a run that was accepted and named (req.ID) for a
// cluster's queue and must not start: it was canceled while it waited, or waited past its
// deadline. It is recorded as an admitted run's end would be (the history gets its one row, the
// recent runs and metrics count it), and req.OnEvent gets its result event: whoever follows
// the run learns how it ended. kind and message say why, as a refusal's would.
func (rt *Runtime) EndQueued(ctx context.Context, req run.Request, queuedAt time.Time, kind run.ErrorKind, message string) *run.Result {
	res := &run.Result{RunID: req.ID, Skill: req.Skill, Logs: []run.LogEntry{},
		Error: &run.ResultError{Kind: kind, Message: capText(message, maxMessageBytes)}}
	if !run.ValidID(req.ID) {
		res.RunID = newRunID()
	}
	res.DurationMs = float64(time.Since(queuedAt).Microseconds()) / 1000
	res.Settle()
	rec := rt.queuedRecord(req, queuedAt, res)
	rt.counters.observe("", rec.Face, res, false)
	rt.recordEnd(ctx, rec)
	rt.logger.Info("run ended in the queue", "skill", req.Skill, "run", res.RunID, "face", rec.Face, "caller", req.Who.Caller(), "kind", kind)
	if req.OnEvent != nil {
		req.OnEvent(run.Event{Type: "result", RunID: res.RunID, Result: res})
	}
	return res
}

// InterruptQueued ends a run that started on a node of a cluster that then lost it (the node
// died, or was cut off) and that the cluster delivered again: a run is never run twice, since
// skills have side effects. The history's record of it, still running under owner (the lost
// node's recorder), is marked interrupted now, and its result returned, for the caller to
// share; ok is false when the record was no longer running under owner (that node finished
// it, or another node interrupted it first).
func (rt *Runtime) InterruptQueued(ctx context.Context, id, skill, owner string) (res *run.Result, ok bool, err error) {
	in, can := rt.cfg.Recorder.(history.Interrupter)
	if !can {
		return nil, false, fmt.Errorf("runtime: the recorder cannot mark a run interrupted")
	}
	const msg = "the node running it stopped, or lost the cluster, before it finished: it is not run again (a skill may have acted already)"
	if ok, err = in.InterruptRun(context.WithoutCancel(ctx), id, owner, time.Now(), msg); !ok || err != nil {
		return nil, ok, err
	}
	res = &run.Result{RunID: id, Skill: skill, Logs: []run.LogEntry{}, Error: &run.ResultError{Kind: run.KindInterrupted, Message: msg}}
	res.Settle()
	rt.counters.observe("", run.FaceLibrary, res, false)
	rt.logger.Warn("run interrupted: its node lost it", "skill", skill, "run", id, "owner", owner)
	return res, true, nil
}

// CancelQueued ends, canceled for message, a run waiting in a cluster's queue that no node
// holds: the history's record of it, still queued, is ended now, and its result returned for
// the caller to share, so a cancel takes effect at once rather than when a node takes the
// run. ok is false when the record was no longer queued (a node started or ended it first:
// that node answers the cancel), or the recorder cannot keep waiting runs.
func (rt *Runtime) CancelQueued(ctx context.Context, id, skill, message string) (res *run.Result, ok bool, err error) {
	q, can := rt.cfg.Recorder.(history.Queuer)
	if !can {
		return nil, false, nil
	}
	message = capText(message, maxMessageBytes)
	if ok, err = q.CancelQueuedRun(context.WithoutCancel(ctx), id, time.Now(), message); !ok || err != nil {
		return nil, ok, err
	}
	res = &run.Result{RunID: id, Skill: skill, Logs: []run.LogEntry{}, Error: &run.ResultError{Kind: run.KindCanceled, Message: message}}
	res.Settle()
	rt.counters.observe("", run.FaceLibrary, res, false)
	rt.logger.Info("run canceled in the queue", "skill", skill, "run", id)
	return res, true, nil
}

// RecordQueued records run req (named: req.ID), accepted at queuedAt for a cluster's queue, as
// waiting there: every node that shares the history reads it until a node starts it (its
// start replaces the record) or ends it without running (EndQueued). until is when the store
// gives up on it and ends it busy, should no node ever take it. A recorder that cannot keep a
// waiting run (history.Queuer) is not asked; an error is the recorder's, and the run waits
// all the same.
func (rt *Runtime) RecordQueued(ctx context.Context, req run.Request, queuedAt, until time.Time) error {
	if !run.ValidID(req.ID) {
		return fmt.Errorf("runtime: record a queued run: %q is not a run id (name the run in req.ID)", req.ID)
	}
	q, ok := rt.cfg.Recorder.(history.Queuer)
	if !ok {
		return nil
	}
	rec := rt.queuedRecord(req, queuedAt, &run.Result{RunID: req.ID, Skill: req.Skill})
	if err := q.QueueRun(ctx, rec, until); err != nil {
		return fmt.Errorf("runtime: record run %s as queued: %w", req.ID, err)
	}
	return nil
}

// queuedRecord is the history's record of res, the result so far of req, a run accepted for a
// cluster's queue at queuedAt: who asked, through which face, who may see it, the version
// the skill has here, and the arguments as the policy keeps them.
func (rt *Runtime) queuedRecord(req run.Request, queuedAt time.Time, res *run.Result) *history.Record {
	face := req.Face
	if face == "" {
		face = run.FaceLibrary
	}
	if s, ok := rt.lookup(req.Skill); ok {
		res.Version = s.Version()
	}
	res.Digest = req.Digest
	rec := &history.Record{Result: res, Face: face, Caller: req.Who.Caller(), Tenant: rt.cfg.Tenant, VisibleTo: rt.VisibleTo(req.Skill), StartedAt: queuedAt}
	recordArgs(rec, req, rt.policy.Load().Runs.RecordArguments)
	return rec
}
