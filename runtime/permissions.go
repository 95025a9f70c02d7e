package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/permit"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/permits"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// A run's permission requests: when a call is refused for something the policy's ask section
// lets a person grant, and the run's face can reach a person (run.Request.Asker), the run waits,
// holding its slot, for an answer: from the face's Asker (an MCP elicitation, a terminal prompt)
// or through AnswerPermission (the HTTP API, the console), whichever comes first. A permit (an
// earlier answer "allow for a time", permit.Store) answers without asking. Every request and
// what became of it goes into the run's Usage.Asked, and so into its record.

// asking is one run's side of its permission requests.
type asking struct {
	rt     *Runtime
	ask    policy.Ask // with defaults
	q      run.PermissionRequest
	face   run.Asker
	emit   emitter
	mu     sync.Mutex
	asked  []run.Asked
	opened int
}

// newAsking returns the asking of a run of s for req, nil when the policy asks nothing. When the
// face reaches nobody (req.Asker nil) nobody is asked, but a permit still answers: a person's
// "allow for a time" holds whichever face the caller's next run comes through.
func (rt *Runtime) newAsking(s *registry.Skill, req *run.Request, res *run.Result, emit emitter) *asking {
	p := rt.policy.Load()
	if p == nil || !p.Ask.Enabled() {
		return nil
	}
	a := p.Ask.WithDefaults()
	scope, answeredBy := "caller", "admin"
	if a.Tenant {
		scope = "tenant"
	}
	if a.CallerAnswers {
		answeredBy = "caller"
	}
	return &asking{rt: rt, ask: a, face: req.Asker, emit: emit, q: run.PermissionRequest{
		RunID: res.RunID, Skill: s.ID(), Digest: s.State().Digest, Caller: req.Who.Caller(),
		Scope: scope, AnsweredBy: answeredBy, MaxGrantSeconds: int64(a.MaxGrant / time.Second)}}
}

// hostAsker is the host functions' Asker of the run.
func (k *asking) hostAsker() hostfuncs.Asker {
	if k == nil {
		return nil
	}
	return k.permit
}

// records returns what became of the run's requests.
func (k *asking) records() []run.Asked {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]run.Asked(nil), k.asked...)
}

func (k *asking) record(a run.Asked) {
	k.mu.Lock()
	k.asked = append(k.asked, a)
	k.mu.Unlock()
}

