package script

import (
	"github.com/skillbox-dev/skillbox/internal/quickjs"
	"github.com/skillbox-dev/skillbox/runtime/internal/codecache"
)

// What a script compiles to is kept by the sha256 of its text (a codecache.Cache of its own,
// bounded by the bytes it holds, least recently used out first), so that a run does not do it
// again: the QuickJS bytecode of a JavaScript bundle (7x faster than parsing an 86 KB bundle, a
// few percent for a small one), the bundle prepared from it (quickjs.Prepare: its top level
// evaluated once, so a run starts with its code loaded), and the code of Python's execute.py.
// None of it leaves this process's memory.

// maxBytecodeBytes bounds what one cache keeps; maxPreparedBytes, the memory one prepared bundle
// may keep (a top level that builds more is evaluated by each run).
const (
	maxBytecodeBytes = 64 << 20
	maxPreparedBytes = 8 << 20
)

// Compiled is one entry of the cache: Code is a bundle's bytecode or execute.py's code, JS a
// bundle prepared (nil when its top level must run in every run: see quickjs.ErrImpure).
type Compiled struct {
	Code []byte
	JS   *quickjs.Prepared
}

// Cache keeps what scripts compile to, one per engine, shared by the runtimes on it.
type Cache = codecache.Cache[string, Compiled]

// NewBytecodeCache returns the cache that Run takes.
func NewBytecodeCache() *Cache {
	return codecache.New[string](codecache.Config[Compiled]{MaxBytes: maxBytecodeBytes})
}
