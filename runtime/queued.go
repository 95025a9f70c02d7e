package runtime

import (
	"context"
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
	face := req.Face
	if face == "" {
		face = run.FaceLibrary
	}
	res.DurationMs = float64(time.Since(queuedAt).Microseconds()) / 1000
	visibleTo := rt.VisibleTo(req.Skill)
	if s, ok := rt.lookup(req.Skill); ok {
		res.Version = s.Version()
	}
	res.Digest = req.Digest
	rt.counters.observe("", face, res, false)
	rec := &history.Record{Result: res, Face: face, Caller: req.Who.Caller(), Tenant: rt.cfg.Tenant, VisibleTo: visibleTo, StartedAt: queuedAt}
	recordArgs(rec, req, rt.policy.Load().Runs.RecordArguments)
	rt.recordEnd(ctx, rec)
	rt.logger.Info("run ended in the queue", "skill", req.Skill, "run", res.RunID, "face", face, "caller", req.Who.Caller(), "kind", kind)
	if req.OnEvent != nil {
		req.OnEvent(run.Event{Type: "result", RunID: res.RunID, Result: res})
	}
	return res
}
