// Package permit holds what people allowed skills beyond their grants, for a time: a Permit is
// a person's answer "allow this for a while" to a run's permission request, and the Store a
// database implements keeps them, so every replica of a tenant honours them. The runtime
// decides what may be asked and who may answer; a Store only keeps and finds permits. It is a
// leaf: a store implements it without linking the runtime.
package permit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"
)

// Permit is a lasting allowance a person made: Target of Kind ("network", "env", "files",
// with Access for a directory) for the runs of Skill's version Digest, by Caller (every caller
// of the tenant when empty), from At until Until. By is who allowed it; RunID and RequestID the
// run and request it answered. A Store keeps each tenant's apart.
type Permit struct {
	ID        string    `json:"id"`
	Skill     string    `json:"skill"`
	Digest    string    `json:"digest"`
	Caller    string    `json:"caller,omitempty"`
	Kind      string    `json:"kind"`
	Target    string    `json:"target"`
	Access    string    `json:"access,omitempty"`
	Until     time.Time `json:"until"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	RunID     string    `json:"run_id,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
	// RevokedBy is who ended it early (its Until is then when), "" for none.
	RevokedBy string `json:"revoked_by,omitempty"`
}

// Covers reports whether p allows q at q.At.
func (p Permit) Covers(q Query) bool {
	return p.Skill == q.Skill && p.Digest == q.Digest && p.Kind == q.Kind && p.Target == q.Target &&
		p.Access == q.Access && (p.Caller == "" || p.Caller == q.Caller) && q.At.Before(p.Until) && !q.At.Before(p.At)
}

// Query is a permission a run asks for, at At: is a permit in force that covers it?
type Query struct {
	Skill, Digest, Caller string
	Kind, Target, Access  string
	At                    time.Time
}

// Store keeps a tenant's permits.
type Store interface {
	// AddPermit keeps p, whose ID is new (NewID).
	AddPermit(ctx context.Context, p Permit) error
	// FindPermit returns a permit that covers q, the one that lasts longest; ErrNotFound when
	// none does.
	FindPermit(ctx context.Context, q Query) (Permit, error)
	// ListPermits returns the permits in force at at, the newest first, at most limit (1 to
	// MaxList).
	ListPermits(ctx context.Context, at time.Time, limit int) ([]Permit, error)
	// RevokePermit ends permit id at at, by who: ErrNotFound when there is no such permit in
	// force then.
	RevokePermit(ctx context.Context, id, who string, at time.Time) error
}

// MaxList bounds one ListPermits.
const MaxList = 1000

// ErrNotFound is what FindPermit and RevokePermit say when there is no such permit.
var ErrNotFound = errors.New("no such permit")

// NewID returns a new permit id: "pmt_" and 16 lowercase hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "pmt_" + hex.EncodeToString(b[:])
}

// maxMemory bounds the permits a Memory holds; past it the one that ends first goes.
const maxMemory = 4096

// Memory is a Store in memory, for a runtime without a database: its permits last as long as
// the process, and no other process sees them. The zero Memory is ready.
type Memory struct {
	mu      sync.Mutex
	permits []Permit
}

var _ Store = (*Memory)(nil)

func (m *Memory) AddPermit(_ context.Context, p Permit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.permits = slices.DeleteFunc(m.permits, func(h Permit) bool { return !p.At.Before(h.Until) })
	if len(m.permits) >= maxMemory {
		first := 0
		for i, h := range m.permits {
			if h.Until.Before(m.permits[first].Until) {
				first = i
			}
		}
		m.permits = slices.Delete(m.permits, first, first+1)
	}
	m.permits = append(m.permits, p)
	return nil
}

func (m *Memory) FindPermit(_ context.Context, q Query) (Permit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best Permit
	found := false
	for _, p := range m.permits {
		if p.Covers(q) && (!found || p.Until.After(best.Until)) {
			best, found = p, true
		}
	}
	if !found {
		return Permit{}, ErrNotFound
	}
	return best, nil
}

func (m *Memory) ListPermits(_ context.Context, at time.Time, limit int) ([]Permit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Permit
	for i := len(m.permits) - 1; i >= 0 && len(out) < limit; i-- {
		if p := m.permits[i]; at.Before(p.Until) && !at.Before(p.At) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (m *Memory) RevokePermit(_ context.Context, id, who string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.permits {
		if p.ID == id && at.Before(p.Until) {
			m.permits[i].Until, m.permits[i].RevokedBy = at, who
			return nil
		}
	}
	return ErrNotFound
}
