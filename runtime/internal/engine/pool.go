package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// A module whose instantiation dominates its run (standard Go copies ~36,000 data segments: ~3 ms
// before the first instruction of the skill) can have instances made ahead of its runs: a warm
// pool per compiled module, each instance used by exactly one run and replaced in the background.
// An instance is made before its run exists, so what is the run's own — its stdout and stderr,
// the deadline its sleeps end at — reaches it through a slot the run fills when it takes the
// instance. A pooled instance's memory is charged to the admission budget while it waits, and
// refills stop when the budget has no room or runs are waiting for it.

// warmThreshold is the instantiation time from which a module gets a pool
// (runtime.Config.WarmInstances).
const warmThreshold = time.Millisecond

// warmPool holds a compiled module's ready instances.
type warmPool struct {
	size      int
	m         *NativeModule
	mod       *Module // the skill version whose run made the pool: its limits size the instances
	admission *Admission
	logger    *slog.Logger

	// noInit is set once the module's initialiser failed without a run (it called the kernel or
	// a host function): instances are then made uninitialised, and the run initialises them.
	noInit atomic.Bool

	mu      sync.Mutex
	ready   []*WarmInstance
	filling bool
	closed  bool
	wg      sync.WaitGroup

	// the engine's counters (Stats): runs served, instances made, wall time spent making them
	hits, made, refillNs *atomic.Int64
}

// WarmInstance is an instance made ahead of its run.
type WarmInstance struct {
	Mod    api.Module
	Meter  *MemoryMeter
	Slot   *IOSlot
	charge int64
	// Initialised: the guest runtime's initialiser (_initialize ...) ran when it was made.
	Initialised bool
}

// runSlot is what a pooled instance writes and sleeps through: the run that takes it fills it.
// What the instance wrote before (its initialiser's output) is kept, up to maxEarlyOutput, and
// handed to the run's writers when it fills the slot, so the run logs what a fresh instance's
// run would have.
type runSlot struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	done           <-chan struct{}
	early          []earlyWrite
	earlyBytes     int
}

type earlyWrite struct {
	stderr bool
	p      []byte
}

const maxEarlyOutput = 64 << 10

func (r *runSlot) Fill(stdout, stderr io.Writer, done <-chan struct{}) {
	r.mu.Lock()
	r.stdout, r.stderr, r.done = stdout, stderr, done
	early := r.early
	r.early = nil
	r.mu.Unlock()
	for _, w := range early {
		if w.stderr {
			_, _ = stderr.Write(w.p)
		} else {
			_, _ = stdout.Write(w.p)
		}
	}
}

// reset empties the slot: no writers, no deadline, no early output.
func (r *runSlot) reset() {
	r.mu.Lock()
	r.stdout, r.stderr, r.done, r.early, r.earlyBytes = nil, nil, nil, nil, 0
	r.mu.Unlock()
}

type slotWriter struct {
	slot   *runSlot
	stderr bool
}

func (w slotWriter) Write(p []byte) (int, error) {
	w.slot.mu.Lock()
	out := w.slot.stdout
	if w.stderr {
		out = w.slot.stderr
	}
	if out == nil { // no run yet: keep it for the run (bounded; the rest would be cut anyway)
		if n := min(len(p), maxEarlyOutput-w.slot.earlyBytes); n > 0 {
			w.slot.early = append(w.slot.early, earlyWrite{w.stderr, append([]byte(nil), p[:n]...)})
			w.slot.earlyBytes += n
		}
		w.slot.mu.Unlock()
		return len(p), nil
	}
	w.slot.mu.Unlock()
	return out.Write(p)
}

func (r *runSlot) sleep(ns int64) {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	SleepUntil(done)(ns)
}

