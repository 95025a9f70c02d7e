package version

import (
	"context"
	"time"
)

// Event is one change of a version: recorded, or moved from one status to another (see
// Transitions), with who made it, when, and what they said. A version's events, oldest first,
// are its audit trail.
type Event struct {
	// Seq numbers the changes of a store in the order they were made.
	Seq    int64  `json:"seq"`
	Skill  string `json:"skill"`
	Digest string `json:"digest"`
	// Action is "record", a transition's action (approve, publish, ...), or, for a version
	// deprecated because another was published, "deprecate"; "move" is a move recorded before
	// events were kept, its action unknown.
	Action string `json:"action"`
	// Status is the version's status after the change ("" when unknown: recorded before events
	// were kept).
	Status Status    `json:"status,omitempty"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at"`
	Note   string    `json:"note,omitempty"`
}

// Feed is what a Store implements, beside Store, so that a runtime holds every version in
// memory and a run never reads the store: it reads the changes once at start, then those after
// the last it saw, every second (and at once when the store is a Notifier that says there are
// some), so a change made by another replica serves within about that.
// A store without it is read each time a run needs a skill's versions, cached for a second.
type Feed interface {
	// Changes returns the versions of the store's tenant changed after change since (0: every
	// version), each as it is now, in the order of their changes (a version changed twice may
	// come twice), at most limit (1 to MaxQuery), and the Seq of the last change read: the
	// since of the next call (since itself when there is none).
	Changes(ctx context.Context, since int64, limit int) ([]Version, int64, error)
	// Events returns the events of skill's version at digest, oldest first, at most limit
	// (1 to MaxQuery).
	Events(ctx context.Context, skill, digest string, limit int) ([]Event, error)
}

// Notifier is what a Feed implements when its store can say that a change was committed, by
// any process sharing it (PostgreSQL's LISTEN/NOTIFY): a runtime then reads the changes at once,
// not at its next poll, which stays as the fallback for notes lost while the store's listener
// reconnects, or never delivered (a connection pooler in transaction mode drops them).
type Notifier interface {
	// VersionNotes returns a channel that receives after a change to the store's versions
	// is committed (notes come together: one may stand for several changes, of any tenant),
	// and once after the store's listener (re)connects, since changes may have come while it
	// was not listening. It receives nothing after ctx ends; nil when the store cannot tell.
	VersionNotes(ctx context.Context) <-chan struct{}
}
