package hostfuncs

import (
	"errors"
	"fmt"
)

// Status is how the host answered a SkillContext operation. The values are part of the guest ABI
// (docs/abi.md §3): every adapter sends them to the guest as they are.
type Status uint8

const (
	StatusOK       Status = 0
	StatusNotFound Status = 1
	StatusDenied   Status = 2
	StatusInvalid  Status = 3
	StatusLimit    Status = 4
	StatusFailed   Status = 5
)

var statusNames = [...]string{"ok", "not_found", "denied", "invalid", "limit", "failed"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", s)
}

// Sentinels a *Refusal matches with errors.Is, one per status but OK.
var (
	ErrNotFound = errors.New("not_found")
	ErrDenied   = errors.New("denied")
	ErrInvalid  = errors.New("invalid")
	ErrLimit    = errors.New("limit")
	ErrFailed   = errors.New("failed")
)

var statusErrs = map[Status]error{StatusNotFound: ErrNotFound, StatusDenied: ErrDenied,
	StatusInvalid: ErrInvalid, StatusLimit: ErrLimit, StatusFailed: ErrFailed}

// Refusal is a SkillContext operation's answer other than success: a status the skill can handle
// and a message for it. It is an answer to the guest, never a host failure: the operations return
// no other error. The message names only what the guest named (virtual paths, its own URL), never
// a host path or a blocked address.
type Refusal struct {
	Status  Status
	Message string
}

func (r *Refusal) Error() string { return r.Status.String() + ": " + r.Message }

// Is matches the sentinel of r's status (ErrDenied for StatusDenied, ...).
func (r *Refusal) Is(target error) bool { return statusErrs[r.Status] == target }

func refuse(s Status, format string, args ...any) *Refusal {
	return &Refusal{Status: s, Message: fmt.Sprintf(format, args...)}
}

// StatusOf returns the status an operation's error stands for: StatusOK for nil, the Refusal's
// status, and StatusFailed for anything else (which the operations never return).
func StatusOf(err error) (Status, string) {
	if err == nil {
		return StatusOK, ""
	}
	var r *Refusal
	if errors.As(err, &r) {
		return r.Status, r.Message
	}
	return StatusFailed, err.Error()
}
