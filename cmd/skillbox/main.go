// Command skillbox runs WebAssembly skills for AI agents: list, inspect, validate and run them.
//
// main is a thin wrapper over run, so the whole CLI is tested in-process.
package main

import (
	"os"

	"github.com/skillbox-dev/skillbox/runtime"
)

func main() {
	// First of all: a process this program started to compile a module in compiles it and exits.
	runtime.MaybeCompileChild()
	os.Exit(runCLI(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
