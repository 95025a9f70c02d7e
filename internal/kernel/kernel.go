// Package kernel is the Extism kernel ABI ("extism:host/env") implemented in Go over raw wazero:
// the memory blocks, input, output, error, variables and log calls that every module built with
// an Extism PDK or a Skillbox SDK imports.
//
// Extism's own go-sdk runs its kernel as a second wasm module in every instance and reaches it
// from Go through exported-function lookups: each guest→kernel call allocated a call stack, the
// kernel's 1 MiB memory was allocated and zeroed every run, every host→wasm call started a
// deadline goroutine, and its allocator walked a list that grew with every block, so host calls
// got dearer the more a run made. Here the blocks live host-side in one arena per run: offsets
// index it, the block table is a sorted slice (binary search), freed blocks are reused from
// size-class lists, and the arena's bytes come from a Memory the runtime meters, so block bytes
// count against the run's memory limit exactly as linear memory does.
//
// The guest sees the same ABI: offsets are opaque non-zero i64 values, 0 means "none" or "failed",
// alloc(0) is 0, and length of anything that is not the start of a live block is 0. Where Extism's
// kernel silently ignores a guest's out-of-range access (load_u8 past its memory returns 0, a store
// there is dropped, output_set of a range outside its blocks is ignored), this kernel stops the run
// with a *Fault: a module that does that is broken or hostile, and no answer would make sense.
package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"unsafe"
)

// Memory is where a kernel keeps its block bytes: a growable buffer that may refuse to grow (the
// runtime's memory meter). Reallocate returns the buffer grown to size bytes, or nil when the
// run's memory limit refuses; bytes never written are zero.
type Memory interface {
	Reallocate(size uint64) []byte
}

// Log levels as the kernel's log_* functions name them (get_log_level's scale, Extism's
// ExtismCompat numbering).
const (
	LevelTrace = 0
	LevelDebug = 1
	LevelInfo  = 2
	LevelWarn  = 3
	LevelError = 4
)

const (
	// base is the first block's offset: offsets below it are never blocks, so 0 never is.
	base = 64
	// minGrow is the least the arena grows by, so a run making many small blocks grows it rarely.
	minGrow = 64 << 10
	// maxBlock bounds one block: the guest's memory is 32-bit, so nothing larger could be used.
	maxBlock = 1 << 32
	// MaxVarBytes bounds a run's variables (var_set), counted as Extism's kernel counts them.
	MaxVarBytes = 64 << 10
	// varEntryCost is what Extism's go-sdk counts per variable beyond its name and value.
	varEntryCost = int(unsafe.Sizeof([]byte{}) + unsafe.Sizeof(""))
	// reuseClasses is how many size classes, the request's included, a freed block may come
	// from: a block at most about 1.7x the request's class, so reuse never hands a small request
	// a huge block.
	reuseClasses = 3
	// numClasses covers every size up to maxBlock (see sizeClass).
	numClasses = 1 + (32-4)*4
)

// sizeClass rounds a request of n bytes (0 < n <= maxBlock) up to its block size: 16 bytes at
// least, then four classes per power of two (2^k·1.25, 1.5, 1.75, 2), so a block wastes at most
// a fifth of itself and a freed block serves any later request of its class exactly.
func sizeClass(n uint64) (class int, size uint64) {
	if n <= 16 {
		return 0, 16
	}
	k := bits.Len64(n-1) - 1 // 2^k < n <= 2^(k+1), k >= 4
	step := uint64(1) << (k - 2)
	size = (n + step - 1) &^ (step - 1)
	j := int((size - 1<<k) / step) // 1..4
	return 1 + (k-4)*4 + j - 1, size
}

// Kernel is one run's kernel state. It is used by one guest at a time (a guest is
// single-threaded), so it takes no locks.
type Kernel struct {
	mem    Memory
	buf    []byte  // the arena: block bytes at their offsets
	top    uint64  // end of the last block
	blocks []block // by offset
	// firstBlocks backs blocks until a run makes more than it holds.
	firstBlocks [4]block
	// free holds the indexes of freed blocks by size class (see sizeClass).
	free [numClasses][]int32

	inputOff, inputLen   uint64
	outputOff, outputLen uint64
	errOff               uint64

	vars map[string][]byte

	// Observer, when set, is told of the run's logs and faults.
	Observer Observer
	// Host is the run's state as the host's own functions see it, kept here so that one
	// context value (With) carries both to a call.
	Host any
	// OnAllocFailed is told when an allocation was refused (the memory limit, or a block over
	// 4 GiB): alloc then answers 0, as Extism's kernel does.
	OnAllocFailed func(n uint64)
}

// Observer is told what the kernel sees that the run records. One interface, not two func
// fields: a run sets it to a value it allocated anyway, where two closures would cost two
// allocations every run.
type Observer interface {
	// Log receives the messages of log_info, log_warn and log_error (log_trace and log_debug
	// are below the level the runtime keeps). msg is a view of the arena, valid only during the
	// call: copy what you keep.
	Log(level int, msg []byte)
	// Fault is told of every guest fault before the kernel stops the run with it.
	Fault(*Fault)
}

