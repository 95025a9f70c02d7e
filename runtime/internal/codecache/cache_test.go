package codecache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// ledger counts what a cache gives back and closes, to hold every charge to one Free and every
// value to one Close.
type ledger struct {
	mu     sync.Mutex
	freed  int64
	closed map[string]int
}

func newLedger() *ledger { return &ledger{closed: map[string]int{}} }

func (l *ledger) config() Config[string] {
	return Config[string]{
		Free:  func(n int64) { l.mu.Lock(); l.freed += n; l.mu.Unlock() },
		Close: func(v string) { l.mu.Lock(); l.closed[v]++; l.mu.Unlock() },
	}
}

func (l *ledger) closes(v string) int { l.mu.Lock(); defer l.mu.Unlock(); return l.closed[v] }

func value(v string, charge int64) func(context.Context) (string, int64, error) {
	return func(context.Context) (string, int64, error) { return v, charge, nil }
}

// Concurrent first acquires compile once and share the value.
func TestCompileOnce(t *testing.T) {
	c := New[string](newLedger().config())
	var compiles atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := c.Acquire(context.Background(), "k", nil, func(context.Context) (string, int64, error) {
				compiles.Add(1)
				return "v", 1, nil
			})
			if err != nil || e.Value() != "v" {
				t.Errorf("acquire: %v %v", e, err)
				return
			}
			c.Release(e)
		}()
	}
	wg.Wait()
	if compiles.Load() != 1 || c.Compiles.Load() != 1 || c.Hits.Load() != 15 || c.Kept() != 1 {
		t.Errorf("compiled %d times (counted %d), %d hits, %d kept; want 1, 1, 15, 1", compiles.Load(), c.Compiles.Load(), c.Hits.Load(), c.Kept())
	}
}

// A failure is forgotten (the next acquire compiles again) unless Keep says it stays.
func TestFailures(t *testing.T) {
	refused := errors.New("refused")
	for _, keep := range []bool{false, true} {
		cfg := newLedger().config()
		cfg.Keep = func(err error) bool { return keep && errors.Is(err, refused) }
		c := New[string](cfg)
		n := 0
		fail := func(context.Context) (string, int64, error) { n++; return "", 0, refused }
		for range 2 {
			if _, err := c.Acquire(context.Background(), "k", nil, fail); !errors.Is(err, refused) {
				t.Fatalf("keep %v: %v", keep, err)
			}
		}
		if want := map[bool]int{false: 2, true: 1}[keep]; n != want {
			t.Errorf("keep %v: compiled %d times, want %d", keep, n, want)
		}
	}
}

// An entry dropped while a run holds it is closed, and its charge freed, when the last holder
// releases it: never under a run, never twice.
func TestDroppedWhileHeld(t *testing.T) {
	l := newLedger()
	c := New[string](l.config())
	e, _ := c.Acquire(context.Background(), "k", nil, value("v", 10))
	c.Retain(func(string) bool { return false })
	if l.closes("v") != 0 {
		t.Fatal("closed under a run")
	}
	c.Release(e)
	if l.closes("v") != 1 || l.freed != 10 || c.Kept() != 0 {
		t.Errorf("after release: closed %d, freed %d, kept %d", l.closes("v"), l.freed, c.Kept())
	}
	// A key that is not live is compiled for its caller alone, and closed with it.
	e, _ = c.Acquire(context.Background(), "dead", func(string) bool { return false }, value("d", 5))
	if c.Kept() != 0 {
		t.Error("a dead key was kept")
	}
	c.Release(e)
	if l.closes("d") != 1 || l.freed != 15 {
		t.Errorf("dead key: closed %d, freed %d", l.closes("d"), l.freed)
	}
}

// Evict drops idle entries, least recently used first, until enough is freed; held ones stay.
func TestEvictLeastRecentlyUsed(t *testing.T) {
	l := newLedger()
	c := New[string](l.config())
	for _, k := range []string{"a", "b", "c"} {
		e, _ := c.Acquire(context.Background(), k, nil, value(k, 10))
		c.Release(e)
	}
	held, _ := c.Acquire(context.Background(), "a", nil, value("a", 10)) // a: most recent, and held
	if freed := c.Evict(15); freed != 20 || l.closes("b") != 1 || l.closes("c") != 1 || l.closes("a") != 0 {
		t.Errorf("evict 15: freed %d, closed b %d c %d a %d", freed, l.closes("b"), l.closes("c"), l.closes("a"))
	}
	if c.Evict(100) != 0 {
		t.Error("evicted a held entry")
	}
	c.Release(held)
	if c.Evictions.Load() != 2 || c.Kept() != 1 {
		t.Errorf("%d evictions, %d kept", c.Evictions.Load(), c.Kept())
	}
}

// MaxEntries and MaxBytes bound what is kept: past either, idle entries go, oldest first.
func TestBounds(t *testing.T) {
	for name, cfg := range map[string]Config[string]{"entries": {MaxEntries: 2}, "bytes": {MaxBytes: 25}} {
		l := newLedger()
		lc := l.config()
		cfg.Free, cfg.Close = lc.Free, lc.Close
		c := New[string](cfg)
		for _, k := range []string{"a", "b", "c"} {
			e, _ := c.Acquire(context.Background(), k, nil, value(k, 10))
			c.Release(e)
		}
		if c.Kept() != 2 || l.closes("a") != 1 {
			t.Errorf("%s: kept %d, a closed %d; want 2 kept, the oldest closed", name, c.Kept(), l.closes("a"))
		}
	}
}

// Close drops everything and refuses what comes after; a held entry closes with its holder.
func TestClose(t *testing.T) {
	l := newLedger()
	c := New[string](l.config())
	held, _ := c.Acquire(context.Background(), "h", nil, value("h", 1))
	idle, _ := c.Acquire(context.Background(), "i", nil, value("i", 1))
	c.Release(idle)
	c.Close()
	if l.closes("i") != 1 || l.closes("h") != 0 {
		t.Errorf("close: idle %d, held %d", l.closes("i"), l.closes("h"))
	}
	if _, err := c.Acquire(context.Background(), "x", nil, value("x", 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("acquire after close: %v", err)
	}
	c.Release(held)
	if l.closes("h") != 1 || l.freed != 2 {
		t.Errorf("after release: held closed %d, freed %d", l.closes("h"), l.freed)
	}
}
