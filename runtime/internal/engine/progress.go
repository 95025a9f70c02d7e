package engine

import "time"

// CompileEvent says that a compilation started or ended: runtime.CompileEvent's fields, in the
// same order, which the runtime converts it into.
type CompileEvent struct {
	What  string
	Skill string
	Bytes int
	Done  bool
	Took  time.Duration
	Err   error
}

// compileProgress reports ev to fn (runtime.Config.OnCompile) as started, and returns the function
// that reports it ended. A nil fn costs nothing.
func compileProgress(fn func(CompileEvent), ev CompileEvent) (done func(error)) {
	if fn == nil {
		return func(error) {}
	}
	start := time.Now()
	fn(ev)
	return func(err error) {
		ev.Done, ev.Took, ev.Err = true, time.Since(start), err
		fn(ev)
	}
}

// interpreterName names an interpreter engine for a person.
func interpreterName(engine string) string {
	switch engine {
	case "cpython":
		return "the Python interpreter (CPython)"
	case "quickjs":
		return "the JavaScript interpreter (QuickJS)"
	}
	return "the " + engine + " interpreter"
}