// Instantiated is told that a run of m made a fresh instance of c (native) in took: a module that
// takes warmThreshold or more gets its pool of runtime.Config.WarmInstances, once, logging to
// logger (the run's Runtime's).
func (e *Engine) Instantiated(c *Compiled, m *Module, took time.Duration, logger *slog.Logger) {
	if e.warmInstances <= 0 || took < warmThreshold {
		return
	}
	c.poolOnce.Do(func() {
		mod := *m
		p := &warmPool{size: e.warmInstances, m: c.Native, mod: &mod, admission: e.admission, logger: logger,
			hits: &e.warmHits, made: &e.warmMade, refillNs: &e.warmRefillNs}
		c.pool.Store(p)
		p.refill()
	})
}

// TakeWarm returns an instance of c made ahead of the run, or nil (no pool, or none ready).
func (c *Compiled) TakeWarm() *WarmInstance {
	if p := c.pool.Load(); p != nil {
		return p.take()
	}
	return nil
}

// take returns a ready instance, or nil, and starts a refill.
func (p *warmPool) take() *WarmInstance {
	p.mu.Lock()
	var w *WarmInstance
	if n := len(p.ready); n > 0 {
		w = p.ready[n-1]
		p.ready = p.ready[:n-1]
	}
	p.mu.Unlock()
	if w != nil {
		p.hits.Add(1)
		// The run's own charge covers the instance from now on.
		p.admission.free(w.charge)
	}
	p.refill()
	return w
}

// refill makes instances in the background until the pool is full, one at a time.
func (p *warmPool) refill() {
	p.mu.Lock()
	if p.filling || p.closed || len(p.ready) >= p.size {
		p.mu.Unlock()
		return
	}
	p.filling = true
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		for {
			start := time.Now()
			w := p.make()
			p.refillNs.Add(int64(time.Since(start)))
			p.mu.Lock()
			if w == nil || p.closed {
				p.filling = false
				p.mu.Unlock()
				if w != nil {
					p.discard(w)
				}
				return
			}
			p.ready = append(p.ready, w)
			full := len(p.ready) >= p.size
			if full {
				p.filling = false
			}
			p.mu.Unlock()
			if full {
				return
			}
		}
	}()
}

// make instantiates one instance, or returns nil when the budget has no room or it fails.
func (p *warmPool) make() *WarmInstance {
	meter := NewMemoryMeter(p.mod.LinearLimit)
	slot := p.m.TakeSlot() // the instance's for its life: never put back
	// Bounded like a run: a start section that loops is interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(p.mod.Limits.TimeoutMs)*time.Millisecond)
	defer cancel()
	mc := slot.Config
	mod, err := p.m.Instantiate(experimental.WithMemoryAllocator(ctx, meter), mc)
	if err != nil || meter.StartedOver() {
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		meter.Release()
		p.logger.Debug("warm instance not made", "skill", p.mod.ID, "err", err)
		return nil
	}
	initialised := false
	if !p.noInit.Load() && (p.m.init != "" || p.m.hsInit) {
		// Outside a run the kernel and host functions refuse: an initialiser that calls them
		// fails here, and from then on the run initialises its instance, as Extism would.
		stop := p.m.StopWhenDone(ctx, mod)
		err := p.m.initialise(ctx, mod)
		if !stop() && err == nil {
			err = ctx.Err() // stopped as it returned: the instance would trap at its first check
		}
		if err != nil {
			p.noInit.Store(true)
			_ = mod.Close(context.Background())
			meter.Release()
			p.logger.Debug("the module's initialiser needs a run; warm instances are made uninitialised", "skill", p.mod.ID, "err", err)
			return p.make()
		}
		initialised = true
	}
	peak, _ := meter.Stats()
	charge := int64(peak) + 2*p.mod.Size + RunOverhead
	if !p.admission.tryHold(charge) {
		_ = mod.Close(context.Background())
		meter.Release()
		return nil
	}
	p.made.Add(1)
	return &WarmInstance{Mod: mod, Meter: meter, Slot: slot, charge: charge, Initialised: initialised}
}

func (p *warmPool) discard(w *WarmInstance) {
	_ = w.Mod.Close(context.Background())
	w.Meter.Release()
	p.admission.free(w.charge)
}

// close discards the ready instances once no refill is in flight.
func (p *warmPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, w := range ready {
		p.discard(w)
	}
}
