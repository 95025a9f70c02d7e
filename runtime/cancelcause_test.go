package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
)

// A run canceled with a cause (context.WithCancelCause) says in its message who canceled it;
// one canceled without a cause blames its caller, as before.
func TestCanceledRunNamesItsCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixture(t, dir, "ticker", simple("ticker", `"parameters":{"type":"object"},"limits":{"timeoutMs":30000}`), "ticker")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	for _, tc := range []struct {
		name  string
		cause error
		want  string
	}{
		{"with a cause", errors.New(`key "ops" asked for it`), `the run was canceled: key "ops" asked for it`},
		{"without one", nil, "the caller canceled the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			ticks := 0
			res, err := rt.Run(ctx, run.Request{Skill: "ticker", Args: []byte(`{"count":1000,"ms":20}`), OnEvent: func(e run.Event) {
				if e.Type == "log" && e.Log.Message == "tick" {
					if ticks++; ticks == 3 {
						cancel(tc.cause)
					}
				}
			}, Who: testAdmin})
			// Left alone, 1000 ticks of 20ms end in success: canceled says the cancellation
			// ended it.
			if !errors.Is(err, run.ErrCanceled) || res.Error == nil || res.Error.Kind != run.KindCanceled {
				t.Fatalf("got %v (%+v), want canceled", err, res.Error)
			}
			if res.Error.Message != tc.want {
				t.Errorf("message %q, want %q", res.Error.Message, tc.want)
			}
		})
	}
}