// permit decides p for the run: a permit, else a person's answer within the policy's bounds,
// else no.
func (k *asking) permit(ctx context.Context, p hostfuncs.Permission) bool {
	now := time.Now()
	q := k.q
	q.Kind, q.Target, q.Access = p.Kind, p.Target, p.Access
	q.AskedAt = now
	root := k.rt.root()
	desk := &root.permits
	if pm, ok := root.findPermit(ctx, q, now); ok {
		until := pm.Until
		k.record(run.Asked{Request: q, Outcome: run.OutcomeGranted, By: pm.By, At: now, Until: &until})
		return true
	}
	if k.face == nil { // nobody to ask: refused as without asking, and nothing to record
		return false
	}
	k.mu.Lock()
	over := k.opened >= k.ask.MaxPerRun
	if !over {
		k.opened++
	}
	k.mu.Unlock()
	if over {
		k.record(run.Asked{Request: q, Outcome: run.OutcomeRefused, At: now})
		return false
	}
	q.ID = permits.NewID()
	q.Deadline = now.Add(k.ask.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(q.Deadline) {
		q.Deadline = d
	}
	if err := desk.Open(q, permits.Limits{MaxPending: k.ask.MaxPending}); err != nil {
		k.rt.logger.Warn("permission request refused unasked", "run", q.RunID, "skill", q.Skill, "kind", q.Kind, "target", q.Target, "err", err)
		k.record(run.Asked{Request: q, Outcome: run.OutcomeRefused, At: now})
		return false
	}
	wctx, cancel := context.WithDeadline(ctx, q.Deadline)
	defer cancel()
	// The face asks its person in its own goroutine; its answer goes through the desk like any
	// other, so the first answer wins. It ends with the wait.
	go func() {
		a, err := k.face.Ask(wctx, q)
		if err == nil {
			err = k.answer(q, a, q.Caller)
		}
		if err != nil && wctx.Err() == nil {
			// The face could not ask, or its person's answer is not one: the wait ends now
			// with no answer, as if there had been no one to ask.
			k.rt.logger.Info("permission request unanswered by the face", "run", q.RunID, "request", q.ID, "err", err)
			desk.GiveUp(q.RunID, q.ID)
		}
	}()
	// The status first: whoever reads the request reads a run that waits.
	k.emit.send(run.Event{Type: "status", Status: "waiting"})
	k.emit.send(run.Event{Type: "permission_request", Permission: &q})
	a, by, ok := desk.Wait(wctx, q.ID)
	end := time.Now()
	rec := run.Asked{Request: q, Outcome: run.OutcomeNoAnswer, At: end}
	allowed := false
	if ok {
		rec.By = by
		switch a.Decision {
		case run.AllowOnce:
			rec.Outcome, allowed = run.OutcomeAllowedOnce, true
		case run.AllowFor:
			until := end.Add(time.Duration(a.ForSeconds) * time.Second)
			rec.Outcome, rec.Until, allowed = run.OutcomeAllowedFor, &until, true
			caller := q.Caller
			if k.ask.Tenant {
				caller = ""
			}
			root.keepPermit(ctx, permit.Permit{ID: permit.NewID(), Skill: q.Skill, Digest: q.Digest, Caller: caller,
				Kind: q.Kind, Target: q.Target, Access: q.Access, At: end, Until: until, By: by, RunID: q.RunID, RequestID: q.ID})
		default:
			rec.Outcome = run.OutcomeDenied
		}
	}
	k.record(rec)
	k.rt.logger.Info("permission request ended", "run", q.RunID, "request", q.ID, "skill", q.Skill,
		"kind", q.Kind, "target", q.Target, "outcome", rec.Outcome, "by", rec.By)
	k.emit.send(run.Event{Type: "permission_answer", Answered: &rec})
	k.emit.send(run.Event{Type: "status", Status: "running"})
	return allowed
}

// permitTimeout bounds a lookup or a write of a permit: the run waits on it.
const permitTimeout = 5 * time.Second

// root is the Runtime whose permission requests and permits rt's are: a user's Runtime shares
// its tenant's, so the tenant's admins see and answer them.
func (rt *Runtime) root() *Runtime {
	if rt.parent != nil {
		return rt.parent
	}
	return rt
}

// findPermit returns the permit in force that covers q at now. A store that cannot say is no
// permit: the person is asked, as if there were none.
func (rt *Runtime) findPermit(ctx context.Context, q run.PermissionRequest, now time.Time) (permit.Permit, bool) {
	ctx, cancel := context.WithTimeout(ctx, permitTimeout)
	defer cancel()
	p, err := rt.lasting.FindPermit(ctx, permit.Query{Skill: q.Skill, Digest: q.Digest, Caller: q.Caller,
		Kind: q.Kind, Target: q.Target, Access: q.Access, At: now})
	if err != nil && !errors.Is(err, permit.ErrNotFound) {
		rt.logger.Error("find a permit; the person is asked", "run", q.RunID, "skill", q.Skill, "err", err)
	}
	return p, err == nil
}

// keepPermit keeps p. A store that cannot take it loses it: the run goes on with the person's
// answer, and the next run asks again.
func (rt *Runtime) keepPermit(ctx context.Context, p permit.Permit) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), permitTimeout)
	defer cancel()
	if err := rt.lasting.AddPermit(ctx, p); err != nil {
		rt.logger.Error("keep a permit; later runs will ask again", "run", p.RunID, "skill", p.Skill, "permit", p.ID, "err", err)
	}
}

// answer checks a and hands it to q's wait.
func (k *asking) answer(q run.PermissionRequest, a run.PermissionAnswer, by string) error {
	if err := checkAnswer(a, k.ask.MaxGrant); err != nil {
		return err
	}
	return k.rt.root().permits.Answer(q.RunID, q.ID, a, by)
}

// checkAnswer reports whether a is a decision, and its time within maxGrant.
func checkAnswer(a run.PermissionAnswer, maxGrant time.Duration) error {
	switch a.Decision {
	case run.AllowOnce, run.Deny:
		if a.ForSeconds != 0 {
			return fmt.Errorf("%w: for_seconds goes only with the decision %q", run.ErrBadAnswer, run.AllowFor)
		}
	case run.AllowFor:
		if max := int64(maxGrant / time.Second); a.ForSeconds < 1 || a.ForSeconds > max {
			return fmt.Errorf("%w: for_seconds must be 1 to %d (the policy's ask.maxGrantMinutes), not %d", run.ErrBadAnswer, max, a.ForSeconds)
		}
	default:
		return fmt.Errorf("%w: decision %q: want %q, %q or %q", run.ErrBadAnswer, a.Decision, run.AllowOnce, run.AllowFor, run.Deny)
	}
	return nil
}

