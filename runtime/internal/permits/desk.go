// Package permits keeps a runtime's permission requests: the ones waiting for a person's answer,
// and the ones that ended lately (so a late answer is told it is late). The runtime decides what
// may be asked and who may answer, and keeps the lasting allowances people make in a
// permit.Store; a Desk only holds the requests, bounds them, and wakes the run an answer is for.
package permits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

	"github.com/skillbox-dev/skillbox/run"
)

// maxEnded is how many ended requests a Desk remembers, to answer a late answer with
// run.ErrRequestOver rather than run.ErrNoRequest.
const maxEnded = 256

// Desk holds one runtime's permission requests. The zero Desk is ready.
type Desk struct {
	mu      sync.Mutex
	pending map[string]*pending
	ended   []string // ids of ended requests, oldest first
	endedBy map[string]string
}

// pending is a request waiting for an answer.
type pending struct {
	q      run.PermissionRequest
	answer chan answered // one answer, the first
}

type answered struct {
	a  run.PermissionAnswer
	by string
}

// Limits bound what a Desk takes.
type Limits struct {
	// MaxPending bounds the requests waiting at once.
	MaxPending int
}

// NewID returns a new request id: "preq_" and 16 lowercase hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "preq_" + hex.EncodeToString(b[:])
}

// ErrFull is Open's error when MaxPending requests wait already.
var ErrFull = fmt.Errorf("too many permission requests are waiting")

// Open registers q as waiting, unless lim.MaxPending requests wait already.
func (d *Desk) Open(q run.PermissionRequest, lim Limits) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pending) >= lim.MaxPending {
		return ErrFull
	}
	if d.pending == nil {
		d.pending = map[string]*pending{}
	}
	d.pending[q.ID] = &pending{q: q, answer: make(chan answered, 1)}
	return nil
}

// Wait waits for q's answer until ctx ends, then closes q: a later answer is ErrRequestOver.
// ok is false when no answer came.
func (d *Desk) Wait(ctx context.Context, id string) (a run.PermissionAnswer, by string, ok bool) {
	d.mu.Lock()
	p := d.pending[id]
	d.mu.Unlock()
	if p == nil {
		return a, "", false
	}
	select {
	case ans := <-p.answer:
		a, by, ok = ans.a, ans.by, ans.a.Decision != ""
	case <-ctx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok { // an answer may have come as ctx ended: take it, it was in time
		select {
		case ans := <-p.answer:
			a, by, ok = ans.a, ans.by, ans.a.Decision != ""
		default:
		}
	}
	delete(d.pending, id)
	if d.endedBy == nil {
		d.endedBy = map[string]string{}
	}
	d.ended = append(d.ended, id)
	d.endedBy[id] = p.q.RunID
	if len(d.ended) > maxEnded {
		delete(d.endedBy, d.ended[0])
		d.ended = d.ended[1:]
	}
	return a, by, ok
}

// Request returns the waiting request id of runID.
func (d *Desk) Request(runID, id string) (run.PermissionRequest, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pending[id]; p != nil && p.q.RunID == runID {
		return p.q, nil
	}
	if r, ok := d.endedBy[id]; ok && r == runID {
		return run.PermissionRequest{}, run.ErrRequestOver
	}
	return run.PermissionRequest{}, run.ErrNoRequest
}

// Answer hands a the waiting request id of runID, answered by by. The first answer wins: a
// second one, or one after the request ended, is ErrRequestOver.
func (d *Desk) Answer(runID, id string, a run.PermissionAnswer, by string) error {
	if _, err := d.Request(runID, id); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pending[id]
	if p == nil {
		return run.ErrRequestOver
	}
	select {
	case p.answer <- answered{a, by}:
		return nil
	default:
		return run.ErrRequestOver
	}
}

// GiveUp ends the wait of the request id of runID without an answer: the one who was asked
// cannot answer (a client without elicitation, a closed terminal). Nothing if it ended.
func (d *Desk) GiveUp(runID, id string) {
	_ = d.Answer(runID, id, run.PermissionAnswer{}, "")
}

// Pending returns the waiting requests that keep says to, oldest first.
func (d *Desk) Pending(keep func(run.PermissionRequest) bool) []run.PermissionRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []run.PermissionRequest
	for _, p := range d.pending {
		if keep(p.q) {
			out = append(out, p.q)
		}
	}
	slices.SortFunc(out, func(a, b run.PermissionRequest) int { return a.AskedAt.Compare(b.AskedAt) })
	return out
}
