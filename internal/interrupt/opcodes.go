package interrupt

// The immediates of every instruction wazero v1.12 decodes (internal/wasm/func_validation.go,
// the validator every module passes before it compiles; the compiler's frontend,
// internal/engine/wazevo/frontend/lower.go, reads the same bytes). An opcode missing from these
// tables is refused, so that a module the tables do not describe runs as it is.

// imm is how the immediates of a one-byte opcode are encoded.
type imm uint8

const (
	immUnknown  imm = iota // not an opcode wazero takes, or one Instrument will not touch
	immNone                // no immediate
	immBlock               // a block type: block, if
	immLoop                // a block type: the loop is split and counted
	immEnd                 // end: closes a block or the function
	immU32                 // one u32 index
	immLabel               // a u32 branch label, rewritten if it crosses an instrumented loop
	immU32x2               // two u32: call_indirect and return_call_indirect (type, table)
	immGlobal              // a u32 global index, which must exist in the input
	immMemarg              // align u32 (< 32: wazero has no multi-memory) and offset u32
	immZero                // one 0x00 byte: memory.size, memory.grow
	immS32                 // i32.const
	immS64                 // i64.const
	immF32                 // f32.const: 4 bytes
	immF64                 // f64.const: 8 bytes
	immBrTable             // a vector of u32 labels and a default label
	immSelectT             // select with types: the byte 1 and one value type
	immTryTable            // block type, then a vector of catch clauses
	immRefNull             // a heap type, read by wazero as a u32
	immMisc                // the 0xFC prefix
	immSIMD                // the 0xFD prefix
	immAtomic              // the 0xFE prefix
)

// ops maps a one-byte opcode to its immediates. Not here, so refused: the legacy exception
// handling opcodes (0x06 try, 0x07 catch, 0x09 rethrow, 0x18 delegate, 0x19 catch_all, which
// wazero refuses), the GC prefix 0xFB and everything wazero does not decode.
var ops = func() (t [256]imm) {
	set := func(from, to byte, k imm) {
		for op := int(from); op <= int(to); op++ {
			t[op] = k
		}
	}
	t[0x00] = immNone // unreachable
	t[0x01] = immNone // nop
	t[0x02] = immBlock
	t[0x03] = immLoop
	t[0x04] = immBlock // if
	t[0x05] = immNone  // else
	t[0x08] = immU32   // throw (exception handling): tag index
	t[0x0a] = immNone  // throw_ref
	t[0x0b] = immEnd
	t[0x0c] = immLabel // br
	t[0x0d] = immLabel // br_if
	t[0x0e] = immBrTable
	t[0x0f] = immNone  // return
	t[0x10] = immU32   // call
	t[0x11] = immU32x2 // call_indirect
	t[0x12] = immU32   // return_call (tail calls: recursion without a loop, caught at entry)
	t[0x13] = immU32x2 // return_call_indirect
	t[0x14] = immU32   // call_ref (typed function references)
	t[0x15] = immU32   // return_call_ref
	t[0x1a] = immNone  // drop
	t[0x1b] = immNone  // select
	t[0x1c] = immSelectT
	t[0x1f] = immTryTable
	set(0x20, 0x22, immU32) // local.get, local.set, local.tee
	t[0x23] = immGlobal     // global.get
	t[0x24] = immGlobal     // global.set
	t[0x25] = immU32        // table.get
	t[0x26] = immU32        // table.set
	set(0x28, 0x3e, immMemarg)
	t[0x3f] = immZero // memory.size
	t[0x40] = immZero // memory.grow
	t[0x41] = immS32
	t[0x42] = immS64
	t[0x43] = immF32
	t[0x44] = immF64
	set(0x45, 0xc4, immNone) // numeric, conversions, sign extension: no gap in this range
	t[0xd0] = immRefNull
	t[0xd1] = immNone  // ref.is_null
	t[0xd2] = immU32   // ref.func
	t[0xd4] = immNone  // ref.as_non_null
	t[0xd5] = immLabel // br_on_null
	t[0xd6] = immLabel // br_on_non_null
	t[0xfc] = immMisc
	t[0xfd] = immSIMD
	t[0xfe] = immAtomic
	return t
}()

// Immediates of the 0xFC (misc) sub-opcodes wazero decodes, 0 to 17; wazero reads the
// sub-opcode as a u32.
const (
	miscNone       = iota // the saturating truncations, 0 to 7
	miscU32               // data.drop, elem.drop, table.grow/size/fill
	miscU32Zero           // memory.init: data index, then a 0x00 memory index
	miscZeroZero          // memory.copy: two 0x00 memory indices
	miscZero              // memory.fill: one 0x00 memory index
	miscU32x2             // table.init (elem, table), table.copy (table, table)
	miscUnknown           // past 17
	lastMiscOpcode = 0x11
)

func miscImm(sub uint32) int {
	switch {
	case sub <= 0x07:
		return miscNone
	case sub == 0x08:
		return miscU32Zero
	case sub == 0x09, sub == 0x0d, sub >= 0x0f && sub <= lastMiscOpcode:
		return miscU32
	case sub == 0x0a:
		return miscZeroZero
	case sub == 0x0b:
		return miscZero
	case sub == 0x0c, sub == 0x0e:
		return miscU32x2
	}
	return miscUnknown
}

// Immediates of the 0xFD (SIMD) sub-opcodes.
const (
	simdUnknown = iota
	simdNone    // no immediate
	simdMemarg  // loads, store, load32/64_zero
	simdMemLane // load/store lane: memarg, then a lane byte
	simdLane    // extract/replace lane: a lane byte
	simdBytes16 // v128.const, i8x16.shuffle: 16 bytes
)

// simdImm maps a SIMD sub-opcode to its immediates. wazero reads the sub-opcode as ONE byte,
// where the spec has a u32: for 0x80 to 0xFF the spec's encoding is that byte and 0x01, which
// wazero reads as the opcode and then a nop. body.go takes only that form, on which both agree.
// The gaps (0x9a, 0xa2, ...) are opcodes the final SIMD proposal never assigned; relaxed SIMD
// (0x100 and up) is not in wazero.
var simdImm = func() (t [256]uint8) {
	for op := 0x0e; op <= 0xff; op++ {
		t[op] = simdNone
	}
	for _, gap := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2,
		0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[gap] = simdUnknown
	}
	for op := 0x00; op <= 0x0b; op++ {
		t[op] = simdMemarg // v128.load, the extending loads, the splat loads, v128.store (0x0b)
	}
	t[0x0c] = simdBytes16 // v128.const
	t[0x0d] = simdBytes16 // i8x16.shuffle
	for op := 0x15; op <= 0x22; op++ {
		t[op] = simdLane
	}
	for op := 0x54; op <= 0x5b; op++ {
		t[op] = simdMemLane
	}
	t[0x5c] = simdMemarg // v128.load32_zero
	t[0x5d] = simdMemarg // v128.load64_zero
	return t
}()

// Sub-opcodes of the 0xFE (threads) prefix wazero decodes. wazero reads the sub-opcode as one
// byte; all of these are below 0x80, where that is also the spec's u32.
const (
	atomicNotify = 0x00
	atomicWait32 = 0x01
	atomicWait64 = 0x02
	atomicFence  = 0x03
	atomicFirst  = 0x10 // i32.atomic.load
	atomicLast   = 0x4e // i64.atomic.rmw32.cmpxchg_u
)
