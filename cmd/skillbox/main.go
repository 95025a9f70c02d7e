// Command skillbox runs WebAssembly skills for AI agents: list, inspect, validate and run them.
//
// main is a thin wrapper over run, so the whole CLI is tested in-process.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