type block struct {
	off, size, used uint64
	live            bool
}

// New returns a kernel whose blocks live in mem, with input as its input block. It fails when the
// input does not fit in mem.
func New(mem Memory, input []byte) (*Kernel, error) {
	k := new(Kernel)
	if err := k.Init(mem, input); err != nil {
		return nil, err
	}
	return k, nil
}

// Init makes a zero Kernel (one inside a larger allocation) what New returns.
func (k *Kernel) Init(mem Memory, input []byte) error {
	k.mem, k.top = mem, base
	k.blocks = k.firstBlocks[:0] // most runs make a few blocks: no allocation for them
	if len(input) > 0 {
		off := k.Alloc(uint64(len(input)))
		if off == 0 {
			return fmt.Errorf("the input of %d bytes does not fit in the run's memory", len(input))
		}
		copy(k.buf[off:], input)
		k.inputOff, k.inputLen = off, uint64(len(input))
	}
	return nil
}

// Alloc returns a new block of n bytes, or 0 for n == 0 or when memory is refused.
func (k *Kernel) Alloc(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	if n > maxBlock {
		k.allocFailed(n)
		return 0
	}
	// A freed block of the request's class or a little above: all of them are large enough.
	c, size := sizeClass(n)
	for cls := c; cls < min(c+reuseClasses, numClasses); cls++ {
		if l := k.free[cls]; len(l) > 0 {
			i := l[len(l)-1]
			k.free[cls] = l[:len(l)-1]
			b := &k.blocks[i]
			b.live, b.used = true, n
			return b.off
		}
	}
	off := k.top
	end := off + size
	if end > uint64(len(k.buf)) && !k.grow(end) {
		k.allocFailed(n)
		return 0
	}
	k.top = end
	k.blocks = append(k.blocks, block{off: off, size: size, used: n, live: true})
	return off
}

func (k *Kernel) allocFailed(n uint64) {
	if k.OnAllocFailed != nil {
		k.OnAllocFailed(n)
	}
}

// grow makes the arena at least need bytes: doubling, at least minGrow, falling back to exactly
// what is needed (rounded to a page) when the limit refuses the doubling.
func (k *Kernel) grow(need uint64) bool {
	want := max(need, 2*uint64(len(k.buf)), minGrow)
	want = (want + 0xffff) &^ 0xffff
	buf := k.mem.Reallocate(want)
	if buf == nil {
		if exact := (need + 0xffff) &^ 0xffff; exact < want {
			buf = k.mem.Reallocate(exact)
		}
	}
	if buf == nil {
		return false
	}
	k.buf = buf
	return true
}

// find returns the index of the live block starting at off, or -1.
func (k *Kernel) find(off uint64) int {
	i := sort.Search(len(k.blocks), func(i int) bool { return k.blocks[i].off >= off })
	if i < len(k.blocks) && k.blocks[i].off == off && k.blocks[i].live {
		return i
	}
	return -1
}

// Free releases the block at off for reuse; anything else is ignored, as Extism's kernel does.
func (k *Kernel) Free(off uint64) {
	i := k.find(off)
	if i < 0 {
		return
	}
	b := &k.blocks[i]
	b.live = false
	cls, _ := sizeClass(b.size)
	k.free[cls] = append(k.free[cls], int32(i))
	// Extism's kernel: freeing the input block empties the input.
	if off == k.inputOff {
		k.inputLen = 0
	}
}

// Length is the length of the live block at off, or 0 when off starts none.
func (k *Kernel) Length(off uint64) uint64 {
	if i := k.find(off); i >= 0 {
		return k.blocks[i].used
	}
	return 0
}

// Bytes returns a view of the live block at off (nil, false when off starts none). The view is
// valid until the next allocation.
func (k *Kernel) Bytes(off uint64) ([]byte, bool) {
	i := k.find(off)
	if i < 0 {
		return nil, false
	}
	b := k.blocks[i]
	return k.buf[b.off : b.off+b.used], true
}

// inRange reports whether [off, off+n) lies within the blocks made so far.
func (k *Kernel) inRange(off, n uint64) bool {
	return off >= base && off <= k.top && n <= k.top-off
}

// Reset frees every block and clears the input, output and error, as Extism's reset does.
func (k *Kernel) Reset() {
	k.top = base
	k.blocks = k.blocks[:0]
	for i := range k.free {
		k.free[i] = k.free[i][:0]
	}
	k.inputOff, k.inputLen, k.outputOff, k.outputLen, k.errOff = 0, 0, 0, 0, 0
}

// Output is a view of the output the guest set (nil when none). Valid until the next allocation.
func (k *Kernel) Output() []byte {
	if k.outputLen == 0 {
		return nil
	}
	return k.buf[k.outputOff : k.outputOff+k.outputLen]
}

// OutputLength is the length of the output the guest set.
func (k *Kernel) OutputLength() uint64 { return k.outputLen }

