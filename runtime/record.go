package runtime

import (
	"sync"

	"github.com/skillbox-dev/skillbox/history"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// storedRecord is what of r the policy keeps in a store (runs.omitResults, omitLogs,
// maxRecordBytes): r itself when all of it, else a copy without what it leaves out. Past the
// bound the logs go first, then the result, and the copy says it was trimmed.
func storedRecord(r *history.Record, p policy.Runs) *history.Record {
	res := r.Result
	keepResult := !p.OmitResults && res.Result != nil
	keepLogs := !p.OmitLogs && len(res.Logs) > 0
	var resultBytes int64
	if keepResult {
		resultBytes = int64(len(res.Result))
	}
	limit := p.RecordBytes()
	trimmed := false
	if keepLogs && resultBytes+logsCost(res.Logs) > limit {
		keepLogs, trimmed = false, true
	}
	if resultBytes > limit {
		keepResult, trimmed = false, true
	}
	if keepResult == (res.Result != nil) && keepLogs == (len(res.Logs) > 0) {
		return r
	}
	c, cres := *r, *res
	if !keepResult {
		cres.Result = nil
	}
	if !keepLogs {
		cres.Logs = []run.LogEntry{}
	}
	c.Result, c.Trimmed = &cres, r.Trimmed || trimmed
	return &c
}

// logsCost estimates what logs hold: their messages, and 64 bytes each for the rest (time,
// level, source), in memory or as JSON.
func logsCost(logs []run.LogEntry) int64 {
	var n int64
	for _, l := range logs {
		n += int64(len(l.Message)) + 64
	}
	return n
}

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
	n += logsCost(r.Logs)
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
