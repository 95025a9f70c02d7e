package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/run"
)

// LiveRunOptions bound what a server holds of the runs it serves as resources: the runs in flight
// (asynchronous ones, and synchronous ones a second client may watch or cancel) and, for a while,
// the events of the ones that finished. Zero values are the documented defaults; none of them is
// unlimited.
type LiveRunOptions struct {
	// MaxAsync bounds the asynchronous runs (POST ...runs?async=true) in flight at once (default
	// 64); past it such a request is 429 with Retry-After. The runtime's admission is the real
	// limit on runs; this bounds the memory held for runs nobody is waiting on.
	MaxAsync int
	// MaxWatched bounds the synchronous runs in flight whose events and cancellation are kept
	// (default 256). A synchronous run past it still runs and answers its client; it cannot be
	// watched from GET /v1/runs/{id}/events or canceled from POST /v1/runs/{id}/cancel.
	MaxWatched int
	// MaxEvents and MaxEventBytes bound the events kept for one run other than its status
	// events and its result (its logs, its files; default 1000 events and 256 KiB). Past either,
	// the run's further such events are dropped, and one event of type "dropped" says so where
	// they start; the status events and the result event are always kept (the result carries
	// the logs the runtime kept, within the skill's log budget). What the runs in flight hold is
	// then at most (MaxAsync + MaxWatched) × MaxEventBytes, plus their results.
	MaxEvents     int
	MaxEventBytes int64
	// Keep is how long a finished run's events stay (default 5 minutes); MaxFinished and
	// MaxFinishedBytes bound how many finished runs and how many bytes of their events stay
	// (default 256 runs, 64 MiB), the oldest dropped first. After that, the events endpoint
	// answers the run's result alone, from the runtime's recent runs, or 404.
	Keep             time.Duration
	MaxFinished      int
	MaxFinishedBytes int64

	// clock, when set, replaces time.Now: a test moves Keep's time by hand instead of sleeping.
	clock func() time.Time
}

func (o LiveRunOptions) withDefaults() (LiveRunOptions, error) {
	if o.MaxAsync < 0 || o.MaxWatched < 0 || o.MaxEvents < 0 || o.MaxEventBytes < 0 || o.Keep < 0 ||
		o.MaxFinished < 0 || o.MaxFinishedBytes < 0 {
		return o, errors.New("server: LiveRuns limits must not be negative (zero is the default)")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxAsync, 64)
	def(&o.MaxWatched, 256)
	def(&o.MaxEvents, 1000)
	def64(&o.MaxEventBytes, 256<<10)
	def(&o.MaxFinished, 256)
	def64(&o.MaxFinishedBytes, 64<<20)
	if o.Keep == 0 {
		o.Keep = 5 * time.Minute
	}
	return o, nil
}

// liveRuns is the registry of the runs this server holds as resources: each run in flight that
// it tracks (with the cancel of its context) and the finished ones it still keeps, by run id.
// Every part of it is bounded (see LiveRunOptions); finished runs are dropped lazily, on the
// next use of the registry, so it needs no goroutine of its own.
type liveRuns struct {
	opts LiveRunOptions
	now  func() time.Time
	// share, when set, hands each event kept to the cluster, with its number (Server.shareEvents).
	share func(id string, n int, k keptEvent)

	mu       sync.Mutex
	runs     map[string]*liveRun
	async    int        // asynchronous runs started and not yet returned (reserve/unreserve)
	watched  int        // synchronous runs tracked and not yet finished
	finished []*liveRun // in the order they finished
	keptCost int64      // what the finished ones hold
	placed   []*liveRun // runs queued for the cluster, in the order they were (addPlaced)
}

func newLiveRuns(o LiveRunOptions) (*liveRuns, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	now := time.Now
	if o.clock != nil {
		now = o.clock
	}
	return &liveRuns{opts: o, now: now, runs: map[string]*liveRun{}}, nil
}

// reserve takes a place for an asynchronous run, or reports false when all MaxAsync are taken.
func (b *liveRuns) reserve() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.async >= b.opts.MaxAsync {
		return false
	}
	b.async++
	return true
}

