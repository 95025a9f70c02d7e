// Package version is the life of a skill version: its record (digest, grant, status, who brought
// it and how), the statuses and the transitions each role may make between them, the rule that
// says when a new version widens what the one before it was granted (and so waits for an admin),
// and the Store interface a database implements to keep versions beyond the process. It is a
// leaf: a store implements it without linking the engine.
package version

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
)

// Status is where a version of a skill stands. See [Transitions] for how it moves and
// docs/versions.md for what runs in each state.
type Status string

const (
	// Draft: recorded, within what the skill was granted before. It runs when pinned by
	// digest; by id only while the skill has no active version (and the policy does not require
	// published versions).
	Draft Status = "draft"
	// Pending: asks for more than the version that serves the skill (or, written by an
	// agent, more than the agent ceiling). It never runs until an admin approves it.
	Pending Status = "pending"
	// Active: published; the one version that runs when the skill is called by id.
	Active Status = "active"
	// Deprecated is a version that was active: it runs only when pinned by digest.
	Deprecated Status = "deprecated"
	// Yanked: withdrawn; never runs again, even pinned.
	Yanked Status = "yanked"
	// Rejected: an admin refused its permissions; never runs.
	Rejected Status = "rejected"
)

// Statuses are the statuses above, in the order a version may go through them.
var Statuses = []Status{Draft, Pending, Active, Deprecated, Yanked, Rejected}

