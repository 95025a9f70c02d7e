//go:build race

package engine

// RaceSlowdown scales the defaults that bound a compilation's time. A binary built with -race
// runs the compiler (wazero's, instrumented Go) several times slower: a 4 MB Go-built module
// that compiles in seconds takes a minute or more under the race detector on a busy machine.
// Only such binaries — tests, mostly — get the longer defaults; a set value is kept as set.
const RaceSlowdown = 10
