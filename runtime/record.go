package runtime

import (
	"encoding/json"
	"sync"
	"time"

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

// Record is a finished run as the runtime remembers it.
type Record struct {
	*run.Result
	Face   run.Face `json:"face"`
	Caller string   `json:"caller,omitempty"`
	// Tenant is the tenant of the Runtime that ran it (Config.Tenant), "" for none.
	Tenant string `json:"tenant,omitempty"`
	// VisibleTo is the user alone who may see the run, with the tenant's admins (see Sees):
	// the user of a run of a skill of their own (VisibilityUser). "" is the whole tenant.
	VisibleTo string    `json:"visible_to,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// Args are the run's arguments (a program's: its argv and stdin), when the policy keeps them
	// (see RunsPolicy); ArgsSHA256 is the hex sha256 of them, always.
	Args       json.RawMessage `json:"args,omitempty"`
	ArgsSHA256 string          `json:"args_sha256,omitempty"`
	// Trimmed is set when the record was too large to keep whole: its result value and logs
	// were dropped.
	Trimmed bool `json:"trimmed,omitempty"`
}

// recordCost estimates what r holds in memory.
func recordCost(r *Record) int64 {
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

// history is a bounded FIFO of records by run id.
type history struct {
	cfg   History
	mu    sync.Mutex
	byID  map[string]*Record
	order []*Record
	bytes int64
	costs map[*Record]int64
}

func newHistory(cfg History) *history {
	return &history{cfg: cfg, byID: map[string]*Record{}, costs: map[*Record]int64{}}
}

func (h *history) add(r *Record) {
	cost := recordCost(r)
	if cost > h.cfg.MaxBytes/4 {
		trimmed := *r.Result
		trimmed.Result, trimmed.Logs = nil, []run.LogEntry{}
		r = &Record{Result: &trimmed, Face: r.Face, Caller: r.Caller, Tenant: r.Tenant, VisibleTo: r.VisibleTo, StartedAt: r.StartedAt, ArgsSHA256: r.ArgsSHA256, Trimmed: true}
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

func (h *history) get(id string) (*Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.byID[id]
	return r, ok
}
