package runtime

import "time"

// CompileEvent says that a compilation started or ended. Compiling a large module the first
// time takes seconds (an interpreter, a standard-Go skill); later runs load it from the cache in
// milliseconds. A face shows the wait to a person (the CLI, on a terminal, once it lasts) and
// nothing otherwise: the runtime only says what happens.
type CompileEvent struct {
	// What is compiled, in words: "skill word-count", "the cpython interpreter".
	What string
	// Skill is the skill's id, or "" for an interpreter.
	Skill string
	// Bytes is the module's size, 0 when not known.
	Bytes int
	// Done is false when the compilation starts, true when it ends, with Took and Err.
	Done bool
	Took time.Duration
	Err  error
}

// compileProgress reports ev to fn (Config.OnCompile) as started, and returns the function that
// reports it ended. A nil fn costs nothing.
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
