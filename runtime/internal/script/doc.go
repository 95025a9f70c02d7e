// Package script runs the runtime's script skills and programs: a JavaScript or TypeScript
// bundle in QuickJS, a Python file in CPython, each interpreter itself a wasm module in wazero.
//
// A Job is what one run evaluates, prepared from a loaded skill (registry.Skill): a script
// skill's execute, checked to be the code its version was checked with (ExecuteJob), or one of
// any skill's programs under its programs' grant (ProgramJob). Run evaluates it in an
// interpreter the engine lent the run, with the grant's directories mounted for Python and the
// bundle's bytecode compiled once for JavaScript. Charge is what such a run may hold of the
// host's memory, for admission.
//
// The runtime owns the rest of a run: admission, its timeout and memory meter, its host calls,
// and the kind of error its failure is.
package script