// Valid says whether s is one of Statuses.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Version is one immutable content of a skill, identified by its whole-tree digest (see
// Skill.Digest). Its content never changes; its status does, by [Transitions].
type Version struct {
	Skill string `json:"skill"`
	// User is the user whose own skill (visibility user) this is a version of, "" for the
	// tenant's: what a tenant's admin reads to act in that user's view.
	User   string `json:"user,omitempty"`
	Digest string `json:"digest"`
	// Version is the manifest's version string, as its author wrote it (not an identity: two
	// contents may carry the same one).
	Version string `json:"version"`
	Status  Status `json:"status"`
	// Source says how it arrived: "folder" (found in a skill directory), "upload", "bundle" or
	// "agent" (written by an agent-facing tool).
	Source string `json:"source"`
	// Grant is what its runs may do under the policy in force when it was recorded.
	Grant *policy.Grant `json:"grant"`
	// Diff says, one line each, what it asks for beyond the version that served the skill when
	// it was recorded (or beyond the agent ceiling): why it is pending. Empty for the others.
	Diff []string `json:"diff,omitempty"`
	// CreatedBy and CreatedAt say who recorded it (a face's caller: an API key's name, "local")
	// and when.
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedBy and UpdatedAt say who last moved its status and when; Note is what they said
	// (a rejection's reason).
	UpdatedBy string    `json:"updated_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	Note      string    `json:"note,omitempty"`
	// Events is its audit trail, oldest first: every change, who made it, when and the note,
	// when a reader asked for it (Runtime.VersionHistory reads it from a store that is a Feed).
	// A store's methods leave it empty.
	Events []Event `json:"events,omitempty"`
}

// Store keeps a runtime's skill versions beyond one process: their status, and their
// content, so that a version keeps serving after its folder has moved on, and several replicas
// sharing one store serve the same versions. A store implements it (see the store package), so
// the runtime links no database. Every method must be safe for concurrent use by goroutines and
// by processes sharing the store.
type Store interface {
	// AddVersion records v with its package files (slash paths to contents) unless the store
	// already has v.Skill at v.Digest, and returns the version as stored: the new one
	// (created true), or the one recorded before (created false), whose status and history
	// stand. Concurrent calls for the same version create it once.
	AddVersion(ctx context.Context, v Version, files map[string][]byte) (stored Version, created bool, err error)
	// Version returns skill's version at digest, or an error that is ErrNotFound.
	Version(ctx context.Context, skill, digest string) (Version, error)
	// Versions returns skill's versions, newest first (by CreatedAt, then digest).
	Versions(ctx context.Context, skill string) ([]Version, error)
	// VersionFiles returns the package files of skill's version at digest, byte for byte as
	// AddVersion was given them, or an error that is ErrNotFound.
	VersionFiles(ctx context.Context, skill, digest string) (map[string][]byte, error)
	// SetVersionStatus moves skill's version at digest to t.To, recording by, note and at, in
	// one transaction, and returns it as it now is. It fails with an error that is
	// ErrConflict, changing nothing, unless the version's status is one of t.From (the
	// caller read it, and someone else may have moved it since). When t.To is Active,
	// the skill's previously active version becomes Deprecated in the same transaction:
	// a skill never has two active versions.
	SetVersionStatus(ctx context.Context, skill, digest string, t Transition, by, note string, at time.Time) (Version, error)
	// FindVersions returns the versions of every skill in the store's tenant that q selects,
	// newest first (by CreatedAt, then skill and digest), at most q.Limit (1 to
	// MaxQuery+1: a caller asks one more than it shows, to know there are more). A
	// version of a user's own skill keeps its stored skill name ("<id>@<scope>", see
	// ValidSkill) and names its User.
	FindVersions(ctx context.Context, q Query) ([]Version, error)
}

// MaxQuery bounds the versions a caller of Runtime.FindVersions may ask for at once
// (DefaultQuery when it asks for none).
const (
	MaxQuery     = 1000
	DefaultQuery = 100
)

// Query selects versions across a tenant's skills: the review queue (Status pending) and
// its like.
type Query struct {
	Status Status
	// Viewer limits the versions of users' own skills to that user's, for a store to filter by;
	// Runtime.FindVersions sets it from the caller's access.Principal ("" sees every user's: a
	// tenant's admin; see access.Principal.Viewer and access.Principal.Sees). The tenant's skills'
	// versions are everyone's.
	Viewer string
	Limit  int
	// Events asks Runtime.FindVersions for each version's audit trail (Version.Events), read
	// from a store that is a Feed: one read of the store per version listed, so a reviewer's
	// queue has it and a caller that does not ask pays nothing. A store's FindVersions ignores it.
	Events bool
}

// Errors of versions, matchable with errors.Is.
var (
	// ErrNotFound: the store has no such version of the skill.
	ErrNotFound = errors.New("no such version")
	// ErrConflict: the version is not in a status the transition starts from.
	ErrConflict = errors.New("the version's status does not allow that")
	// ErrNoStore: the runtime keeps no versions (Config.Versions is nil).
	ErrNoStore = errors.New("this runtime keeps no skill versions")
	// ErrUnavailable: the store could not be read or written (down, slow, full): what needs it
	// (an install, a transition, a version not seen yet) can be tried again later; runs of
	// versions the runtime knows go on.
	ErrUnavailable = errors.New("the version store is unreachable")
)

// Transition is one move of a version's status: the action's name, the statuses it starts from,
// the status it ends in, and the least role that may make it.
type Transition struct {
	Action string
	From   []Status
	To     Status
	Role   access.Role
}

// Transitions is the state machine of a version's status, the one place it is written. A
// version enters it as draft or pending when it is recorded (by whoever may install skills, the
// author role); then:
//
//   - approve (admin): pending to draft. Only an admin, never an agent-facing tool; a server
//     without API keys does not offer it over HTTP (the local operator uses skillbox approve).
//   - reject (admin): pending to rejected, for good.
//   - publish (publisher): draft or deprecated to active; the active version it replaces
//     becomes deprecated.
//   - deprecate (publisher): active to deprecated: the skill then has no active version.
//   - yank (publisher): draft, active or deprecated to yanked, for good.
var Transitions = map[string]Transition{
	"approve":   {Action: "approve", From: []Status{Pending}, To: Draft, Role: access.RoleAdmin},
	"reject":    {Action: "reject", From: []Status{Pending}, To: Rejected, Role: access.RoleAdmin},
	"publish":   {Action: "publish", From: []Status{Draft, Deprecated}, To: Active, Role: access.RolePublisher},
	"deprecate": {Action: "deprecate", From: []Status{Active}, To: Deprecated, Role: access.RolePublisher},
	"yank":      {Action: "yank", From: []Status{Draft, Active, Deprecated}, To: Yanked, Role: access.RolePublisher},
}

// Allows says whether t starts from s.
func (t Transition) Allows(s Status) bool {
	for _, f := range t.From {
		if f == s {
			return true
		}
	}
	return false
}
