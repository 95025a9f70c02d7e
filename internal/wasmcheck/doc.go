// Package wasmcheck is a bounds gate for untrusted WebAssembly binaries, run before wazero sees
// them.
//
// wazero v1.12's binary decoder allocates from the counts a module declares before it checks that
// they fit the bytes that follow (internal/wasm/binary: section.go, code.go, element.go, data.go,
// names.go): a 20-byte module whose code section declares 2^32-1 entries makes it ask the OS for
// hundreds of GB, and the Go runtime dies with an unrecoverable "out of memory" — the host, not
// the skill. One function declaring 2^32-1 locals costs 32 GB (8 bytes a local); a table.grow
// of ~2^32 entries does the same at run time when the table declares no maximum; and a large
// enough module or function takes seconds and hundreds of MB to compile.
//
// [Check] walks every section with a parser that never allocates by a declared count: each count
// and size is checked against [Limits] and against the bytes that actually follow before it is
// used. It returns the module to compile, which is the input itself unless a defined table needed
// a maximum (so that table.grow past its share of [Limits.MaxTableEntries] returns -1 instead of
// growing the host's memory) or a malformed "name" section had to be dropped. Instruction bodies
// are not parsed: wazero validates them, and their size is bounded here.
package wasmcheck
