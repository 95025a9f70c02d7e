package run

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind says how a run failed, in words a caller can branch on. The set is closed: every failed
// run carries exactly one of these, in the Go error, the [Result] and the CLI's JSON.
type ErrorKind string

const (
	KindInvalidArgs      ErrorKind = "invalid_args"      // the arguments do not match the skill's schema
	KindNotFound         ErrorKind = "not_found"         // no such skill, or it is not executable
	KindPermissionDenied ErrorKind = "permission_denied" // the skill needs something its grant refuses
	KindTimeout          ErrorKind = "timeout"           // the run's deadline passed
	KindCanceled         ErrorKind = "canceled"          // the caller canceled the run's context
	KindMemoryLimit      ErrorKind = "memory_limit"      // the module needed more memory than granted
	KindOutputLimit      ErrorKind = "output_limit"      // the output is larger than maxOutputBytes
	KindTrap             ErrorKind = "trap"              // the module trapped (unreachable, stack, bad memory)
	KindSkillError       ErrorKind = "skill_error"       // the skill reported a failure itself
	KindBusy             ErrorKind = "busy"              // the runtime is at capacity (or closing); try again later
	KindInternal         ErrorKind = "internal"          // the host failed; not the skill's fault
	// KindInterrupted is a recorded run whose process stopped before it finished (killed,
	// crashed, cut off from the store): its recorder's lease expired. No call returns it; run
	// history shows it.
	KindInterrupted ErrorKind = "interrupted"
	// KindPendingApproval: the version that would run asks for more than the one before it and
	// waits for an admin's approval (see Transitions); a refusal before the run.
	KindPendingApproval ErrorKind = "pending_approval"
	// KindQuotaExceeded: a quota stopped the run. Before it ran, its tenant's (runs in flight,
	// runs per minute: see Quota), a refusal with RetryAfter; or after it ran, the artifact
	// store's, which could not keep its files (they are lost; its log says how many and how
	// large), without RetryAfter: waiting does not free a full store.
	KindQuotaExceeded ErrorKind = "quota_exceeded"
)

// Sentinel errors, one per kind, so callers can write errors.Is(err, run.ErrTimeout).
var (
	ErrInvalidArgs      = errors.New(string(KindInvalidArgs))
	ErrNotFound         = errors.New(string(KindNotFound))
	ErrPermissionDenied = errors.New(string(KindPermissionDenied))
	ErrTimeout          = errors.New(string(KindTimeout))
	ErrCanceled         = errors.New(string(KindCanceled))
	ErrMemoryLimit      = errors.New(string(KindMemoryLimit))
	ErrOutputLimit      = errors.New(string(KindOutputLimit))
	ErrTrap             = errors.New(string(KindTrap))
	ErrSkillError       = errors.New(string(KindSkillError))
	ErrBusy             = errors.New(string(KindBusy))
	ErrInternal         = errors.New(string(KindInternal))
	ErrInterrupted      = errors.New(string(KindInterrupted))
	ErrPendingApproval  = errors.New(string(KindPendingApproval))
	ErrQuotaExceeded    = errors.New(string(KindQuotaExceeded))
)

// Causes an Error may wrap, for faces that answer them differently (errors.Is).
var (
	// ErrClosed: the runtime was closed (Close); a busy run, never admitted.
	ErrClosed = errors.New("the runtime is closed")
	// ErrBroken: the skill exists but its package is broken; a not_found run.
	ErrBroken = errors.New("the skill is broken")
	// ErrNotExecutable: the skill has instructions only; a not_found run.
	ErrNotExecutable = errors.New("the skill has instructions only")
	// ErrModuleChanged: the module file is no longer the one the run's pinned version was loaded
	// (and checked) with, so it is not compiled; a not_found run. A reload picks up the new one.
	ErrModuleChanged = errors.New("the module changed since this version was loaded")
	// ErrNoRoomNow: a run that asked not to wait (Request.NoWait) found no room to run at once;
	// a busy run, never admitted.
	ErrNoRoomNow = errors.New("no room to run now")
)

var sentinels = map[ErrorKind]error{
	KindInvalidArgs: ErrInvalidArgs, KindNotFound: ErrNotFound, KindPermissionDenied: ErrPermissionDenied,
	KindTimeout: ErrTimeout, KindCanceled: ErrCanceled, KindMemoryLimit: ErrMemoryLimit,
	KindOutputLimit: ErrOutputLimit, KindTrap: ErrTrap, KindSkillError: ErrSkillError, KindBusy: ErrBusy,
	KindInternal: ErrInternal, KindInterrupted: ErrInterrupted, KindPendingApproval: ErrPendingApproval,
	KindQuotaExceeded: ErrQuotaExceeded,
}

// Error is the error of a failed run. errors.Is matches the sentinel of its Kind, and Unwrap
// reaches the cause (a wazero trap, a context error, a [*NotFoundError], ...), when there is one.
//
// Message, and so Error, is what every face may hand a remote client: it never names a path of
// the host. The cause may (a NotFoundError names the skills directories searched): it is the
// operator's, for the CLI and the logs.
type Error struct {
	Kind    ErrorKind
	Skill   string
	Message string
	Err     error
	// RetryAfter is, for a busy run or a quota_exceeded one, how long the caller had better wait
	// before trying again.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Skill == "" {
		return fmt.Sprintf("%s: %s", e.Kind, e.Message)
	}
	return fmt.Sprintf("skill %q: %s: %s", e.Skill, e.Kind, e.Message)
}

// Is reports whether target is the sentinel of e's kind.
func (e *Error) Is(target error) bool { return sentinels[e.Kind] == target }

func (e *Error) Unwrap() error { return e.Err }

func Errorf(kind ErrorKind, skill string, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Skill: skill, Message: fmt.Sprintf(format, args...), Err: err}
}
