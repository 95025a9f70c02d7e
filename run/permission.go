package run

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PermissionRequest is something a run's call was refused that the policy lets a person grant
// (its ask section): a host, a variable or a directory. The run waits for an answer, until
// Deadline, holding its slot; an answer allows it for this run, allows it for a time, or denies
// it. No answer is a deny.
type PermissionRequest struct {
	// ID names the request: "preq_" and 16 lowercase hex digits; none when a permit answered
	// without asking (and then no Deadline either).
	ID    string `json:"id,omitempty"`
	RunID string `json:"run_id"`
	Skill string `json:"skill"`
	// Digest is the version of the skill that asks, when the runtime keeps versions.
	Digest string `json:"digest,omitempty"`
	// Caller is whose run it is.
	Caller string `json:"caller,omitempty"`
	// Kind is "network", "env" or "files"; Target the host, the variable's name or the
	// directory's virtual path; Access a directory's access, "read-only" or "read-write".
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Access string `json:"access,omitempty"`
	// Scope is whom a lasting grant covers: "caller" (the run's caller) or "tenant".
	Scope string `json:"scope"`
	// AnsweredBy says who may answer over the API besides a face's own person: "admin", or
	// "caller" (the run's caller too).
	AnsweredBy string `json:"answered_by"`
	// MaxGrantSeconds is the longest a lasting grant may last.
	MaxGrantSeconds int64     `json:"max_grant_seconds"`
	AskedAt         time.Time `json:"asked_at"`
	Deadline        time.Time `json:"deadline,omitzero"`
}

// GrantMinutes is what a face offers for an AllowFor answer to q: a whole number of minutes
// from 1 to most, def by default (an hour, or most when that is shorter). Every face offers
// the same range.
func (q PermissionRequest) GrantMinutes() (most, def int64) {
	most = max(q.MaxGrantSeconds/60, 1)
	return most, min(60, most)
}

// Describe says what q asks, in a sentence for the person asked: every face asks in the same
// words.
func (q PermissionRequest) Describe() string {
	var what string
	switch q.Kind {
	case "network":
		what = "to fetch from " + q.Target
	case "env":
		what = "to read the variable " + q.Target
	case "files":
		what = fmt.Sprintf("to use the directory %s (%s)", q.Target, q.Access)
	default:
		what = q.Kind + " " + q.Target
	}
	s := fmt.Sprintf("The skill %q asks %s, which its grant does not allow.", q.Skill, what)
	if d := q.Digest; d != "" {
		s += fmt.Sprintf(" (version %s, run %s)", d[:min(len(d), 19)], q.RunID)
	}
	return s
}

// Decision is a person's answer to a PermissionRequest.
type Decision string

const (
	AllowOnce Decision = "once" // for the rest of this run
	AllowFor  Decision = "for"  // for this skill's version, this target, ForSeconds
	Deny      Decision = "deny"
)

// PermissionAnswer is a person's answer.
type PermissionAnswer struct {
	Decision Decision `json:"decision"`
	// ForSeconds is how long an AllowFor grant lasts: 1 to the request's MaxGrantSeconds.
	ForSeconds int64 `json:"for_seconds,omitempty"`
}

// Outcomes of a PermissionRequest, as Asked records them.
const (
	OutcomeAllowedOnce = "allowed_once"
	OutcomeAllowedFor  = "allowed_for"
	OutcomeDenied      = "denied"
	OutcomeNoAnswer    = "no_answer" // the wait ended (its timeout, the run's deadline) first
	OutcomeGranted     = "granted"   // a lasting grant already covered it: nobody was asked
	OutcomeRefused     = "refused"   // over a bound (requests per run, waiting in the tenant): nobody was asked
)

// Asked is a permission request and what became of it: who answered, when, and for how long.
// A run's Usage keeps each, so its record says what a person granted it.
type Asked struct {
	Request PermissionRequest `json:"request"`
	Outcome string            `json:"outcome"`
	// By is who answered ("" when nobody did), and At when the request ended.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
	// Until is when an allowed_for or granted allowance ends.
	Until *time.Time `json:"until,omitempty"`
}

// Asker puts a run's permission request to the person behind a face: an MCP client's
// elicitation, a terminal's prompt. It returns their answer, or an error when it could not ask
// or they did not answer; ctx ends at the request's deadline, or when another answer came first.
// Run.Request.Asker sets it; a run without one asks nobody.
type Asker interface {
	Ask(ctx context.Context, q PermissionRequest) (PermissionAnswer, error)
}

// AnswerThroughAPI is the Asker of a face whose people answer through the runtime's API instead
// (the HTTP face, its console): it asks nobody itself and waits for the request's end.
var AnswerThroughAPI Asker = apiAsker{}

type apiAsker struct{}

func (apiAsker) Ask(ctx context.Context, _ PermissionRequest) (PermissionAnswer, error) {
	<-ctx.Done()
	return PermissionAnswer{}, ctx.Err()
}

// Errors of answering a permission request (Runtime.AnswerPermission).
var (
	// ErrNoRequest: no such request is waiting for this run (never made, or another's).
	ErrNoRequest = errors.New("no such permission request")
	// ErrRequestOver: the request ended already: answered, timed out, or its run ended.
	ErrRequestOver = errors.New("the permission request is over")
	// ErrMayNotAnswer: the answering principal may not grant it.
	ErrMayNotAnswer = errors.New("may not answer this permission request")
	// ErrBadAnswer: the answer is not one of the decisions, or its time is out of bounds.
	ErrBadAnswer = errors.New("bad answer")
)
