package skillboxtest

// Limits are the per-run quotas the host enforces on host calls. A zero field takes the
// host's default (docs/abi.md §5), as an unset field of a manifest's limits does; there is
// no "unlimited".
type Limits struct {
	MaxFetches    int   // fetches per run; default 16
	MaxFetchBytes int64 // one response body, and one request body; default 4 MiB
	MaxFileBytes  int64 // one file read; default 8 MiB
	MaxWriteBytes int64 // bytes written in all; default 8 MiB
	MaxLogBytes   int64 // log budget, each line costing its length plus 64; default 64 KiB
}

// Bounds of the ABI that no manifest changes.
const (
	maxNameBytes = 256  // an environment variable's name
	maxPathBytes = 4096 // a virtual path
	maxPathDepth = 32   // segments of a virtual path
	maxWrites    = 256  // files written per run
	logOverhead  = 64   // what each log line costs beyond its text
)

// WithLimits sets the run's quotas; zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(h *Host) { h.limits = l }
}

func (l Limits) withDefaults() Limits {
	const mib = 1 << 20
	if l.MaxFetches <= 0 {
		l.MaxFetches = 16
	}
	if l.MaxFetchBytes <= 0 {
		l.MaxFetchBytes = 4 * mib
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 8 * mib
	}
	if l.MaxWriteBytes <= 0 {
		l.MaxWriteBytes = 8 * mib
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = 64 << 10
	}
	return l
}
