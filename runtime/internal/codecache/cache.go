// Package codecache keeps compiled code — a skill's module, a script interpreter, a script's
// bytecode — by key: compiled once on first use, shared by every run that holds it, charged to a
// memory budget while it is kept, and dropped, least recently used first, when the budget needs
// the room, when more than a bound of entries are kept, or when its key is no longer live. A
// dropped entry that a run still holds is closed when the last one releases it, never under it.
//
// The runtime keeps its modules, its interpreters and its scripts' bytecode in three Caches of
// this one kind, so each rule (compile once, forget a transient failure, evict the least recently
// used idle entry, close what no one holds) is written once.
package codecache

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
)

// ErrClosed is an Acquire after Close.
var ErrClosed = errors.New("the cache is closed")

// Config says how a Cache keeps its entries. Every func may be nil.
type Config[V any] struct {
	// MaxEntries bounds the entries kept (0: no bound): past it, idle ones are dropped, least
	// recently used first.
	MaxEntries int
	// MaxBytes bounds the charges of the entries kept (0: no bound), as MaxEntries does.
	MaxBytes int64
	// Free gives back the charge of an entry dropped (to the memory budget it was held from).
	Free func(int64)
	// Close releases what a value holds, once no run holds it.
	Close func(V)
	// Keep reports whether a failed compilation is kept, so later acquires fail the same way
	// without compiling (a module the compiler refused); by default a failure is forgotten
	// (no room, a canceled caller), and the next acquire compiles again.
	Keep func(error) bool
}

// Cache keeps values of type V by key K. Its zero value is not usable: use New.
type Cache[K comparable, V any] struct {
	cfg Config[V]

	// Compiles counts compilations; Hits, acquires served by a value already compiled or being
	// compiled; Evictions, entries dropped to make room.
	Compiles, Hits, Evictions atomic.Int64

	mu      sync.Mutex
	entries map[K]*Entry[V]
	clock   uint64 // orders uses, for least-recently-used eviction
	bytes   int64  // the charges of the entries kept
	closed  bool
}

// Entry is one value of a Cache, held by a run between Acquire and Release.
type Entry[V any] struct {
	once  sync.Once
	value V
	ready bool // value holds compiled code (read under the cache's mu)
	err   error

	refs    int    // runs holding it
	stale   bool   // dropped from the cache: closed when the last holder releases it
	charge  int64  // bytes charged while it is kept
	lastUse uint64 // the cache's clock at the last acquire
}

// Value is the entry's compiled value.
func (e *Entry[V]) Value() V { return e.value }

// New returns an empty Cache.
func New[K comparable, V any](cfg Config[V]) *Cache[K, V] {
	return &Cache[K, V]{cfg: cfg, entries: map[K]*Entry[V]{}}
}

// Acquire returns the entry of key, compiling it with compile on first use: compile returns the
// value and the bytes to charge for keeping it (already held from the budget: Free gives them
// back). A key that live (nil: every key) says is not live is compiled for this caller alone
// and closed when it releases it: a run that looked its skill up before a reload may ask for a
// module the reload dropped. live is called with the cache locked, so that no Retain comes
// between its answer and the entry it decides. Call Release when done with the entry.
func (c *Cache[K, V]) Acquire(ctx context.Context, key K, live func(K) bool, compile func(context.Context) (V, int64, error)) (*Entry[V], error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	e := c.entries[key]
	if e == nil {
		keep := live == nil || live(key)
		e = &Entry[V]{stale: !keep}
		if keep {
			c.entries[key] = e
		}
	}
	e.refs++
	c.clock++
	e.lastUse = c.clock
	toDrop := c.trimLocked(key)
	c.mu.Unlock()
	c.dropAll(toDrop)

	compiledNow := false
	e.once.Do(func() {
		compiledNow = true
		c.Compiles.Add(1)
		v, charge, err := compile(ctx)
		c.mu.Lock()
		e.err = err
		if err == nil {
			e.value, e.ready, e.charge = v, true, charge
			if !e.stale {
				c.bytes += charge
			}
		}
		c.mu.Unlock()
	})
	if !compiledNow {
		c.Hits.Add(1)
	}
	if e.err != nil {
		err := e.err
		c.Release(e)
		if c.cfg.Keep == nil || !c.cfg.Keep(err) {
			c.mu.Lock()
			if c.entries[key] == e {
				delete(c.entries, key)
			}
			c.mu.Unlock()
		}
		return nil, err
	}
	if compiledNow {
		c.mu.Lock()
		toDrop := c.trimLocked(key)
		c.mu.Unlock()
		c.dropAll(toDrop)
	}
	return e, nil
}

