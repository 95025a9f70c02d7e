// Package interrupt rewrites a WebAssembly module so that the host can stop it cheaply.
//
// wazero's own interruption (RuntimeConfig.WithCloseOnContextDone) makes compiled code exit to
// Go at every loop back-edge to look at the module's closed state: a tight loop runs 20 times
// slower with it on. Without it, a guest `loop` that makes no host call cannot be stopped at its
// deadline at all, and every run must end at its deadline.
//
// [Instrument] appends one mutable i32 global to the module, exports it as [StopGlobal], and
// inserts `global.get $stop if unreachable end` at every function entry and loop header. The
// host sets the global to 1 from another goroutine (api.MutableGlobal.Set); the guest traps at
// its next check. wazevo compiles global.get of a defined global as a load from the module
// context (frontend/lower.go, OpcodeGlobalGet and getWasmGlobalValue), and a loop header starts
// a block whose predecessors are not yet known, so the load is never reused from before the
// loop: each iteration sees the host's store. The function-entry check stops recursion that
// never loops, tail calls included.
//
// Instrument decodes every instruction, as wazero v1.12 reads them, to find the loops. Whatever
// it does not know exactly, it leaves alone (ok is false), and the caller runs the module under
// wazero's own interruption: that fallback is what keeps this safe.
package interrupt
