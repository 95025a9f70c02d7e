package engine

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/memimage"
	"github.com/skillbox-dev/skillbox/internal/memimagetest"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/spec"
)

// A run's metered memory maps the interpreter's image copy-on-write: it starts with the bytes a
// copy of the image gives, and what one run writes reaches neither the image nor the next run.
func TestAMeteredMemoryStartsFromTheImage(t *testing.T) {
	ctx := context.Background()
	a := NewAdmission(AdmissionConfig{MaxRuns: 1, MaxQueue: 1, MaxCompiles: 1, MemoryBudget: 4 << 30, CompileMemory: 256 << 20}, func(int64) {})
	interps := NewInterpreters(slog.New(slog.NewTextHandler(io.Discard, nil)), testcache.Dir(), a, nil)
	defer interps.Close()
	en, err := interps.Acquire(ctx, spec.LangPython, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer interps.Release(en)
	py := en.Value().Py

	copied := &memimagetest.Recorder{Allocator: memimage.NewAllocator()}
	if err := py.Start(ctx, copied); err != nil {
		t.Fatal(err)
	}
	want := copied.Started()[0]
	for i := range 2 {
		meter := NewMemoryMeter(64 << 20)
		rec := &memimagetest.Recorder{Allocator: meter}
		if err := py.Start(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got := rec.Started()[0]
		if len(meter.mapped) != 1 {
			t.Fatalf("run %d: the memory is not a mapping", i)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("run %d: the mapped memory differs from the copied image", i)
		}
		if maps, err := os.ReadFile("/proc/self/maps"); goruntime.GOOS == "linux" && (err != nil || !bytes.Contains(maps, []byte("memfd:skillbox-memimage"))) {
			t.Fatalf("run %d: the image was copied, not mapped (%v)", i, err)
		}
		for j := range got { // what a run may do: write every byte it was given
			got[j] = 0xa5
		}
		meter.Release()
	}
}
