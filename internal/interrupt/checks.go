package interrupt

import "github.com/skillbox-dev/skillbox/internal/wasmbin"

// The code Instrument inserts. Two globals are appended: $stop (0 while the guest may run) and
// $budget, which every function entry and every loop iteration decrements by a weight, the
// byte length of the function or loop body (at least 1, at most maxWeight), so that it counts
// roughly the code run. When it reaches zero or below, the guest yields: `memory.grow 0`, which
// wazero's compiler runs in Go (an exit from compiled code, where the goroutine can be
// preempted), then traps if $stop is set, then refills $budget.
//
// The yield is what makes the flag safe to rely on. Go cannot preempt a goroutine running
// compiled wasm; a loop that never leaves it holds its P, and a garbage collection that starts
// meanwhile waits for it to stop the world, while the goroutine that would set $stop is itself
// stopped: the process hangs. Checking $stop alone at each iteration costs nothing measurable
// but leaves exactly that hang.
//
// A call anywhere in a loop's body (memory.grow is one) makes wazero's register allocator keep
// the loop's values on the stack: a tight loop runs twice as slow even if the call is never
// taken. So each loop is split: the yield sits in the header of a new outer loop $Y, and the
// original loop, now inside it, only counts and branches out to $Y when the budget is spent.
// Entering the loop passes $Y's header too, so the yield there is taken only when the budget is
// spent: one that yielded at every entry made each entry into an inner loop an exit to Go, and
// code that enters short loops often (QuickJS's JSON, CPython's) ran 1.5-2x slower for it:
//
//	loop $Y (bt)                 ;; the original loop's block type
//	  global.get $budget i32.const 0 i32.le_s if
//	    i32.const 0 memory.grow drop
//	    global.get $stop if unreachable end
//	    i32.const Budget global.set $budget
//	  end
//	  loop $L (bt)               ;; the original loop
//	    global.get $budget i32.const W i32.sub global.set $budget
//	    global.get $budget i32.const 0 i32.le_s br_if $Y   ;; the loop's params go along
//	    ...body, its branch labels past $L one deeper...
//	  end
//	end
//
// A function body starts with the same count, and yields in an `if` (no loop to split there).
//
// That is the shape of a function that catches exceptions (try_table). Any other function that
// loops counts its loops in a local instead, and charges $budget from it (counter.go).

// Budget is the value a yield refills $budget with: about the bytes of code the guest runs
// between two yields, so between two chances for the scheduler and the garbage collector.
const Budget = 1 << 20

// maxWeight bounds one decrement, so that even a huge loop body runs a few iterations between
// yields rather than yielding at each.
const maxWeight = Budget / 16

func weight(n int) int32 {
	return int32(max(1, min(n, maxWeight)))
}

// seqs builds and recognises the inserted sequences for one module's globals.
type seqs struct {
	stop, budget, stack uint32
	yield               []byte
	head                []byte            // $Y's header: if the budget is spent, the yield
	guards              map[uint32][]byte // by global: the check after its global.set (guard.go)
	count1              []byte            // the count of weight 1, which matchCount compares around the weight
}

func newSeqs(stop, budget, stack uint32) seqs {
	y := []byte{0x41, 0x00, 0x40, 0x00, 0x1a, 0x23} // i32.const 0, memory.grow 0, drop, global.get
	y = wasmbin.AppendU32(y, stop)
	y = append(y, 0x04, 0x40, 0x00, 0x0b, 0x41) // if, unreachable, end, i32.const
	y = appendS32(y, Budget)
	y = wasmbin.AppendU32(append(y, 0x24), budget) // global.set
	q := seqs{stop: stop, budget: budget, stack: stack, yield: y}
	// $Y's header: the yield, when the budget is spent (not at every entry into the loop).
	h := wasmbin.AppendU32([]byte{0x23}, budget)
	h = append(append(h, 0x41, 0x00, 0x4c, 0x04, 0x40), y...)
	q.head = append(h, 0x0b)
	q.count1 = q.appendCount(nil, 1)
	return q
}

// appendCount appends the decrement of $budget by w and the test of what is left:
// global.get $budget, i32.const w, i32.sub, global.set $budget, global.get $budget,
// i32.const 0, i32.le_s.
func (q *seqs) appendCount(b []byte, w int32) []byte {
	b = wasmbin.AppendU32(append(b, 0x23), q.budget)
	b = appendS32(append(b, 0x41), w)
	b = wasmbin.AppendU32(append(b, 0x6b, 0x24), q.budget)
	b = wasmbin.AppendU32(append(b, 0x23), q.budget)
	return append(b, 0x41, 0x00, 0x4c)
}

// appendEntry appends the function-entry sequence: the count, then if (empty) yield end.
func (q *seqs) appendEntry(b []byte, w int32) []byte {
	b = append(q.appendCount(b, w), 0x04, 0x40)
	return append(append(b, q.yield...), 0x0b)
}

// appendLoopCheck appends the sequence at the original loop's header: the count, then br_if 1
// (to $Y).
func (q *seqs) appendLoopCheck(b []byte, w int32) []byte {
	return append(q.appendCount(b, w), 0x0d, 0x01)
}

// matchCount, in verify mode, steps over a count (of any weight) at r.Pos.
func (q *seqs) matchCount(r *wasmbin.Reader) error {
	return expectAround(r, q.count1, 1+wasmbin.SizeU32(q.budget)+1) // global.get $budget, i32.const
}

// expectAround steps over seq at r.Pos, a sequence written with a weight of 1, whose one-byte
// weight at seq[at] may be any s32 there.
func expectAround(r *wasmbin.Reader, seq []byte, at int) error {
	if err := expect(r, seq[:at]); err != nil {
		return err
	}
	if err := r.S32("weight"); err != nil {
		return err
	}
	return expect(r, seq[at+1:])
}

func (q *seqs) matchEntry(r *wasmbin.Reader) error {
	if err := q.matchCount(r); err != nil {
		return err
	}
	if err := expect(r, []byte{0x04, 0x40}); err != nil {
		return err
	}
	if err := expect(r, q.yield); err != nil {
		return err
	}
	return expect(r, []byte{0x0b})
}

func (q *seqs) matchLoopCheck(r *wasmbin.Reader) error {
	if err := q.matchCount(r); err != nil {
		return err
	}
	return expect(r, []byte{0x0d, 0x01})
}

// expect steps over want at r.Pos, or refuses.
func expect(r *wasmbin.Reader, want []byte) error {
	if r.Left() < len(want) || string(r.B[r.Pos:r.Pos+len(want)]) != string(want) {
		return refuse(r.Pos, "not the inserted sequence")
	}
	r.Pos += len(want)
	return nil
}

// appendS32 appends v as a signed LEB128 of the fewest bytes.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
