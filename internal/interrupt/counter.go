package interrupt

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// A function that loops counts its loops in a local of its own, $c, not in $budget. wazevo
// compiles each global.get and global.set of $budget as loads and a store through the module
// context, so a loop that counts in the global carries a store and a load of memory from one
// iteration to the next; a local stays in a register, or at least in the function's own frame.
// CPU-bound JavaScript in QuickJS ran 1.2-1.55x the reactor without instrumentation with the
// global's count, 1.03-1.18x with the local's (internal/quickjs BenchmarkCPU).
//
// $c is what the function's loops used and has not yet charged to $budget. It starts at 0 (every
// local does). A loop adds its weight to $c, and only when $c reaches ChargeEvery does it branch
// to $Y, whose header charges $c to $budget and yields if that is spent:
//
//	loop $Y (bt)
//	  local.get $c  i32.const ChargeEvery  i32.ge_s  if
//	    global.get $budget  local.get $c  i32.sub  global.set $budget   ;; the charge
//	    i32.const 0  local.set $c
//	    global.get $budget  i32.const 0  i32.le_s  if  ...the yield...  end
//	  end
//	  loop $L (bt)
//	    local.get $c  i32.const W  i32.add  local.tee $c
//	    i32.const ChargeEvery  i32.ge_s  br_if $Y
//	    ...body...
//	  end
//	end
//
// Every way out of the function charges what is left, before the stack count's restore. An
// exception thrown through the function skips that charge, so a function that catches one
// (try_table) counts in $budget as before: its loop could otherwise run its callee's work,
// uncharged, in every iteration. (Skillbox's runtime enables no exception handling, so its
// guests have neither; the rule is there for a caller that enables it.)
//
// The charge is a subtraction from the global, not a store of a copy, so a Stop that empties
// $budget meanwhile is not undone. The calls themselves still count in $budget at every entry,
// so a Stop is seen at the next call or the next charge: within ChargeEvery of loop weight.
// What the budget has not yet been charged is at most ChargeEvery (and a loop's weight) for each
// frame on the stack, so between two yields a guest runs at most Budget and that: a guest that
// recursed as deep as its stack count allows (about 8,000 frames of the smallest estimate), each
// frame looping just under ChargeEvery before its call, would hold back about 500 budgets, some tens
// of milliseconds of tight loops.
//
// A function declares $c as one more i32 local, after its own; the walker refuses guest code that
// names a local past the function's own, which would name $c once it is added. The self-check
// knows a counted function by the marker at its start (`local.get $c drop`, which compiles to
// nothing), and then refuses guest code that names $c at all.

// ChargeEvery is how much of its loops' weight a function counts in $c before it charges it to
// $budget.
const ChargeEvery = 1 << 16

// maxLocalWeight bounds a counted loop's weight, well under ChargeEvery: after a charge, $c
// starts again from 0, and a loop whose weight alone reached ChargeEvery would branch back to
// $Y before its body ever ran. CPython's evaluation loop, a switch over 50 KB of code of which
// an iteration runs a little, then charges every 16 iterations rather than at each.
const maxLocalWeight = ChargeEvery / 16

// appendLocalHead appends $Y's header of a counted loop.
func (q *seqs) appendLocalHead(b []byte, c uint32) []byte {
	b = appendLocal(b, 0x20, c)
	b = appendS32(append(b, 0x41), ChargeEvery)
	b = append(b, 0x4e, 0x04, 0x40) // i32.ge_s, if
	b = q.appendCharge(b, c)
	b = appendLocal(append(b, 0x41, 0x00), 0x21, c) // i32.const 0, local.set $c
	b = wasmbin.AppendU32(append(b, 0x23), q.budget)
	b = append(b, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0, i32.le_s, if
	b = append(b, q.yield...)
	return append(b, 0x0b, 0x0b)
}

// appendLocalCheck appends the count at a counted loop's header (weight w) and its branch to $Y.
func (q *seqs) appendLocalCheck(b []byte, c uint32, w int32) []byte {
	w = min(w, maxLocalWeight)
	b = appendLocal(b, 0x20, c)
	b = appendS32(append(b, 0x41), w)
	b = appendLocal(append(b, 0x6a), 0x22, c) // i32.add, local.tee $c
	b = appendS32(append(b, 0x41), ChargeEvery)
	return append(b, 0x4e, 0x0d, 0x01) // i32.ge_s, br_if 1
}

// appendCharge appends the charge of $c to $budget.
func (q *seqs) appendCharge(b []byte, c uint32) []byte {
	b = wasmbin.AppendU32(append(b, 0x23), q.budget)
	b = appendLocal(b, 0x20, c)
	return wasmbin.AppendU32(append(b, 0x6b, 0x24), q.budget)
}

// appendMark appends the marker of a counted function: local.get $c, drop.
func appendMark(b []byte, c uint32) []byte { return append(appendLocal(b, 0x20, c), 0x1a) }

// counterDecl is the declaration of $c appended to a counted function's locals: one i32.
var counterDecl = []byte{0x01, 0x7f}

// appendLocal appends local.get, local.set or local.tee (op) of local c.
func appendLocal(b []byte, op byte, c uint32) []byte {
	return wasmbin.AppendU32(append(b, op), c)
}

// matchLocalCheck, in verify mode, steps over a counted loop's check (of any weight).
func (w *walker) matchLocalCheck(r *wasmbin.Reader) error {
	c := uint32(w.counter)
	w.scratch = w.seqs.appendLocalCheck(w.scratch[:0], c, 1)
	return expectAround(r, w.scratch, 1+wasmbin.SizeU32(c)+1) // local.get $c, i32.const
}
