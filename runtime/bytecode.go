package runtime

import (
	"container/list"
	"sync"
)

// bytecodes remembers the QuickJS bytecode of the JavaScript skills' bundles by the bundle's
// sha256, so that a run reads it instead of parsing the bundle again: 7x faster for an 86 KB
// bundle, a few percent for a small one. Bounded by the bytes it holds, least recently used out
// first. The bytecode never leaves this process's memory.
type bytecodes struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // of *bytecodeEntry, most recent first
	byKey map[string]*list.Element
}

type bytecodeEntry struct {
	key  string
	code []byte
}

// maxBytecodeBytes bounds the bytecodes a Runtime keeps.
const maxBytecodeBytes = 64 << 20

func newBytecodes(max int64) *bytecodes {
	return &bytecodes{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (b *bytecodes) get(key string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.byKey[key]; ok {
		b.order.MoveToFront(e)
		return e.Value.(*bytecodeEntry).code
	}
	return nil
}

// put remembers code under key, dropping the least recently used until it fits; code larger
// than a quarter of the bound is not kept.
func (b *bytecodes) put(key string, code []byte) {
	n := int64(len(code))
	if n > b.max/4 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byKey[key]; ok {
		return
	}
	for b.size+n > b.max && b.order.Len() > 0 {
		last := b.order.Back()
		e := last.Value.(*bytecodeEntry)
		b.order.Remove(last)
		delete(b.byKey, e.key)
		b.size -= int64(len(e.code))
	}
	b.byKey[key] = b.order.PushFront(&bytecodeEntry{key: key, code: code})
	b.size += n
}
