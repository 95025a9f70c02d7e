package kernel

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// limited is a Memory of at most max bytes, counting what it was asked for.
type limited struct {
	buf      []byte
	max      uint64
	refusals int
}

func (m *limited) Reallocate(size uint64) []byte {
	if size > m.max {
		m.refusals++
		return nil
	}
	m.buf = append(m.buf, make([]byte, int(size)-len(m.buf))...)
	return m.buf
}

func newKernel(t *testing.T, max uint64, input string) *Kernel {
	t.Helper()
	k, err := New(&limited{max: max}, []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fault runs f and returns the *Fault it panicked with, or nil.
func fault(f func()) (got *Fault) {
	defer func() {
		if r := recover(); r != nil {
			if !errors.As(r.(error), &got) {
				panic(r)
			}
		}
	}()
	f()
	return nil
}

func TestBlocks(t *testing.T) {
	k := newKernel(t, 1<<20, "")
	if k.Alloc(0) != 0 || k.Length(0) != 0 {
		t.Fatal("alloc(0) and length(0) must be 0")
	}
	a, b := k.Alloc(5), k.Alloc(300)
	if a == 0 || b == 0 || a == b {
		t.Fatalf("offsets %d %d", a, b)
	}
	if k.Length(a) != 5 || k.Length(b) != 300 || k.Length(a+1) != 0 || k.Length(1<<40) != 0 {
		t.Fatal("length must be the block's, and 0 for anything that starts no block")
	}
	k.storeU8("store_u8", a, 'x')
	k.storeU64("store_u64", b, 0x0102030405060708)
	if k.loadU8("load_u8", a) != 'x' || k.loadU64("load_u64", b) != 0x0102030405060708 {
		t.Fatal("loads must read what stores wrote")
	}
	k.Free(a)
	k.Free(a) // a double free is ignored
	if k.Length(a) != 0 {
		t.Fatal("a freed block has no length")
	}
	// A freed block is reused for a request of its class.
	if c := k.Alloc(7); c != a || k.Length(c) != 7 {
		t.Fatalf("reuse: got %d (length %d), want %d", c, k.Length(c), a)
	}
}

// The block table stays as large as the most blocks alive at once: a run that makes and frees a
// reply per host call never grows it, so the cost of a call does not grow with the calls made.
func TestFreedBlocksAreReused(t *testing.T) {
	k := newKernel(t, 1<<20, `{"n":1}`)
	keep := k.Alloc(16)
	for i := range 100_000 {
		off := k.AllocBytes([]byte(strings.Repeat("r", 1+i%40)))
		if off == 0 {
			t.Fatal("alloc failed")
		}
		k.Free(off)
	}
	if len(k.blocks) > 8 || k.ArenaBytes() > minGrow {
		t.Fatalf("%d blocks, %d arena bytes after 100k alloc/free pairs", len(k.blocks), k.ArenaBytes())
	}
	if k.Length(keep) != 16 {
		t.Fatal("a live block was lost")
	}
}

func TestAllocStopsAtTheLimit(t *testing.T) {
	mem := &limited{max: 4 << 20}
	k, err := New(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	k.OnAllocFailed = func(uint64) { failed++ }
	n := 0
	for k.Alloc(1<<20) != 0 {
		n++
		if n > 100 {
			t.Fatal("alloc never failed")
		}
	}
	if n < 3 || failed != 1 || uint64(len(mem.buf)) > mem.max {
		t.Fatalf("%d blocks of 1 MiB in 4 MiB, %d failures, %d bytes held", n, failed, len(mem.buf))
	}
	if k.Alloc(1<<33) != 0 || failed != 2 {
		t.Fatal("a block over 4 GiB must fail")
	}
	// Smaller blocks still fit in what is left.
	if k.Alloc(1024) == 0 {
		t.Fatal("a small block after a refused large one")
	}
}

func TestInputOfTheRun(t *testing.T) {
	k := newKernel(t, 1<<20, `{"a":"bcdefghij"}`)
	if k.inputLen != 17 || k.Length(k.inputOff) != 17 {
		t.Fatal("the input is a block of its length")
	}
	if k.inputU8(0) != '{' || k.inputU8(16) != '}' || k.inputU8(17) != 0 || k.inputU8(1<<62) != 0 {
		t.Fatal("input_load_u8 reads the input, and 0 past it")
	}
	if got := k.inputU64(12); got != uint64('h')|uint64('i')<<8|uint64('j')<<16|uint64('"')<<24|uint64('}')<<32 {
		t.Fatalf("a u64 across the input's end reads zeros past it: %x", got)
	}
	k.Free(k.inputOff)
	if k.inputLen != 0 {
		t.Fatal("freeing the input block empties the input, as Extism's kernel does")
	}
	if _, err := New(&limited{max: 100}, make([]byte, 1000)); err == nil {
		t.Fatal("an input over the memory must be refused")
	}
}

func TestOutsideTheBlocksIsAFault(t *testing.T) {
	k := newKernel(t, 1<<20, "")
	off := k.Alloc(8)
	var told *Fault
	k.Observer = observer{fault: func(f *Fault) { told = f }}
	for name, f := range map[string]func(){
		"load_u8 at 0":          func() { k.loadU8("load_u8", 0) },
		"load_u8 past the end":  func() { k.loadU8("load_u8", k.top) },
		"load_u64 across end":   func() { k.loadU64("load_u64", k.top-7) },
		"load_u64 wrapping":     func() { k.loadU64("load_u64", ^uint64(0)-3) },
		"store_u8 below base":   func() { k.storeU8("store_u8", base-1, 1) },
		"store_u64 far":         func() { k.storeU64("store_u64", 1<<40, 1) },
		"a name that no block":  func() { k.mustBytes("var_get", off+1) },
		"reply over the memory": func() { k.allocBytes("var_get", make([]byte, 2<<20)) },
	} {
		told = nil
		f2 := fault(f)
		if f2 == nil || told != f2 {
			t.Errorf("%s: fault %v, told %v", name, f2, told)
		}
	}
	if fault(func() { k.loadU64("load_u64", off) }) != nil {
		t.Fatal("a load inside a block is no fault")
	}
}

func TestVarsAreBounded(t *testing.T) {
	k := newKernel(t, 1<<20, "")
	if err := k.setVar("a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.vars["a"], []byte("1")) {
		t.Fatal("var not set")
	}
	if err := k.setVar("big", make([]byte, MaxVarBytes)); err == nil {
		t.Fatal("a variable store over MaxVarBytes must be refused")
	}
	// Extism's accounting: many small variables fill it too.
	var err error
	for i := 0; err == nil && i < MaxVarBytes; i++ {
		err = k.setVar(strings.Repeat("k", 8)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), []byte("v"))
	}
	if err == nil {
		t.Fatal("the store never filled")
	}
}

func TestReset(t *testing.T) {
	k := newKernel(t, 1<<20, "input")
	a := k.Alloc(10)
	k.outputOff, k.outputLen, k.errOff = a, 10, a
	k.Reset()
	if k.inputLen != 0 || k.OutputLength() != 0 || k.Error() != "" || k.Length(a) != 0 || len(k.blocks) != 0 {
		t.Fatal("reset must forget every block, the input, the output and the error")
	}
}

func TestSizeClasses(t *testing.T) {
	prev := -1
	for _, n := range []uint64{1, 16, 17, 20, 21, 24, 25, 28, 29, 32, 33, 1000, 1 << 20, 1<<20 + 1, maxBlock} {
		c, size := sizeClass(n)
		if size < n || (n > 16 && size > n+n/4+1) || c < prev || c >= numClasses {
			t.Errorf("sizeClass(%d) = %d, %d", n, c, size)
		}
		if c2, size2 := sizeClass(size); c2 != c || size2 != size {
			t.Errorf("a class's own size must map to itself: %d → %d,%d → %d,%d", n, c, size, c2, size2)
		}
		prev = c
	}
}

// call runs the kernel function name on k with the given stack.
func call(t *testing.T, k *Kernel, name string, stack ...uint64) []uint64 {
	t.Helper()
	for _, f := range functions {
		if f.name == name {
			s := append(stack, 0, 0)
			f.fn(k, s)
			return s
		}
	}
	t.Fatalf("no kernel function %s", name)
	return nil
}

func TestVarsThroughTheABI(t *testing.T) {
	k := newKernel(t, 1<<20, "")
	set := func(name, value string) {
		n, v := k.AllocBytes([]byte(name)), k.AllocBytes([]byte(value))
		call(t, k, "var_set", n, v)
		if k.Length(n) != 0 || (v != 0 && k.Length(v) != 0) {
			t.Fatal("var_set frees the name and the value, as Extism does")
		}
	}
	get := func(name string) string {
		off := call(t, k, "var_get", k.AllocBytes([]byte(name)))[0]
		if off == 0 {
			return "<unset>"
		}
		b, _ := k.Bytes(off)
		return string(b)
	}
	set("count", "41")
	if got := get("count"); got != "41" {
		t.Fatalf("var_get: %q", got)
	}
	set("count", "42")
	if got := get("count"); got != "42" {
		t.Fatalf("var_get after a second var_set: %q", got)
	}
	call(t, k, "var_set", k.AllocBytes([]byte("count")), 0)
	if got := get("count"); got != "<unset>" {
		t.Fatalf("var_set with value 0 must delete it: %q", got)
	}
	if call(t, k, "config_get", k.AllocBytes([]byte("any")))[0] != 0 {
		t.Fatal("config_get answers 0: no Extism config")
	}
	var logged []string
	k.Observer = observer{log: func(level int, msg []byte) { logged = append(logged, string(msg)) }}
	call(t, k, "log_debug", k.AllocBytes([]byte("dropped")))
	call(t, k, "log_warn", k.AllocBytes([]byte("kept")))
	if len(logged) != 1 || logged[0] != "kept" {
		t.Fatalf("logged %q; debug is below the level", logged)
	}
	if fault(func() { call(t, k, "http_request", k.AllocBytes([]byte(`{"url":"http://x/"}`)), 0) }) == nil {
		t.Fatal("http_request must stop the run")
	}
}

// observer is a kernel Observer made of funcs; either may be nil.
type observer struct {
	log   func(level int, msg []byte)
	fault func(*Fault)
}

func (o observer) Log(level int, msg []byte) {
	if o.log != nil {
		o.log(level, msg)
	}
}

func (o observer) Fault(f *Fault) {
	if o.fault != nil {
		o.fault(f)
	}
}
