package hostfuncs

import (
	"net/http"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/run"
)

// Call is the state of one run that its host functions share: the grant, and what the run did.
// It is safe for concurrent use (a guest is single-threaded, but stdout capture and the runtime
// read it from other goroutines).
type Call struct {
	Grant *Grant
	// OnLog, when set, is called for every log entry kept (for streaming run events). It must not
	// block for long: it runs on the guest's call path.
	OnLog func(run.LogEntry)
	// Ask, when set, puts what the grant lacks and its Askable lists to a person (ask.go); nil
	// asks nothing, and every refusal is final.
	Ask Asker

	mu      sync.Mutex
	usage   tally
	hosts   map[string]bool
	logs    []run.LogEntry
	logSize int64
	dropped int
	fault   error
	// bounded holds, per bounded mount (by its Path), the size of each file written under it.
	bounded map[string]map[string]int64
	// placeholders are this run's placeholders of its secrets, by name (placeholder.go).
	placeholders map[string]string
	// allowed is what a person allowed the run beyond its grant (ask.go).
	allowed allowance

	httpClient *http.Client
}

// NewCall returns the state of a run with grant g.
func NewCall(g *Grant) *Call { return &Call{Grant: g} }

// tally is what a run has used so far: the run's Usage (run.Usage, what its result reports), and
// the counts the limits are checked against.
type tally struct {
	run.Usage
	writes int // files written (or being written), against maxWrites
	// boundedBytes is the part of BytesWritten written under mounts with bounds of their own,
	// which maxWriteBytes does not count.
	boundedBytes int64
	refused      int // DENIED answers; env lookups of ungranted names are noted in Denied, not counted
}

// Usage returns a copy of what the run has used so far (the memory it peaked at is the runtime's
// to fill).
func (c *Call) Usage() run.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.usage.Usage
	u.HostsContacted = make([]string, 0, len(c.hosts))
	for h := range c.hosts {
		u.HostsContacted = append(u.HostsContacted, h)
	}
	sort.Strings(u.HostsContacted)
	u.FilesRead = append([]string(nil), u.FilesRead...)
	u.FilesWritten = append([]string(nil), u.FilesWritten...)
	u.Denied = append([]string(nil), u.Denied...)
	return u
}

// Logs returns the kept log entries and how many were dropped past the log budget.
func (c *Call) Logs() ([]run.LogEntry, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]run.LogEntry(nil), c.logs...), c.dropped
}

// Fault returns the guest fault that stopped the run, if any: an ABI adapter records one (with
// SetFault) when a module hands the host something no answer could make sense of, such as an
// offset that is no memory block, and stops the run.
func (c *Call) Fault() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fault
}

// SetFault records why the guest broke the ABI; the first one recorded stays.
func (c *Call) SetFault(err error) {
	c.mu.Lock()
	if c.fault == nil {
		c.fault = err
	}
	c.mu.Unlock()
}

// deny records a refusal the guest was answered DENIED.
func (c *Call) deny(what string) {
	c.mu.Lock()
	c.usage.refused++
	c.note(what)
	c.mu.Unlock()
}

// Bounds on what a run's Usage keeps of what the guest named: it goes into the run's result,
// its record and every face's answer.
const (
	maxDenied      = 100 // Usage.Denied entries
	maxNoteBytes   = 512 // bytes of one Denied entry
	maxUsageList   = 256 // HostsContacted, FilesRead, FilesWritten entries each
	truncationMark = "…"
)

// note adds to Usage.Denied without counting a refusal (c.mu held).
func (c *Call) note(what string) {
	if len(c.usage.Denied) >= maxDenied {
		return
	}
	if len(what) > maxNoteBytes {
		cut := maxNoteBytes
		for cut > 0 && !utf8.RuneStart(what[cut]) {
			cut--
		}
		what = what[:cut] + truncationMark
	}
	c.usage.Denied = append(c.usage.Denied, what)
}

// Refused reports how many calls were answered DENIED: a skill that then fails most likely
// failed for want of a permission.
func (c *Call) Refused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage.refused
}

func (c *Call) update(f func(u *tally)) {
	c.mu.Lock()
	f(&c.usage)
	c.mu.Unlock()
}

func (c *Call) contacted(hostport string) {
	c.mu.Lock()
	if c.hosts == nil {
		c.hosts = map[string]bool{} // on first contact: most runs contact no one
	}
	if len(c.hosts) < maxUsageList {
		c.hosts[hostport] = true
	}
	c.mu.Unlock()
}

func appendOnce(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	if len(list) >= maxUsageList {
		return list
	}
	return append(list, s)
}