// Error is the error message the guest set with error_set, or "" when none is set (or it names
// no live block, which Extism's host reads as none).
func (k *Kernel) Error() string {
	if k.errOff == 0 {
		return ""
	}
	b, ok := k.Bytes(k.errOff)
	if !ok {
		return ""
	}
	return string(b)
}

// ArenaBytes is the size of the arena: what the run's blocks hold of its memory limit.
func (k *Kernel) ArenaBytes() uint64 { return uint64(len(k.buf)) }

// load and store read and write little-endian values in the arena, stopping the run with a fault
// outside the blocks made so far.
func (k *Kernel) loadU8(fn string, off uint64) uint32 {
	if !k.inRange(off, 1) {
		panic(k.fault(fn, off, "outside the kernel's memory blocks"))
	}
	return uint32(k.buf[off])
}

func (k *Kernel) loadU64(fn string, off uint64) uint64 {
	if !k.inRange(off, 8) {
		panic(k.fault(fn, off, "outside the kernel's memory blocks"))
	}
	return binary.LittleEndian.Uint64(k.buf[off:])
}

func (k *Kernel) storeU8(fn string, off uint64, v byte) {
	if !k.inRange(off, 1) {
		panic(k.fault(fn, off, "outside the kernel's memory blocks"))
	}
	k.buf[off] = v
}

func (k *Kernel) storeU64(fn string, off, v uint64) {
	if !k.inRange(off, 8) {
		panic(k.fault(fn, off, "outside the kernel's memory blocks"))
	}
	binary.LittleEndian.PutUint64(k.buf[off:], v)
}

// inputU8 and inputU64 read the input; past its end they read zeros, as Extism's bounds-checked
// kernel answers 0 there.
func (k *Kernel) inputU8(off uint64) uint32 {
	if off >= k.inputLen {
		return 0
	}
	return uint32(k.buf[k.inputOff+off])
}

func (k *Kernel) inputU64(off uint64) uint64 {
	if off >= k.inputLen {
		return 0
	}
	if k.inputLen-off >= 8 {
		return binary.LittleEndian.Uint64(k.buf[k.inputOff+off:])
	}
	var tail [8]byte
	copy(tail[:], k.buf[k.inputOff+off:k.inputOff+k.inputLen])
	return binary.LittleEndian.Uint64(tail[:])
}

// mustBytes is a block the guest handed a kernel function that needs one: anything else stops
// the run.
func (k *Kernel) mustBytes(fn string, off uint64) []byte {
	b, ok := k.Bytes(off)
	if !ok {
		panic(k.fault(fn, off, "not a live memory block"))
	}
	return b
}

// AllocBytes copies data into a new block and returns its offset: 0 for no data, or when the
// memory limit refuses the block.
func (k *Kernel) AllocBytes(data []byte) uint64 {
	if len(data) == 0 {
		return 0
	}
	off := k.Alloc(uint64(len(data)))
	if off != 0 {
		copy(k.buf[off:], data)
	}
	return off
}

// allocBytes is AllocBytes for a kernel function: a refusal stops the run (the caller had no way
// to tell "no memory" from "none").
func (k *Kernel) allocBytes(fn string, data []byte) uint64 {
	off := k.AllocBytes(data)
	if off == 0 && len(data) > 0 {
		panic(k.fault(fn, 0, fmt.Sprintf("cannot allocate the reply: a block of %d bytes", len(data))))
	}
	return off
}

// setVar is var_set: Extism's accounting (each entry costs its name, value and varEntryCost; the
// entry being set is counted beside the one it replaces), refused past MaxVarBytes.
func (k *Kernel) setVar(name string, value []byte) error {
	size := varEntryCost + len(name) + len(value)
	for n, v := range k.vars {
		size += len(n) + len(v) + varEntryCost
	}
	if size >= MaxVarBytes {
		return fmt.Errorf("the variable store is full (%d bytes at most)", MaxVarBytes)
	}
	if k.vars == nil {
		k.vars = map[string][]byte{}
	}
	k.vars[name] = append([]byte(nil), value...)
	return nil
}

// ErrFault is matched by every [*Fault].
var ErrFault = errors.New("guest fault")

// Fault is a guest breaking the ABI: an offset that is no block where one is needed, an access
// outside the blocks, a block larger than a call accepts, a refused Extism feature. It stops the
// run as a trap: a module that does this is broken or hostile, and no answer would make sense.
// The kernel's functions and the Skillbox host functions (package extismhost) both raise it.
type Fault struct {
	// Host is set for a Skillbox host function's fault ("host call"), clear for the kernel's
	// ("kernel call").
	Host   bool
	Func   string
	Offset uint64
	Reason string
}

func (f *Fault) Error() string {
	layer := "kernel call"
	if f.Host {
		layer = "host call"
	}
	return fmt.Sprintf("%s %s: %s (offset %d)", layer, f.Func, f.Reason, f.Offset)
}

func (f *Fault) Is(target error) bool { return target == ErrFault }

func (k *Kernel) fault(fn string, off uint64, reason string) *Fault {
	f := &Fault{Func: fn, Offset: off, Reason: reason}
	if k.Observer != nil {
		k.Observer.Fault(f)
	}
	return f
}
