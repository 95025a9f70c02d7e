// Package cpython runs Python skills in CPython 3.11 compiled to wasm32-wasi, on wazero: the
// interpreter is compiled once per wazero.Runtime (see [Compile]) and every run gets a fresh
// instance, never reused (see [Run]).
//
// The interpreter (python.wasm) and its standard library (stdlib.zip, .pyc only) are built by
// interpreters/python/build.sh (`make interpreters`) and committed, so that building and testing
// need Go alone. python.wasm is a Wizer snapshot taken after the interpreter initialised and
// imported the driver module skillbox (interpreters/python/skillbox.py) and the standard modules
// most skills use: a run starts in main with all of that done, and main calls skillbox._main.
//
// A run mounts, read-only: the standard library at /usr/local/lib/python3.11 (served from the
// embedded zip) and the skill's directory at /skill (through os.Root, so no symlink leads out of
// it); [Program.FSConfig] may add more. The skill reaches the host through the functions the
// interpreter imports from "skillbox" (see hostcall.go), which carry SkillContext requests to
// [broker.Broker] and the run's outcome back. It gets no environment, no arguments but the
// program's, real clocks, crypto randomness, and a time.sleep that ends at the run's deadline.
//
// # Determinism a snapshot freezes
//
// Everything made while the snapshot was taken is the same in every instance. The driver reseeds
// random at the start of every run from the host's crypto/rand. CPython's str-hash secret
// (PYTHONHASHSEED) cannot change after initialisation — the strings made during it keep their
// hashes — so it stays fixed per build: random when the snapshot is built, the same in every run
// of that build. It matters only to an attacker who can make one run hash many chosen strings
// (hash flooding), which a run's deadline and memory cap already bound.
package cpython
