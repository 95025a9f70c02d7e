package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
)

// The engine's compile errors and cache directory refusals reach a caller of the runtime as the
// runtime's own types, wherever they are in the chain, with the engine's message and the rest of
// the chain kept.
func TestEngineErrorsArePublic(t *testing.T) {
	wrapped := fmt.Errorf("compile x: %w", errors.Join(context.Canceled, &engine.CompileError{Bound: "compileMemory", Msg: "too big"}))
	err := fromEngine(wrapped)
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Bound != "compileMemory" || ce.Msg != "too big" {
		t.Errorf("fromEngine(%v): no *CompileError in %#v", wrapped, err)
	}
	if err.Error() != wrapped.Error() || !errors.Is(err, context.Canceled) {
		t.Errorf("fromEngine(%v) = %v: the message or the chain changed", wrapped, err)
	}

	bare := &engine.CacheDirError{Path: "/x", Found: "is a file", Err: context.DeadlineExceeded}
	var cde *CacheDirError
	if err := fromEngine(bare); !errors.As(err, &cde) || cde.Path != "/x" || err.Error() != bare.Error() || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("fromEngine(%v) = %#v", bare, err)
	}
	if _, ok := fromEngine(bare).(*CacheDirError); !ok {
		t.Errorf("an engine error that is the whole error is the runtime's type itself")
	}
	if other := errors.New("other"); fromEngine(other) != other || fromEngine(nil) != nil {
		t.Errorf("fromEngine changed an error that is not the engine's")
	}
}
