package memimage

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/wasmbin"
)

// mod assembles a module with one memory of one page, exported as "mem", and the data segments
// segs (each already encoded); dataCount adds a data count section.
func mod(dataCount bool, segs ...[]byte) []byte {
	sec := func(id byte, content []byte) []byte {
		return append(append([]byte{id}, wasmbin.AppendU32(nil, uint32(len(content)))...), content...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = append(out, sec(5, []byte{1, 0, 1})...)
	out = append(out, sec(7, []byte{1, 3, 'm', 'e', 'm', 2, 0})...)
	if dataCount {
		out = append(out, sec(12, wasmbin.AppendU32(nil, uint32(len(segs))))...)
	}
	data := wasmbin.AppendU32(nil, uint32(len(segs)))
	for _, s := range segs {
		data = append(data, s...)
	}
	return append(out, sec(11, data)...)
}

func active(offset byte, text string) []byte { // offset < 64: a one-byte i32.const
	return append([]byte{0, 0x41, offset, 0x0b, byte(len(text))}, text...)
}

func activeMem0(offset byte, text string) []byte { // flags 2: the memory named
	return append([]byte{2, 0, 0x41, offset, 0x0b, byte(len(text))}, text...)
}

func passive(text string) []byte { return append([]byte{1, byte(len(text))}, text...) }

// memoryOf instantiates wasm with alloc (nil: wazero's own) and returns its memory's bytes.
func memoryOf(t *testing.T, wasm []byte, alloc experimental.MemoryAllocator) []byte {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	if alloc != nil {
		ctx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	m, err := r.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Memory().Read(0, m.Memory().Size())
	return bytes.Clone(b)
}

// A split module with its image instantiates to the memory the whole module does, and only the
// active segments after every passive one leave the module.
func TestSplitStartsTheSameMemory(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dataCount bool
		segs      [][]byte
		left      int // segments left in the module
	}{
		{"all active", false, [][]byte{active(16, "hello"), activeMem0(40, "world"), active(18, "LL")}, 0},
		{"after passive ones", true, [][]byte{passive("p"), passive(""), active(3, "abc"), active(60, "z")}, 2},
		{"an active one before a passive one stays", true, [][]byte{active(1, "first"), passive("p"), active(30, "after")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := mod(tc.dataCount, tc.segs...)
			split, img, err := Split(whole)
			if err != nil || img == nil {
				t.Fatalf("Split: %v, %v", img, err)
			}
			if img.Len() != pageSize {
				t.Errorf("the image is %d bytes, not one page", img.Len())
			}
			m, err := parse(split)
			if err != nil {
				t.Fatalf("the split module does not parse: %v", err)
			}
			if len(m.segs) != tc.left {
				t.Fatalf("the split module has %d segments, not %d", len(m.segs), tc.left)
			}
			want := memoryOf(t, whole, nil)
			a := NewAllocator()
			a.StartFrom(img)
			if got := memoryOf(t, split, a); !bytes.Equal(got, want) {
				t.Errorf("the split module's memory differs:\n got %q\nwant %q", got[:64], want[:64])
			}
			if got := memoryOf(t, split, NewAllocator()); bytes.Equal(got, want) {
				t.Error("the split module's memory was right without its image: the test proves nothing")
			}
		})
	}
}

// A module whose segments cannot be taken is returned as it is, with no image.
func TestSplitLeavesWhatItCannotTake(t *testing.T) {
	for name, wasm := range map[string][]byte{
		"no data":                  mod(false),
		"only passive":             mod(true, passive("a")),
		"last before passive":      mod(false, active(1, "a"), passive("b")),
		"offset not one i32.const": mod(false, []byte{0, 0x41, 1, 0x41, 2, 0x0b, 1, 'x'}),
	} {
		out, img, err := Split(wasm)
		if err != nil || img != nil || !bytes.Equal(out, wasm) {
			t.Errorf("%s: %v, image %v, same %v", name, err, img, bytes.Equal(out, wasm))
		}
	}
}

// Segments past the memory's initial size are refused, as wazero would refuse the module.
func TestSplitRefusesSegmentsPastTheMemory(t *testing.T) {
	seg := append([]byte{0, 0x41, 0xff, 0xff, 0x03, 0x0b, 2}, "xy"...) // at 65535, 2 bytes
	if _, _, err := Split(mod(false, seg)); err == nil {
		t.Fatal("no error for a segment that ends past the memory's one page")
	}
}
