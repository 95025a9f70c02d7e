package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention says which finished runs of one tenant to keep. Zero fields are the defaults;
// [Unlimited] keeps everything by that measure. Each tenant's runs are counted and aged apart
// (Store.PruneRuns prunes its store's tenant alone), so a busy tenant never pushes a quiet
// one's runs out.
type Retention struct {
	// MaxRuns is how many finished runs of the tenant to keep, the newest (default 100,000).
	MaxRuns int
	// MaxAge is how long to keep a finished run after it started (default 30 days).
	MaxAge time.Duration
}

// Unlimited, as a Retention field, turns that bound off.
const Unlimited = -1

// The defaults of a Retention's zero fields.
const (
	DefaultMaxRuns = 100_000
	DefaultMaxAge  = 30 * 24 * time.Hour
)

// WithDefaults fills r's zero fields.
func (r Retention) WithDefaults() Retention {
	if r.MaxRuns == 0 {
		r.MaxRuns = DefaultMaxRuns
	}
	if r.MaxAge == 0 {
		r.MaxAge = DefaultMaxAge
	}
	return r
}

// Or is r with each zero field taken from fallback: a tenant's own retention over the
// server's, so a tenant that bounds only its count keeps the server's age.
func (r Retention) Or(fallback Retention) Retention {
	if r.MaxRuns == 0 {
		r.MaxRuns = fallback.MaxRuns
	}
	if r.MaxAge == 0 {
		r.MaxAge = fallback.MaxAge
	}
	return r
}

// MinMaxAge is the shortest MaxAge ParseMaxAge reads: a run kept for less is pruned before
// anyone could read it, which is recording nothing, and that should be asked for as such.
const MinMaxAge = time.Minute

// ErrMaxAgeTooShort is what ParseMaxAge's error is for an age under [MinMaxAge].
var ErrMaxAgeTooShort = fmt.Errorf("less than %v, the shortest retention: a run would be pruned before anyone could read it", MinMaxAge)

// ParseMaxRuns reads a Retention.MaxRuns as an operator writes it, on the command line
// (--keep-runs) or in a tenants file (maxRuns): a count of runs, 0 for the default, or
// "unlimited". It is the one reader of that value, so both say the same thing.
func ParseMaxRuns(s string) (int, error) {
	if s == "unlimited" {
		return Unlimited, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, errors.New("give a number of runs, 0 or more, or unlimited")
	}
	return n, nil
}

// ParseMaxAge reads a Retention.MaxAge as an operator writes it, on the command line
// (--keep-runs-for) or in a tenants file (maxAge): an age as [ParseAge] reads it (72h, 90d),
// 0 for the default, or "unlimited". An age under [MinMaxAge] is an error that is
// [ErrMaxAgeTooShort].
func ParseMaxAge(s string) (time.Duration, error) {
	if s == "unlimited" {
		return Unlimited, nil
	}
	d, err := ParseAge(s)
	switch {
	case err != nil || d < 0:
		return 0, errors.New("give a duration such as 72h or 90d, 0 or more, or unlimited")
	case d > 0 && d < MinMaxAge:
		return 0, fmt.Errorf("%v is %w", d, ErrMaxAgeTooShort)
	}
	return d, nil
}

// maxAgeDays bounds the days ParseAge reads, well inside a time.Duration (about 292 years).
const maxAgeDays = 100 * 365

// ParseAge reads an age as people say it: Go's duration (90m, 1h30m), or with a leading count
// of days (7d, 1d12h). Retention reads it, and so does the CLI's skillbox runs --since.
func ParseAge(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > maxAgeDays {
			return 0, fmt.Errorf("%q: not a duration", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return days + d, nil
}
