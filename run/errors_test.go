package run_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// An Error reads "skill "<id>": <kind>: <message>" (without a skill, "<kind>: <message>"), matches
// the sentinel of its kind and no other, and unwraps to its cause.
func TestErrorFormatting(t *testing.T) {
	e := run.Errorf(run.KindTimeout, "word-count", context.DeadlineExceeded, "after %d ms", 500)
	if got, want := e.Error(), `skill "word-count": timeout: after 500 ms`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&run.Error{Kind: run.KindBusy, Message: "the queue is full"}).Error(), "busy: the queue is full"; got != want {
		t.Errorf("without a skill: Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, run.ErrTimeout) || errors.Is(e, run.ErrCanceled) || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("errors.Is: timeout %v, canceled %v, its cause %v", errors.Is(e, run.ErrTimeout), errors.Is(e, run.ErrCanceled), errors.Is(e, context.DeadlineExceeded))
	}
	broken := run.Errorf(run.KindNotFound, "x", run.ErrBroken, "broken")
	if !errors.Is(broken, run.ErrNotFound) || !errors.Is(broken, run.ErrBroken) || errors.Is(broken, run.ErrNotExecutable) {
		t.Errorf("a not_found run of a broken skill: %v", broken)
	}
	// Each kind has its own sentinel, which reads as the kind.
	sentinels := map[run.ErrorKind]error{
		run.KindInvalidArgs: run.ErrInvalidArgs, run.KindNotFound: run.ErrNotFound, run.KindPermissionDenied: run.ErrPermissionDenied,
		run.KindTimeout: run.ErrTimeout, run.KindCanceled: run.ErrCanceled, run.KindMemoryLimit: run.ErrMemoryLimit,
		run.KindOutputLimit: run.ErrOutputLimit, run.KindTrap: run.ErrTrap, run.KindSkillError: run.ErrSkillError, run.KindBusy: run.ErrBusy,
		run.KindInternal: run.ErrInternal, run.KindInterrupted: run.ErrInterrupted, run.KindPendingApproval: run.ErrPendingApproval,
		run.KindQuotaExceeded: run.ErrQuotaExceeded,
	}
	for kind, sentinel := range sentinels {
		if sentinel.Error() != string(kind) {
			t.Errorf("the sentinel of %s reads %q", kind, sentinel)
		}
		for other, s := range sentinels {
			if got := errors.Is(&run.Error{Kind: kind}, s); got != (other == kind) {
				t.Errorf("an Error of kind %s: errors.Is(%s) = %v", kind, other, got)
			}
		}
	}
}
