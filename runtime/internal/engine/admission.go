package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/run"
)

// ErrOverBudget is a charge larger than the whole budget: it could never be admitted.
var ErrOverBudget = errors.New("larger than the runtime's whole memory budget")

// AdmissionConfig is what the admission holds runs and compilations to: runtime.Admission's
// fields, in the same order (the runtime converts one into the other), with its defaults applied.
type AdmissionConfig struct {
	MaxRuns        int
	MaxQueue       int
	MaxWait        time.Duration
	MemoryBudget   int64
	MaxCompiles    int
	CompileMemory  int64
	CompileTimeout time.Duration
}

// AdmissionStats is a snapshot of the admission: runtime.AdmissionStats's fields, in the same
// order, which the runtime converts it into.
type AdmissionStats struct {
	Running, Queued, Compiling int
	MemoryInUse, MemoryBudget  int64
	PeakMemoryInUse            int64
	PeakRunning                int
	PeakCompiling              int
	MaxRuns                    int
	MaxWait                    time.Duration
}

// Admission hands out run slots, compile slots and memory, first come first served. A ticket
// that does not fit waits in one FIFO queue; one at the head that needs memory held by idle warm
// modules gets it reclaimed (the engine drops them).
type Admission struct {
	cfg     AdmissionConfig
	reclaim func(need int64) // frees idle warm memory; called without mu

	mu            sync.Mutex
	used          int64 // bytes charged
	running       int   // run slots in use
	compiling     int   // compile slots in use
	queue         []*Ticket
	closed        bool
	reclaiming    bool // a reclaim for the queue's head runs: one at a time is enough
	peakUsed      int64
	peakRuns      int
	peakCompiling int
}

type Ticket struct {
	charge  int64
	run     bool          // needs a run slot (else a compile slot)
	ready   chan struct{} // made when the ticket waits in the queue; closed when it may go on
	granted bool
}

func NewAdmission(cfg AdmissionConfig, reclaim func(int64)) *Admission {
	return &Admission{cfg: cfg, reclaim: reclaim}
}

// fits reports whether t can be granted now (a.mu held).
func (a *Admission) fits(t *Ticket) (ok, forMemory bool) {
	if t.run && a.running >= a.cfg.MaxRuns || !t.run && a.compiling >= a.cfg.MaxCompiles {
		return false, false
	}
	if a.used+t.charge > a.cfg.MemoryBudget {
		return false, true
	}
	return true, false
}

func (a *Admission) grant(t *Ticket) {
	a.used += t.charge
	if t.run {
		a.running++
	} else {
		a.compiling++
	}
	a.peakUsed = max(a.peakUsed, a.used)
	a.peakRuns = max(a.peakRuns, a.running)
	a.peakCompiling = max(a.peakCompiling, a.compiling)
	t.granted = true
	if t.ready != nil {
		close(t.ready)
	}
}

// BusyError is the refusal of a run the runtime has no room for; Cause, when set, is what it
// wraps (run.ErrNoRoomNow for a run that would not wait).
type BusyError struct {
	Msg   string
	Cause error
}

func (e *BusyError) Error() string { return e.Msg }
func (e *BusyError) Unwrap() error { return e.Cause }

// Acquire admits a run (isRun true) or a compilation charged charge bytes, waiting in the queue if
// need be; the caller gives the room back with release(t). The error is ErrClosed,
// ErrOverBudget, a *BusyError (queue full, or waited MaxWait), or ctx's error.
func (a *Admission) Acquire(ctx context.Context, charge int64, isRun bool) (t *Ticket, err error) {
	return a.AcquireUntil(ctx, charge, isRun, nil)
}

