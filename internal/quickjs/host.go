package quickjs

import (
	"context"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Host serves the SkillContext of one run: one method per operation. The runtime implements it
// over a *hostfuncs.Call, whose grant checks apply to scripts exactly as to compiled skills.
//
// Each call gets a context that ends at the operation's timeout (Limits.HostCallTimeout) or the
// run's deadline, whichever is first; a method that does not return by then is abandoned (its
// answer is dropped) and the skill sees a TimeoutError, so a host method must honour ctx to free
// its goroutine.
//
// # Errors
//
// A *hostfuncs.Refusal is the answer the skill sees: StatusDenied rejects with an error named
// "PermissionDenied", StatusNotFound with "NotFound" (but Env answers null), StatusInvalid with
// "InvalidRequest", StatusLimit with "LimitExceeded". Any other error is "HostError" with its
// message.
type Host interface {
	Fetch(ctx context.Context, req hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error)
	Env(ctx context.Context, name string) (string, error)
	ReadFile(ctx context.Context, path string) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
	// Log records one line. source says where it came from: "ctx" (ctx.log), "console"
	// (console.*), "stdout" or "stderr" (print, and anything else the interpreter writes).
	Log(level, source, message string)
}