// unreserve gives back what reserve took, once the run has returned.
func (b *liveRuns) unreserve() {
	b.mu.Lock()
	b.async--
	b.mu.Unlock()
}

// tracking is one run a face tracks, from before the runtime admits it until it returns.
type tracking struct {
	// ctx is the context to run with: the caller's, cancelable with a cause (cancelFor).
	ctx    context.Context
	cancel context.CancelCauseFunc
	// admitted is closed at the run's first event (status started, which carries the run id
	// the runtime chose); run is set by then, nil when a synchronous run found MaxWatched taken.
	admitted chan struct{}
	run      *liveRun
	reg      *liveRuns
	// placed is what the registry held of the run before trackQueued: the run this node queued.
	placed *liveRun
}

// track prepares req to be tracked: the returned tracking's ctx is the one to run with, and
// req's events, from the first one, are kept in the registry before they go to the listener
// req had. A run refused before admission has no event and is never kept: it never got an id
// anyone could use. The caller must call end once the run has returned.
func (b *liveRuns) track(ctx context.Context, req *run.Request, who runOwner, async bool) *tracking {
	t := &tracking{admitted: make(chan struct{}), reg: b}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	next := req.OnEvent
	first := true // on the run's goroutine only: the runtime sends its events in order from there
	req.OnEvent = func(e run.Event) {
		if first {
			first = false
			t.run = b.add(e.RunID, who, async, t.cancel)
			close(t.admitted)
		}
		if t.run != nil {
			b.record(t.run, e)
		}
		if next != nil {
			next(e)
		}
	}
	return t
}

// trackQueued is track for a run this node took from the cluster's queue, named already
// (req.ID): it is held from now (its cancel is answered before it starts), and its events
// follow its first, status queued, which the node that queued it shared and this one shares
// again (the cluster stores it once). It is asynchronous: nobody here waits for it.
func (b *liveRuns) trackQueued(ctx context.Context, req *run.Request, who runOwner) *tracking {
	t := &tracking{admitted: make(chan struct{}), reg: b}
	t.ctx, t.cancel = context.WithCancelCause(ctx)
	b.mu.Lock()
	t.placed = b.runs[req.ID] // this node queued it, and took it back
	b.mu.Unlock()
	t.run = b.add(req.ID, who, true, t.cancel)
	close(t.admitted)
	b.record(t.run, run.Event{Type: "status", RunID: req.ID, Status: "queued"})
	next := req.OnEvent
	req.OnEvent = func(e run.Event) {
		b.record(t.run, e)
		if next != nil {
			next(e)
		}
	}
	return t
}

// started reports whether the tracked run was admitted: it has an event of the runtime's (a
// queued run's first event is the cluster's).
func (t *tracking) started() bool {
	select {
	case <-t.admitted:
	default:
		return false
	}
	if t.run == nil {
		return false
	}
	t.run.mu.Lock()
	defer t.run.mu.Unlock()
	return len(t.run.events) > 1 || len(t.run.events) == 1 && !isQueuedEvent(t.run.events[0])
}

// isQueuedEvent reports whether k is a queued run's first event.
func isQueuedEvent(k keptEvent) bool {
	return k.dropped == nil && k.ev.Type == "status" && k.ev.Status == "queued"
}

// drop lets go of a run that was never admitted after all (trackQueued), as if it had never
// been tracked: another node runs it. The run this node queued, if it did, is kept again.
func (t *tracking) drop() {
	t.reg.mu.Lock()
	if t.reg.runs[t.run.id] == t.run {
		delete(t.reg.runs, t.run.id)
		if t.placed != nil && t.placed.placed {
			t.reg.runs[t.run.id] = t.placed
		}
	}
	t.reg.mu.Unlock()
	t.cancel(context.Canceled)
}

// addPlaced keeps a run this node queued for the cluster until until: this node answers for it
// (its events and cancel, through the cluster) while it waits, before the history knows it.
func (b *liveRuns) addPlaced(id string, who runOwner, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune()
	r := &liveRun{id: id, caller: who.caller, visibleTo: who.visibleTo, async: true, placed: true, until: until, changed: make(chan struct{})}
	b.runs[id] = r
	b.placed = append(b.placed, r)
}

