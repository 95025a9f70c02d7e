package broker

import (
	"context"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// Host serves the SkillContext of one run: one method per operation.
//
// Fetch, ReadFile and WriteFile get a context that ends at the operation's timeout
// (Broker.Timeout) or the run's deadline, whichever is first; a method that does not return by
// then is abandoned (its answer is dropped) and the skill sees a timeout, so it must honour ctx
// to free its goroutine. Env and Log are called on the guest's own goroutine, without a timeout
// of their own: they must not block (a lookup in the grant, an append to the run's logs).
//
// # Errors
//
// A *hostfuncs.Refusal is the answer the skill sees: its Status names the error the guest raises
// (StatusDenied is PermissionDenied, StatusNotFound NotFound — but Env answers null —,
// StatusInvalid InvalidRequest, StatusLimit LimitExceeded). Any other error is a HostError with
// its message.
type Host interface {
	Fetch(ctx context.Context, req hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error)
	Env(ctx context.Context, name string) (string, error)
	ReadFile(ctx context.Context, path string) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
	// Log records one line. source says where it came from: "ctx" (ctx.log), "console"
	// (console.*, Python's logging), "stdout" or "stderr" (print, and anything else the
	// interpreter writes).
	Log(level, source, message string)
}

// Permitter is a Host that may put what an operation needs beyond its run's grant to a person
// (CallHost does): the broker calls Permit before the operation, outside its timeout.
type Permitter interface {
	Permit(ctx context.Context, op, target string)
}

// CallHost is the Host of a run whose grant is call's: the same checks, counts and logs as the
// host functions of a compiled skill.
type CallHost struct{ Call *hostfuncs.Call }

func (h CallHost) Fetch(ctx context.Context, req hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error) {
	return h.Call.Fetch(ctx, req)
}

func (h CallHost) Env(ctx context.Context, name string) (string, error) { return h.Call.Env(ctx, name) }

func (h CallHost) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return h.Call.ReadFile(ctx, path)
}

func (h CallHost) WriteFile(ctx context.Context, path string, data []byte) error {
	return h.Call.WriteFile(ctx, path, data)
}

// Permit asks a person for what op on target needs beyond the run's grant, when the run may ask
// one (hostfuncs.Call.Permit): the broker calls it before it starts the operation's timeout.
func (h CallHost) Permit(ctx context.Context, op, target string) { h.Call.Permit(ctx, op, target) }

func (h CallHost) Log(level, source, message string) { h.Call.Log(level, source, message) }
