package cpython

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillbox-dev/skillbox/internal/memimage"
	"github.com/skillbox-dev/skillbox/internal/memimagetest"
)

// The interpreter, its data segments taken out, starts with the memory the whole snapshot would
// start with: an instance's first bytes are the image's, and the rest zero.
func TestTheSplitInterpreterStartsAsTheSnapshot(t *testing.T) {
	ctx := context.Background()
	c := compiledFor(t, 1024)
	whole, err := c.runtime.CompileModule(ctx, pythonWASM)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close(ctx)
	want := &memimagetest.Recorder{Allocator: memimage.NewAllocator()}
	m, err := c.runtime.InstantiateModule(experimental.WithMemoryAllocator(ctx, want), whole, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Close(ctx)
	got := &memimagetest.Recorder{Allocator: memimage.NewAllocator()}
	if err := c.Start(ctx, got); err != nil {
		t.Fatal(err)
	}
	w, g := want.Started(), got.Started()
	if len(w) != 1 || len(g) != 1 {
		t.Fatalf("memories made: %d and %d, want one each", len(w), len(g))
	}
	if !bytes.Equal(g[0], w[0]) {
		t.Fatalf("the split interpreter starts with %d bytes that differ from the snapshot's %d", len(g[0]), len(w[0]))
	}
	if bytes.Count(w[0][:c.image.Len()], []byte{0}) == c.image.Len() {
		t.Fatal("the snapshot's memory is all zero: the test proves nothing")
	}
}