// AcquireUntil is Acquire for a caller that gives up waiting, with ErrClosed, when abandon is
// closed: a Runtime that closes refuses its own queued runs while the others sharing the
// admission wait on. A channel, not a derived context: a run pays for none unless it waits.
func (a *Admission) AcquireUntil(ctx context.Context, charge int64, isRun bool, abandon <-chan struct{}) (t *Ticket, err error) {
	t = &Ticket{charge: charge, run: isRun}
	a.mu.Lock()
	granted, _, err := a.grantNow(t)
	if err != nil || granted {
		a.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	if len(a.queue) >= a.cfg.MaxQueue {
		a.mu.Unlock()
		return nil, &BusyError{Msg: fmt.Sprintf("%d runs are running and %d waiting, the most this runtime admits; try again shortly", a.running, len(a.queue))}
	}
	t.ready = make(chan struct{})
	a.queue = append(a.queue, t)
	a.mu.Unlock()

	timer := time.NewTimer(a.cfg.MaxWait)
	defer timer.Stop()
	select {
	case <-t.ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-abandon:
		err = run.ErrClosed
	case <-timer.C:
		err = &BusyError{Msg: fmt.Sprintf("waited %s for room to run without getting it; try again shortly", a.cfg.MaxWait)}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.granted {
		if err != nil { // admitted just as the wait ended: give the room back
			a.releaseLocked(t)
			return nil, err
		}
		return t, nil
	}
	a.remove(t)
	if a.closed {
		return nil, run.ErrClosed
	}
	return nil, err
}

// TryAcquire admits a run or a compilation now, or not at all: it never waits in the queue,
// nor goes before the runs waiting there. The error is ErrClosed, ErrOverBudget, or a
// *BusyError that wraps run.ErrNoRoomNow.
func (a *Admission) TryAcquire(charge int64, isRun bool) (*Ticket, error) {
	t := &Ticket{charge: charge, run: isRun}
	a.mu.Lock()
	defer a.mu.Unlock()
	granted, forMemory, err := a.grantNow(t)
	if err != nil {
		return nil, err
	}
	if granted {
		return t, nil
	}
	why := fmt.Sprintf("%d of %d run slots are taken and %d runs wait", a.running, a.cfg.MaxRuns, len(a.queue))
	if forMemory {
		why = fmt.Sprintf("%d MiB of the %d MiB memory budget are free, and %d runs wait", (a.cfg.MemoryBudget-a.used)>>20, a.cfg.MemoryBudget>>20, len(a.queue))
	}
	return nil, &BusyError{Msg: why + ": no room to run now", Cause: run.ErrNoRoomNow}
}

// grantNow grants t at once when it fits and no ticket waits before it, after dropping idle
// warm modules when memory is what stands in the way (a.mu is released while they are); it says
// whether memory kept t out. The error is ErrClosed or ErrOverBudget. a.mu is held.
func (a *Admission) grantNow(t *Ticket) (granted, forMemory bool, err error) {
	switch {
	case a.closed:
		return false, false, run.ErrClosed
	case t.charge > a.cfg.MemoryBudget:
		return false, false, fmt.Errorf("a charge of %d MiB is %w (%d MiB)", t.charge>>20, ErrOverBudget, a.cfg.MemoryBudget>>20)
	case len(a.queue) > 0:
		return false, false, nil
	}
	ok, forMemory := a.fits(t)
	if !ok && forMemory {
		// Idle warm modules may hold the room: drop them, then look again.
		a.mu.Unlock()
		a.reclaim(a.used + t.charge - a.cfg.MemoryBudget)
		a.mu.Lock()
		ok, forMemory = a.fits(t)
	}
	if ok && len(a.queue) == 0 && !a.closed {
		a.grant(t)
		return true, false, nil
	}
	return false, forMemory, nil
}

func (a *Admission) remove(t *Ticket) {
	for i, q := range a.queue {
		if q == t {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			break
		}
	}
	a.dispatchLocked() // the head may have changed
}

func (a *Admission) Release(t *Ticket) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(t)
}

func (a *Admission) releaseLocked(t *Ticket) {
	if !t.granted {
		return
	}
	t.granted = false
	a.used -= t.charge
	if t.run {
		a.running--
	} else {
		a.compiling--
	}
	a.dispatchLocked()
}

// dispatchLocked grants waiting tickets in order while the head fits. A head waiting for memory
// gets idle warm modules reclaimed for it, in the background (reclaim must not run under mu).
func (a *Admission) dispatchLocked() {
	for len(a.queue) > 0 && !a.closed {
		head := a.queue[0]
		ok, forMemory := a.fits(head)
		if !ok {
			if forMemory && !a.reclaiming {
				a.reclaiming = true
				need := a.used + head.charge - a.cfg.MemoryBudget
				go func() {
					a.reclaim(need) // gives back what it frees through free, which dispatches
					a.mu.Lock()
					a.reclaiming = false
					a.mu.Unlock()
				}()
			}
			return
		}
		a.queue = a.queue[1:]
		a.grant(head)
	}
}

// hold charges n bytes held outside any ticket (a compiled module kept warm); free gives them back.
func (a *Admission) hold(n int64) {
	a.mu.Lock()
	a.used += n
	a.peakUsed = max(a.peakUsed, a.used)
	a.mu.Unlock()
}

// tryHold holds n bytes if they fit in the budget and no ticket waits: what it holds is a
// convenience (a warm instance), never worth delaying a run for.
func (a *Admission) tryHold(n int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || len(a.queue) > 0 || a.used+n > a.cfg.MemoryBudget {
		return false
	}
	a.used += n
	a.peakUsed = max(a.peakUsed, a.used)
	return true
}

func (a *Admission) free(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used -= n
	a.dispatchLocked()
}

// Close refuses every waiting and future ticket with ErrClosed.
func (a *Admission) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for _, t := range a.queue {
		close(t.ready) // not granted: the waiter sees closed
	}
	a.queue = nil
}