// Release gives back a run's hold on e; a dropped entry is closed with its last holder.
func (c *Cache[K, V]) Release(e *Entry[V]) {
	c.mu.Lock()
	e.refs--
	closeIt := e.stale && e.refs == 0
	c.mu.Unlock()
	if closeIt {
		c.drop(e)
	}
}

// Retain drops every entry whose key live says is no longer live (after a reload), closing those
// no run holds.
func (c *Cache[K, V]) Retain(live func(K) bool) {
	c.mu.Lock()
	var toDrop []*Entry[V]
	for k, e := range c.entries {
		if live(k) {
			continue
		}
		toDrop = append(toDrop, c.removeLocked(k, e)...)
	}
	c.mu.Unlock()
	c.dropAll(toDrop)
}

// Evict drops idle entries, least recently used first, until need bytes of their charges are
// given back or none is idle; the memory budget calls it when a run waits for room. It returns
// the bytes freed.
func (c *Cache[K, V]) Evict(need int64) int64 {
	c.mu.Lock()
	toDrop := c.takeIdleLocked(func(_ int, f int64) bool { return f >= need }, *new(K), false)
	var freed int64
	for _, e := range toDrop {
		freed += e.charge
	}
	c.mu.Unlock()
	c.Evictions.Add(int64(len(toDrop)))
	c.dropAll(toDrop)
	return freed
}

// Kept counts the entries that hold compiled code.
func (c *Cache[K, V]) Kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.entries {
		if e.ready {
			n++
		}
	}
	return n
}

// Close drops every entry and refuses later acquires; entries still held are closed when their
// holders release them.
func (c *Cache[K, V]) Close() {
	c.mu.Lock()
	c.closed = true
	var toDrop []*Entry[V]
	for k, e := range c.entries {
		toDrop = append(toDrop, c.removeLocked(k, e)...)
	}
	c.mu.Unlock()
	c.dropAll(toDrop)
}

// removeLocked takes e out of the cache and returns it when it is to be closed now (no run holds
// it); otherwise its last holder closes it.
func (c *Cache[K, V]) removeLocked(k K, e *Entry[V]) []*Entry[V] {
	delete(c.entries, k)
	e.stale = true
	if e.ready {
		c.bytes -= e.charge
	}
	if e.refs == 0 && e.ready {
		return []*Entry[V]{e}
	}
	return nil
}

// trimLocked takes idle entries out, least recently used first, while the cache is past
// MaxEntries or MaxBytes; keep (the key being acquired) stays.
func (c *Cache[K, V]) trimLocked(keep K) []*Entry[V] {
	over := func() bool {
		return (c.cfg.MaxEntries > 0 && len(c.entries) > c.cfg.MaxEntries) || (c.cfg.MaxBytes > 0 && c.bytes > c.cfg.MaxBytes)
	}
	if !over() {
		return nil
	}
	out := c.takeIdleLocked(func(int, int64) bool { return !over() }, keep, true)
	c.Evictions.Add(int64(len(out)))
	return out
}

// takeIdleLocked takes idle entries out (none held, compiled), least recently used first, until
// enough says so; with spare, the entry of key keep is not taken.
func (c *Cache[K, V]) takeIdleLocked(enough func(taken int, freed int64) bool, keep K, spare bool) []*Entry[V] {
	type idle struct {
		k K
		e *Entry[V]
	}
	var all []idle
	for k, e := range c.entries {
		if e.refs == 0 && e.ready && !(spare && k == keep) {
			all = append(all, idle{k, e})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].e.lastUse < all[b].e.lastUse })
	var out []*Entry[V]
	var freed int64
	for _, it := range all {
		if enough(len(out), freed) {
			break
		}
		freed += it.e.charge
		out = append(out, c.removeLocked(it.k, it.e)...)
	}
	return out
}

func (c *Cache[K, V]) dropAll(es []*Entry[V]) {
	for _, e := range es {
		c.drop(e)
	}
}

// drop closes an entry no run holds and gives its charge back.
func (c *Cache[K, V]) drop(e *Entry[V]) {
	c.mu.Lock()
	v, ready, charge := e.value, e.ready, e.charge
	var zero V
	e.value, e.ready, e.charge = zero, false, 0
	c.mu.Unlock()
	if ready && c.cfg.Close != nil {
		c.cfg.Close(v)
	}
	if charge > 0 && c.cfg.Free != nil {
		c.cfg.Free(charge)
	}
}