// AnswerPermission answers the permission request reqID of run runID as who: an admin may, and
// the run's own caller when the policy's ask section says answeredBy: caller. It is
// run.ErrNoRequest when no such request waits for the run (or who may not see it),
// run.ErrRequestOver when it ended (answered, timed out, or its run ended), run.ErrMayNotAnswer
// when who may not grant it, and run.ErrBadAnswer when a is not an answer.
func (rt *Runtime) AnswerPermission(ctx context.Context, who access.Principal, runID, reqID string, a run.PermissionAnswer) error {
	desk := &rt.root().permits
	q, err := desk.Request(runID, reqID)
	if err != nil {
		return err
	}
	ask := rt.policy.Load().Ask.WithDefaults()
	if err := mayAnswer(who, q, ask); err != nil {
		return err
	}
	if err := checkAnswer(a, ask.MaxGrant); err != nil {
		return err
	}
	return desk.Answer(runID, reqID, a, who.Caller())
}

// mayAnswer decides whether who may answer q: an admin may; the run's caller may when the
// policy says so, with a runner key; anyone else may not.
func mayAnswer(who access.Principal, q run.PermissionRequest, ask policy.Ask) error {
	switch {
	case who.Role >= access.RoleAdmin:
		return nil
	case who.Caller() != q.Caller:
		// Not hidden as if there were none: the request's ids came from the run's stream, which
		// the key may read.
		return fmt.Errorf("%w: only an admin, or the run's own caller when the policy says so, answers it", run.ErrMayNotAnswer)
	case !ask.CallerAnswers:
		return fmt.Errorf("%w: the policy lets only an admin answer (ask.answeredBy: admin)", run.ErrMayNotAnswer)
	case who.Role < access.RoleRunner:
		return fmt.Errorf("%w: a %s key may not grant; the run's caller needs a runner key", run.ErrMayNotAnswer, who.Role)
	}
	return nil
}

// PermissionRequests returns the permission requests waiting for an answer that who may see: an
// admin every one, anyone else those of their own runs. Oldest first.
func (rt *Runtime) PermissionRequests(who access.Principal) []run.PermissionRequest {
	out := rt.root().permits.Pending(func(q run.PermissionRequest) bool {
		return who.Role >= access.RoleAdmin || who.Caller() == q.Caller
	})
	if out == nil {
		out = []run.PermissionRequest{}
	}
	return out
}

// maxPermitsListed bounds Permits.
const maxPermitsListed = 1000

// Permits returns the permits in force that who may see, newest first: an admin every one of the
// tenant, anyone else those that cover their own runs (theirs, and the tenant's).
func (rt *Runtime) Permits(ctx context.Context, who access.Principal) ([]permit.Permit, error) {
	ctx, cancel := context.WithTimeout(ctx, permitTimeout)
	defer cancel()
	all, err := rt.root().lasting.ListPermits(ctx, time.Now(), maxPermitsListed)
	if err != nil {
		return nil, fmt.Errorf("list the permits: %w", err)
	}
	out := []permit.Permit{}
	for _, p := range all {
		if who.Role >= access.RoleAdmin || p.Caller == "" || p.Caller == who.Caller() {
			out = append(out, p)
		}
	}
	return out, nil
}

// RevokePermit ends permit id now, as who: an admin may, and nobody else. It is
// permit.ErrNotFound when no such permit is in force, run.ErrMayNotAnswer when who may not.
func (rt *Runtime) RevokePermit(ctx context.Context, who access.Principal, id string) error {
	if who.Role < access.RoleAdmin {
		return fmt.Errorf("%w: only an admin revokes a permit; %q has %s", run.ErrMayNotAnswer, who.Key, who.Role)
	}
	ctx, cancel := context.WithTimeout(ctx, permitTimeout)
	defer cancel()
	if err := rt.root().lasting.RevokePermit(ctx, id, who.Caller(), time.Now()); err != nil {
		return err
	}
	rt.logger.Info("permit revoked", "permit", id, "by", who.Caller())
	return nil
}