func (a *Admission) Stats() AdmissionStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AdmissionStats{Running: a.running, Queued: len(a.queue), Compiling: a.compiling,
		MemoryInUse: a.used, MemoryBudget: a.cfg.MemoryBudget, PeakMemoryInUse: a.peakUsed, PeakRunning: a.peakRuns,
		PeakCompiling: a.peakCompiling, MaxRuns: a.cfg.MaxRuns, MaxWait: a.cfg.MaxWait}
}

// Grow adds more bytes to t's charge, now or not at all: what an admitted run needs beyond its
// charge for work nested in it (a program's subprocess: another interpreter's stack, its
// output on its way back). It goes before the queue, whose runs have not started, and never
// waits: a run that waited while holding its own charge could wait for room it holds. The error
// is ErrClosed, or a *BusyError when the budget has no room for more. Shrink gives it back.
func (a *Admission) Grow(t *Ticket, more int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || !t.granted {
		return run.ErrClosed
	}
	if a.used+more > a.cfg.MemoryBudget {
		// Idle warm modules may hold the room: drop them, then look again.
		a.mu.Unlock()
		a.reclaim(a.used + more - a.cfg.MemoryBudget)
		a.mu.Lock()
		if a.closed || !t.granted {
			return run.ErrClosed
		}
		if a.used+more > a.cfg.MemoryBudget {
			return &BusyError{Msg: fmt.Sprintf("%d MiB of the %d MiB memory budget are free, and this needs %d MiB more",
				(a.cfg.MemoryBudget-a.used)>>20, a.cfg.MemoryBudget>>20, (more+1<<20-1)>>20)}
		}
	}
	t.charge += more
	a.used += more
	a.peakUsed = max(a.peakUsed, a.used)
	return nil
}

// Shrink gives back less bytes that Grow added to t's charge.
func (a *Admission) Shrink(t *Ticket, less int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !t.granted {
		return // released already: its whole charge went back then
	}
	t.charge -= less
	a.used -= less
	a.dispatchLocked()
}
