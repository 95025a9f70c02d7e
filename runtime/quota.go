package runtime

import (
	"fmt"
	"sync"
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

// quota is a Runtime's Quota in force.
type quota struct {
	tenant string
	q      Quota
	rate   *rate.Limiter // nil: no RunsPerMinute

	mu       sync.Mutex
	inflight int
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
func (q *quota) take(skill string, now time.Time) (release func(), _ *run.Error) {
	if q == nil {
		return func() {}, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.q.ConcurrentRuns > 0 && q.inflight >= q.q.ConcurrentRuns {
		e := run.Errorf(run.KindQuotaExceeded, skill, nil, "%s has %d runs in flight, its quota (concurrentRuns %d); try again when one ends",
			q.who(), q.inflight, q.q.ConcurrentRuns)
		e.RetryAfter = time.Second
		return nil, e
	}
	if q.rate != nil {
		r := q.rate.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			e := run.Errorf(run.KindQuotaExceeded, skill, nil, "%s started its %d runs of this minute, its quota (runsPerMinute %d); try again in %s",
				q.who(), q.q.RunsPerMinute, q.q.RunsPerMinute, d.Round(100*time.Millisecond))
			e.RetryAfter = d
			return nil, e
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
