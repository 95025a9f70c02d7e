package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillbox-dev/skillbox/run"
	"golang.org/x/time/rate"
)

// Quota bounds one tenant's runs on top of the admission every run passes. The admission bounds
// the host for everyone together and queues what does not fit; a quota keeps one tenant from
// taking all of it: a run past its tenant's quota is refused at once, kind quota_exceeded, with
// RetryAfter, instead of queuing ahead of other tenants' runs. Zero fields bound nothing.
type Quota struct {
	// ConcurrentRuns is how many of the tenant's runs may be in flight at once, waiting for
	// admission included.
	ConcurrentRuns int `json:"concurrentRuns,omitempty" yaml:"concurrentRuns"`
	// RunsPerMinute is how many runs the tenant may start in a minute: a bucket of that many,
	// refilled evenly (one each minute/RunsPerMinute), so a burst of RunsPerMinute is allowed
	// after a quiet minute and the long-run rate is RunsPerMinute.
	RunsPerMinute int `json:"runsPerMinute,omitempty" yaml:"runsPerMinute"`
}

// check refuses negative quotas: a typo must not read as "unbounded".
func (q Quota) check() error {
	if q.ConcurrentRuns < 0 || q.RunsPerMinute < 0 {
		return fmt.Errorf("runtime: Quota: concurrentRuns %d, runsPerMinute %d: a quota is 0 (none) or more", q.ConcurrentRuns, q.RunsPerMinute)
	}
	return nil
}

// SharedQuota holds a tenant's Quota across the replicas of one Skillbox, so that however its
// runs are spread over them, its concurrentRuns and runsPerMinute hold for all of them
// together. The cluster's *cluster.Node implements it; see ShareQuota.
type SharedQuota interface {
	// TakeQuota counts one run of tenant, as token (unique to the run), against at most
	// concurrentRuns held at once and runsPerMinute started in a minute (0: no bound), or
	// refuses it: refusal "concurrent" (held is how many are), or "rate" (wait is how long
	// until one may start).
	TakeQuota(ctx context.Context, tenant, token string, concurrentRuns, runsPerMinute int, now time.Time) (refusal string, held int, wait time.Duration, err error)
	// ReleaseQuota gives back a token TakeQuota took.
	ReleaseQuota(ctx context.Context, tenant, token string) error
}

// sharedQuotaWait bounds what a run waits to take or give back its share of a shared quota.
const sharedQuotaWait = 2 * time.Second

// quota is a Runtime's Quota in force.
type quota struct {
	tenant string
	q      Quota
	rate   *rate.Limiter // nil: no RunsPerMinute
	// shared, when set, holds the quota instead, across replicas (ShareQuota).
	shared atomic.Pointer[SharedQuota]

	mu       sync.Mutex
	inflight int
}

// Quota is the quota rt's tenant's runs are bound by (Config.Quota; a user's view has its
// tenant's), for an operator to read; the zero Quota is none.
func (rt *Runtime) Quota() Quota {
	if rt.parent != nil {
		return rt.parent.cfg.Quota
	}
	return rt.cfg.Quota
}

// ShareQuota makes rt's tenant's Quota hold across the replicas sq connects, instead of in this
// process alone. A run whose share cannot be read within sharedQuotaWait (the cluster is away)
// is refused busy, not let through: a quota is a promise to the other tenants. A Runtime with no
// Quota has nothing to share. Call it once, before serving, on a tenant's Runtime.
func (rt *Runtime) ShareQuota(sq SharedQuota) error {
	switch {
	case rt.parent != nil:
		return errors.New("runtime: ShareQuota is for a tenant's Runtime, not a user's view")
	case sq == nil:
		return errors.New("runtime: ShareQuota needs a SharedQuota")
	}
	if rt.quota != nil {
		rt.quota.shared.Store(&sq)
	}
	return nil
}

// takeShared is take for a quota shared across replicas.
func (q *quota) takeShared(ctx context.Context, sq SharedQuota, skill string, now time.Time) (release func(), _ *run.Error) {
	tok := "q" + newRunID()[len("run_"):]
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedQuotaWait)
	defer cancel()
	refusal, held, wait, err := sq.TakeQuota(ctx, q.tenant, tok, q.q.ConcurrentRuns, q.q.RunsPerMinute, now)
	switch {
	case err != nil:
		e := run.Errorf(run.KindBusy, skill, err, "%s's quota, held across the cluster, cannot be read now: try again", q.who())
		e.RetryAfter = time.Second
		return nil, e
	case refusal == "concurrent":
		return nil, q.concurrentRefusal(skill, held)
	case refusal != "":
		return nil, q.rateRefusal(skill, wait)
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.Background(), sharedQuotaWait)
		defer cancel()
		_ = sq.ReleaseQuota(rctx, q.tenant, tok) // one lost is dropped at this node's next take
	}, nil
}

// concurrentRefusal is the refusal of a run past ConcurrentRuns, held being the runs in flight.
func (q *quota) concurrentRefusal(skill string, held int) *run.Error {
	e := run.Errorf(run.KindQuotaExceeded, skill, nil, "%s has %d runs in flight, its quota (concurrentRuns %d); try again when one ends",
		q.who(), held, q.q.ConcurrentRuns)
	e.RetryAfter = time.Second
	return e
}

// rateRefusal is the refusal of a run past RunsPerMinute, one starting after wait.
func (q *quota) rateRefusal(skill string, wait time.Duration) *run.Error {
	e := run.Errorf(run.KindQuotaExceeded, skill, nil, "%s started its %d runs of this minute, its quota (runsPerMinute %d); try again in %s",
		q.who(), q.q.RunsPerMinute, q.q.RunsPerMinute, wait.Round(100*time.Millisecond))
	e.RetryAfter = wait
	return e
}

// newQuota returns nil for a zero Quota: a run then pays nothing for it.
func newQuota(tenant string, q Quota) *quota {
	if q == (Quota{}) {
		return nil
	}
	out := &quota{tenant: tenant, q: q}
	if q.RunsPerMinute > 0 {
		out.rate = rate.NewLimiter(rate.Every(time.Minute/time.Duration(q.RunsPerMinute)), q.RunsPerMinute)
	}
	return out
}

// take counts a run against the quota, or refuses it. A run it lets through must call release
// when it ends. A run refused for concurrency costs no token of the rate.
func (q *quota) take(ctx context.Context, skill string, now time.Time) (release func(), _ *run.Error) {
	if q == nil {
		return func() {}, nil
	}
	if sq := q.shared.Load(); sq != nil {
		return q.takeShared(ctx, *sq, skill, now)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.q.ConcurrentRuns > 0 && q.inflight >= q.q.ConcurrentRuns {
		return nil, q.concurrentRefusal(skill, q.inflight)
	}
	if q.rate != nil {
		r := q.rate.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			return nil, q.rateRefusal(skill, d)
		}
	}
	q.inflight++
	return q.release, nil
}

// who names whose quota it is, for a refusal's message (only then: a run let through pays
// nothing for it).
func (q *quota) who() string {
	if q.tenant == "" {
		return "this runtime"
	}
	return fmt.Sprintf("tenant %q", q.tenant)
}

func (q *quota) release() {
	q.mu.Lock()
	q.inflight--
	q.mu.Unlock()
}
