package runtime

import (
	"sync"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/run"
)

// History bounds the records of recent runs kept in memory. Zero fields are the defaults.
type History struct {
	// MaxRuns is how many runs are remembered (default 1000).
	MaxRuns int
	// MaxBytes bounds what the records hold in all, results and logs included (default 64 MiB):
	// the oldest go first. A record larger than a quarter of it is kept without its result
	// value and logs.
	MaxBytes int64
}

func (h History) withDefaults() History {
	if h.MaxRuns <= 0 {
		h.MaxRuns = 1000
	}
	if h.MaxBytes <= 0 {
		h.MaxBytes = 64 << 20
	}
	return h
}

// recordCost estimates what r holds in memory.
func recordCost(r *history.Record) int64 {
	n := int64(512 + len(r.Result.Result) + len(r.Caller) + len(r.Args))
	if r.Error != nil {
		n += int64(len(r.Error.Message))
	}
	for _, l := range r.Logs {
		n += int64(len(l.Message)) + 64
	}
	for _, list := range [][]string{r.Usage.HostsContacted, r.Usage.FilesRead, r.Usage.FilesWritten, r.Usage.Denied} {
		for _, s := range list {
			n += int64(len(s)) + 16
		}
	}
	return n
}

// recentRuns is a bounded FIFO of records by run id: the history a runtime keeps in memory.
type recentRuns struct {
	cfg   History
	mu    sync.Mutex
	byID  map[string]*history.Record
	order []*history.Record
	bytes int64
	costs map[*history.Record]int64
}

func newRecentRuns(cfg History) *recentRuns {
	return &recentRuns{cfg: cfg, byID: map[string]*history.Record{}, costs: map[*history.Record]int64{}}
}

func (h *recentRuns) add(r *history.Record) {
	cost := recordCost(r)
	if cost > h.cfg.MaxBytes/4 {
		trimmed := *r.Result
		trimmed.Result, trimmed.Logs = nil, []run.LogEntry{}
		r = &history.Record{Result: &trimmed, Face: r.Face, Caller: r.Caller, Tenant: r.Tenant, VisibleTo: r.VisibleTo, StartedAt: r.StartedAt, ArgsSHA256: r.ArgsSHA256, Trimmed: true}
		cost = recordCost(r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byID[r.RunID] = r
	h.order = append(h.order, r)
	h.costs[r] = cost
	h.bytes += cost
	for len(h.order) > h.cfg.MaxRuns || h.bytes > h.cfg.MaxBytes {
		old := h.order[0]
		h.order[0] = nil
		h.order = h.order[1:]
		h.bytes -= h.costs[old]
		delete(h.costs, old)
		if h.byID[old.RunID] == old {
			delete(h.byID, old.RunID)
		}
	}
}

func (h *recentRuns) get(id string) (*history.Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.byID[id]
	return r, ok
}
