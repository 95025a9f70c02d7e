// Package history is what is kept of a run once it is over: the Record (its result, who asked,
// through which face, for whom it is visible, what it was given) and the Recorder interface a
// database implements to keep records beyond the process. It is a leaf: a store implements it
// without linking the engine.
package history

import (
	"context"
	"encoding/json"
	"time"

	"github.com/skillbox-dev/skillbox/run"
)

// Record is a finished run as the runtime remembers it.
type Record struct {
	*run.Result
	Face   run.Face `json:"face"`
	Caller string   `json:"caller,omitempty"`
	// Tenant is the tenant of the Runtime that ran it (Config.Tenant), "" for none.
	Tenant string `json:"tenant,omitempty"`
	// VisibleTo is the user alone who may see the run, with the tenant's admins (see
	// access.Principal.Sees): the user of a run of a skill of their own (VisibilityUser). "" is the
	// whole tenant.
	VisibleTo string    `json:"visible_to,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// Args are the run's arguments (a program's: its argv and stdin), when the policy keeps them
	// (see policy.Runs); ArgsSHA256 is the hex sha256 of them, always.
	Args       json.RawMessage `json:"args,omitempty"`
	ArgsSHA256 string          `json:"args_sha256,omitempty"`
	// Trimmed is set when the record was too large to keep whole: its result value and logs
	// were dropped.
	Trimmed bool `json:"trimmed,omitempty"`
}

// Recorder keeps the history of runs beyond this process: a store implements it (see the
// store package), so the runtime links no database. Both methods are called on the run's
// goroutine and delay the run by what they take; both must be safe for concurrent use.
//
// BeginRun is told of a run once it is admitted, before its module runs (Result holds the run
// id, skill, version and digest, nothing else yet): a recorder that marks it running can later
// tell a run that finished from one whose process died. FinishRun is told of the same run when
// it ends, with its outcome; it is called for every run BeginRun was, even when BeginRun failed.
//
// A recorder's error does not fail the run: the runtime logs it (level error) and goes on, so a
// store that is down costs the history, not the service.
type Recorder interface {
	BeginRun(ctx context.Context, r *Record) error
	FinishRun(ctx context.Context, r *Record) error
}

// Interrupter is a Recorder that can end a run another recorder (owner) started and lost: it
// marks the run interrupted at now, with message, if it is still running under owner, and says
// whether it did. store.Recorder is one.
type Interrupter interface {
	InterruptRun(ctx context.Context, id, owner string, now time.Time, message string) (bool, error)
}

// Queuer is a Recorder that can keep a run waiting in a cluster's queue before any node
// starts it, so every node of the cluster reads it meanwhile: the node that starts it records
// its start (BeginRun) over it, or its end (FinishRun) when it ends without running. until is
// when the store gives up on a run no node started, and ends it. store.Recorder is one.
type Queuer interface {
	QueueRun(ctx context.Context, r *Record, until time.Time) error
	// CancelQueuedRun ends run id canceled at now, with message, if it is still queued (no
	// start was recorded over it), and says whether it did.
	CancelQueuedRun(ctx context.Context, id string, now time.Time, message string) (bool, error)
}
