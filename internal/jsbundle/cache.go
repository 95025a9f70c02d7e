package jsbundle

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
)

// DefaultCacheEntries is the number of bundles a zero-sized [Cache] remembers.
const DefaultCacheEntries = 256

// Cache remembers bundles, so that rebuilding a skill whose files did not change (a reload)
// reads them again but does not run esbuild. A remembered bundle is reused only when every file
// it was built from has the same sha256 and every path its imports' resolution passed over (a
// "./util.ts" looked for before "./util.js" was found) is still absent: its digests, not file
// times, decide. A Cache is safe for concurrent use; the zero value is not: use [NewCache].
type Cache struct {
	mu      sync.Mutex
	max     int
	bundles map[cacheKey]Bundle
	hits    int // for tests
}

type cacheKey struct {
	dir, entry string
	opts       Options
}

// NewCache returns a cache of at most max bundles (max <= 0: [DefaultCacheEntries]).
func NewCache(max int) *Cache {
	if max <= 0 {
		max = DefaultCacheEntries
	}
	return &Cache{max: max, bundles: map[cacheKey]Bundle{}}
}

// Build is [Build] through the cache.
func (c *Cache) Build(ctx context.Context, skillDir, entry string, opts Options) (Bundle, error) {
	opts = opts.withDefaults()
	root, rel, err := open(ctx, skillDir, entry)
	if err != nil {
		return Bundle{}, err
	}
	defer root.Close()
	abs, err := filepath.Abs(skillDir)
	if err != nil {
		return Bundle{}, err
	}
	key := cacheKey{abs, rel, opts}
	c.mu.Lock()
	old, ok := c.bundles[key]
	c.mu.Unlock()
	if ok && unchanged(newLoader(ctx, root, opts), old) {
		c.mu.Lock()
		c.hits++
		c.mu.Unlock()
		return old, nil
	}
	b, err := build(ctx, root, rel, opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		delete(c.bundles, key)
		return Bundle{}, err
	}
	if len(c.bundles) >= c.max {
		for k := range c.bundles { // any one: the cache only spares work
			delete(c.bundles, k)
			break
		}
	}
	c.bundles[key] = b
	return b, nil
}

// unchanged reports whether b's files still have their digests, read under the same bounds,
// and its probed paths are still absent (or directories).
func unchanged(l *loader, b Bundle) bool {
	for p, sum := range b.sums {
		if _, err := l.read(p); err != nil || l.sums[p] != sum {
			return false
		}
	}
	for p, what := range b.probes {
		st, err := l.root.Stat(p)
		switch {
		case what == "dir" && err == nil && st.IsDir():
		case what == "absent" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
		default:
			return false
		}
	}
	return true
}
