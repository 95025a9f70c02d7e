package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Example runs a bundled skill the way the README's "Embedding it in Go" shows: that section's
// code block is this function's body, word for word but for the skills directory ("./skills"
// there, from the repository's root; "../skills" here, from runtime/), and TestReadmeEmbedding
// fails when the two differ.
func Example() {
	ctx := context.Background()
	// The engine: the compilation cache (CacheDir "" is the user's cache directory) and the
	// admission. Several Runtimes (tenants) can share one; Shared nil in Config makes a default.
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{
		Admission: runtime.Admission{MaxRuns: 8, MemoryBudget: 2 << 30}, // zero: the defaults
	})
	if err != nil {
		log.Fatal(err) // a cache directory the engine cannot use
	}
	defer sh.Close(ctx) // after the Runtime's (deferred calls run last first)
	rt, err := runtime.New(ctx, runtime.Config{
		SkillDirs: []string{"../skills"}, // scanned in order; the first wins an id clash
		// Policy nil is the default policy: no hosts, files, env or secrets for any skill
		// (PolicyFile: "policy.yaml" reads one, and Reload rereads it).
		// Logger nil discards the runtime's log; TracerProvider nil traces nothing.
		Shared: sh,
	})
	if err != nil {
		log.Fatal(err) // a policy or directory the runtime cannot use
	}
	defer rt.Close(ctx) // waits for runs in flight (bounded by ctx); then Run fails with ErrClosed

	res, err := rt.Run(ctx, run.Request{
		Skill: "word-count",
		Args:  []byte(`{"text":"a b a"}`),
		Who:   access.Local("ops"), // who asks (a face passes its caller's): a runner at least
		OnEvent: func(e run.Event) { // admitted runs only, on the run's goroutine: do not block
			switch {
			case e.Log != nil:
				fmt.Println(e.Type, e.Log.Level, e.Log.Message)
			case e.Result != nil:
				fmt.Println(e.Type, e.Result.Success)
			default:
				fmt.Println(e.Type, e.Status)
			}
		},
	})
	var runErr *run.Error // every error Run returns is one; res.Error says the same
	switch {
	case errors.Is(err, run.ErrTimeout): // each kind has its sentinel: ErrMemoryLimit, ErrBusy...
		fmt.Println("timed out:", err)
	case errors.As(err, &runErr):
		fmt.Println(runErr.Kind, runErr.Message) // not_found, invalid_args, busy, ...
	default:
		fmt.Println(string(res.Result)) // res is never nil: its usage, logs and run id are there too
	}
	// Output:
	// status started
	// status running
	// log debug counted 3 words in 5 characters
	// result true
	// {"words":3,"lines":1,"characters":5,"top":[{"word":"a","count":2},{"word":"b","count":1}]}
}