// unplace forgets a run addPlaced kept, which the queue then refused.
func (b *liveRuns) unplace(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.runs[id]; r != nil && r.placed {
		delete(b.runs, id) // its entry in b.placed goes at its until (prune)
	}
}

// end is called once the run has returned with res. The runtime sends the result event of
// every run it admitted before it returns; should one ever be missing, res stands in for it,
// so no watcher waits forever and no place stays taken. The run's context is released.
func (t *tracking) end(res *run.Result) {
	if t.run != nil && res != nil {
		t.reg.record(t.run, run.Event{Type: "result", RunID: t.run.id, Result: res})
	}
	t.cancel(context.Canceled)
}

// add registers a run that started, or returns nil when a synchronous one finds MaxWatched
// taken (an asynchronous one has its place already: reserve).
func (b *liveRuns) add(id string, who runOwner, async bool, cancel context.CancelCauseFunc) *liveRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune()
	if !async {
		if b.watched >= b.opts.MaxWatched {
			return nil
		}
		b.watched++
	}
	r := &liveRun{id: id, caller: who.caller, visibleTo: who.visibleTo, async: async, cancel: cancel, changed: make(chan struct{})}
	b.runs[id] = r
	return r
}

// record keeps e among run's events. The result event moves the run to the finished ones in
// the same hold of the registry's lock: a watcher that has read the result (and the client it
// answered) never finds the registry still counting the run in flight, or another run it
// pushed out (MaxFinished) still kept.
func (b *liveRuns) record(rec *liveRun, e run.Event) {
	if b.share != nil {
		defer b.shareNew(rec)
	}
	if e.Type != "result" {
		rec.append(e, &b.opts, b.now)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !rec.append(e, &b.opts, b.now) {
		return // a second result (end's stand-in for one already in): the run finished once
	}
	if !rec.async {
		b.watched--
	}
	rec.mu.Lock()
	cost := rec.cost
	rec.mu.Unlock()
	rec.keptCost = cost
	b.finished = append(b.finished, rec)
	b.keptCost += cost
	b.prune()
}

// shareNew hands the events rec kept since the last call to the cluster, each once, numbered
// as the events endpoint numbers them. It runs outside the registry's lock: sharing encodes.
func (b *liveRuns) shareNew(rec *liveRun) {
	rec.mu.Lock()
	from, evs := rec.shared, rec.events[rec.shared:len(rec.events):len(rec.events)]
	rec.shared = len(rec.events)
	rec.mu.Unlock()
	for i, k := range evs {
		b.share(rec.id, from+i+1, k)
	}
}

// prune drops the finished runs past Keep, MaxFinished or MaxFinishedBytes, oldest first.
// b.mu is held.
func (b *liveRuns) prune() {
	cutoff := b.now().Add(-b.opts.Keep)
	n := 0
	for n < len(b.finished) {
		r := b.finished[n]
		over := len(b.finished)-n > b.opts.MaxFinished || b.keptCost > b.opts.MaxFinishedBytes
		if !over && !r.endedBefore(cutoff) {
			break
		}
		delete(b.runs, r.id)
		b.keptCost -= r.keptCost
		b.finished[n] = nil
		n++
	}
	if n > 0 {
		b.finished = append(b.finished[:0], b.finished[n:]...)
	}
	now := b.now()
	n = 0
	for n < len(b.placed) && b.placed[n].until.Before(now) {
		if r := b.placed[n]; b.runs[r.id] == r {
			delete(b.runs, r.id)
		}
		b.placed[n] = nil
		n++
	}
	if n > 0 {
		b.placed = append(b.placed[:0], b.placed[n:]...)
	}
}

// get returns the run id, in flight or finished and still kept, or nil.
func (b *liveRuns) get(id string) *liveRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune()
	return b.runs[id]
}

// inFlight counts the tracked runs in flight and the asynchronous places taken, for tests and
// the leak checks.
func (b *liveRuns) inFlight() (tracked, async int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.runs {
		if !r.placed && !r.isDone() {
			tracked++
		}
	}
	return tracked, b.async
}
