package outbox

import (
	"time"
)

// spool keeps entries the Writer has not taken yet, in order. Only the outbox's loop calls it.
type spool interface {
	// append keeps entries after those already held, durably before it returns; all or none.
	append(entries [][]byte) error
	// peek returns up to n of the oldest entries, without removing them.
	peek(n int) ([][]byte, error)
	// advance removes the n oldest entries (a peek's, once written).
	advance(n int) error
	// size is how many entries it holds, their bytes, and when the oldest was appended.
	size() (n int, bytes int64, oldest time.Time)
	close() error
}

// memSpool is a spool in memory: bounded, lost with the process.
type memSpool struct {
	max     int64
	entries [][]byte
	at      []time.Time
	bytes   int64
}

func newMemSpool(max int64) *memSpool { return &memSpool{max: max} }

func (m *memSpool) append(entries [][]byte) error {
	var n int64
	for _, e := range entries {
		n += int64(len(e))
	}
	if m.bytes+n > m.max {
		return ErrSpoolFull
	}
	now := time.Now()
	for _, e := range entries {
		m.entries = append(m.entries, e)
		m.at = append(m.at, now)
	}
	m.bytes += n
	return nil
}

func (m *memSpool) peek(n int) ([][]byte, error) {
	return m.entries[:min(n, len(m.entries))], nil
}

func (m *memSpool) advance(n int) error {
	for _, e := range m.entries[:n] {
		m.bytes -= int64(len(e))
	}
	clear(m.entries[:n])
	m.entries, m.at = m.entries[n:], m.at[n:]
	return nil
}

func (m *memSpool) size() (int, int64, time.Time) {
	if len(m.entries) == 0 {
		return 0, 0, time.Time{}
	}
	return len(m.entries), m.bytes, m.at[0]
}

func (m *memSpool) close() error { return nil }
