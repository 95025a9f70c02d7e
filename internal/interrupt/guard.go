package interrupt

import (
	"errors"
	"math"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// Guard bounds a global that guest code moves down as its calls nest: the C stack pointer
// (__stack_pointer) of a module that wasm-ld linked with its stack above its static data. Such a
// stack that runs past its end does not trap: it overwrites the data below it (the allocator's
// state, an interpreter's tables) and the guest goes on with them corrupted. After each
// global.set of Global in guest code, InstrumentShipped inserts a check that the new value is
// not below Min, signed (a pointer that wrapped below zero is caught too), and the guest traps
// as on a stack overflow when it is: StackOverflow reports ErrCStackOverflow.
//
// A function that never stores the pointer back (a leaf) may still use a frame below it: Min
// must leave room for the largest such frame above the data.
type Guard struct {
	Global uint32
	Min    int32
}

// ErrCStackOverflow is what a run that trapped on a Guard failed with.
var ErrCStackOverflow = errors.New("stack overflow: the guest's calls nest deeper than its C stack")

// guardTrapped is the stack count a Guard's check leaves when it traps: below any count a call
// can leave (a call's weight is at most StackBytes+1), so StackOverflow can tell the two apart.
const guardTrapped = math.MinInt32

// appendGuard appends the check after a global.set of g: global.get g, i32.const Min,
// i32.lt_s, if, i32.const guardTrapped, global.set $stack, unreachable, end.
func (q *seqs) appendGuard(b []byte, g Guard) []byte {
	b = wasmbin.AppendU32(append(b, 0x23), g.Global)
	b = appendS32(append(b, 0x41), g.Min)
	b = appendS32(append(b, 0x48, 0x04, 0x40, 0x41), guardTrapped)
	b = wasmbin.AppendU32(append(b, 0x24), q.stack)
	return append(b, 0x00, 0x0b)
}

// guardAfter returns the check that must follow a global.set of idx, or nil.
func (q *seqs) guardAfter(idx uint32) []byte { return q.guards[idx] }

// withGuards makes the checks of guards, refusing one that names a global guest code cannot.
func (q *seqs) withGuards(guards []Guard, guestGlobals uint32) error {
	for _, g := range guards {
		if g.Global >= guestGlobals {
			return refuse(0, "a guard on global %d: the module has %d", g.Global, guestGlobals)
		}
		if q.guards == nil {
			q.guards = map[uint32][]byte{}
		}
		q.guards[g.Global] = q.appendGuard(nil, g)
	}
	return nil
}
