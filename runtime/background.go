package runtime

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
)

// background checks the unchecked skills of the current registry, one at a time, after each
// scan: a corrupt or over-limit module is then listed as broken, with its problem, without
// anyone running it. It reads, hashes and bounds-checks modules; it never compiles one
// (compiling is admitted and costs far more: a run does it). It takes no lock of the runtime's:
// a reload meanwhile only makes it start again on the new registry.
type background struct {
	rt     *Runtime
	wakeup chan struct{} // a scan happened (buffered: one pending wake is enough)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned

	mu sync.Mutex
	// checked is the last registry every skill of which was checked; changed is closed and
	// replaced when it changes (see wait).
	checked *registry.Set
	changed chan struct{}
}

// newBackground starts the background check, or, when run is false, makes one that does nothing.
func newBackground(rt *Runtime, run bool) *background {
	b := &background{rt: rt, wakeup: make(chan struct{}, 1), done: make(chan struct{}), changed: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	if !run {
		close(b.done)
		return b
	}
	go b.loop()
	return b
}

// wake tells the background check that a scan happened.
func (b *background) wake() {
	select {
	case b.wakeup <- struct{}{}:
	default:
	}
}

// stop ends the background check and waits for it: the check in progress, bounded like every
// check, finishes first. It is safe to call more than once.
func (b *background) stop() {
	b.cancel()
	<-b.done
}

func (b *background) loop() {
	defer close(b.done)
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.wakeup:
		}
		r := b.rt.reg.Load()
		if !b.pass(r) {
			continue // a newer scan woke us again, or we are stopping
		}
		b.passUsers()
		b.settle(r)
	}
}

// pass checks every unchecked skill of r, and reports whether it got through them all before r
// was replaced or the runtime closed.
func (b *background) pass(r *registry.Set) bool {
	for _, s := range r.Order {
		if b.ctx.Err() != nil || b.rt.reg.Load() != r {
			return false
		}
		if s.Unchecked() {
			_, _ = s.Check(b.ctx)
		}
	}
	return true
}

// passUsers checks the unchecked skills of the users' own directories: their views share this
// background check (see newUserView), and a user's scan wakes it.
func (b *background) passUsers() {
	rt := b.rt
	rt.usersMu.Lock()
	users := slices.Collect(maps.Values(rt.users))
	rt.usersMu.Unlock()
	for _, u := range users {
		r := u.reg.Load()
		if r == nil {
			continue
		}
		for _, s := range r.Order {
			if b.ctx.Err() != nil {
				return
			}
			if u.private(s) && s.Unchecked() {
				_, _ = s.Check(b.ctx)
			}
		}
	}
}

// settle follows a complete pass over r: the engine learns exactly which modules r uses (until
// then it kept those it could not rule out), the index is written, and waiters are told.
func (b *background) settle(r *registry.Set) {
	rt := b.rt
	rt.reloadMu.Lock() // briefly: a retain must not overtake a newer scan's
	if rt.reg.Load() == r {
		keep, _ := r.Hashes()
		rt.engine.Retain(rt.owner, keep)
	}
	rt.reloadMu.Unlock()
	rt.saveIndex()
	b.mu.Lock()
	b.checked = r
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// wait returns once every skill of the current registry (scanned first if it was not) has been
// checked by the background check, or ctx ends. Tests use it to see the background's work
// without sleeping.
func (b *background) wait(ctx context.Context) error {
	b.rt.registry()
	for {
		b.mu.Lock()
		done, changed := b.checked == b.rt.reg.Load(), b.changed
		b.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
