// Package interrupt rewrites a WebAssembly module so that the host can stop it cheaply.
//
// wazero's own interruption (RuntimeConfig.WithCloseOnContextDone) makes compiled code exit to
// Go at every loop back-edge to look at the module's closed state: a tight loop runs over 20
// times slower with it on. Without it, a guest `loop` that makes no host call cannot be stopped
// at its deadline, and every run must end at its deadline.
//
// [Instrument] appends two mutable i32 globals to the module and exports them: a stop flag
// ([StopGlobal]) and a budget ([BudgetGlobal]) that every function entry and loop iteration
// counts down (a function's loops through a local of its own, charged to the budget every
// [ChargeEvery] of weight and on the way out: counter.go). When the budget is spent the guest yields to Go (`memory.grow 0`, which wazero
// runs in Go) and traps if the flag is set. [Stop] sets the flag and empties the budget, from
// any goroutine. checks.go has the inserted code and why each part is there; in short:
//
//   - The flag alone would be free, and is not enough: Go cannot preempt compiled wasm, so a
//     garbage collection that starts while a guest spins waits for it forever, and the
//     goroutine that would set the flag is stopped with the world (measured: the process
//     hangs). The yields give the scheduler and the collector the goroutine back.
//   - A call in a loop (the yield is one) makes a tight loop twice as slow in wazero, even if
//     never taken. So each loop is split: the yield sits in a new loop around it, which the
//     original loop branches to when the budget is spent. spin.wasm runs at 1.00x.
//   - wazevo compiles global.get of a defined global as a load from the module context at each
//     use, not kept in a register across a loop header (frontend/lower.go, OpcodeGlobalGet and
//     getWasmGlobalValue): the guest sees the host's store.
//   - The function-entry count stops recursion that never loops, tail calls included.
//
// Instrument also bounds the wasm call stack, which wazero keeps outside the run's memory limit
// and grows to about 50 MB: a third global counts down, at every function entry, the stack the
// call takes, gives it back on the way out, and traps when it is spent (stack.go).
//
// InstrumentShipped can also bound a global that guest code moves, the C stack pointer of a
// module whose stack sits above its static data (guard.go): past its end, such a stack does not
// trap but overwrites that data.
//
// Instrument decodes every instruction, as wazero v1.12 reads them, to find the loops and the
// branch labels that cross them. Whatever it does not know exactly, it leaves alone (ok is
// false), and the caller runs the module under wazero's own interruption: that fallback is what
// keeps this safe.
package interrupt
