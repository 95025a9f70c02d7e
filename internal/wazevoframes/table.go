package wazevoframes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
)

// A table is the frames of one module, for a module the host ships: the SHA-256 of the module
// it was made for (before instrumentation), the function count, then each frame, all
// little-endian u32 after the sum.

// ErrStale means a table was made for another module: make it again (the shipping package's
// test says how).
var ErrStale = errors.New("wazevoframes: the frame table was made for another module")

// Encode makes the table of frames for wasm.
func Encode(wasm []byte, frames []uint32) []byte {
	sum := sha256.Sum256(wasm)
	b := append(sum[:], make([]byte, 4+4*len(frames))...)
	binary.LittleEndian.PutUint32(b[32:], uint32(len(frames)))
	for i, f := range frames {
		binary.LittleEndian.PutUint32(b[36+4*i:], f)
	}
	return b
}

// Decode returns the frames of table, which must have been made for wasm.
func Decode(table, wasm []byte) ([]uint32, error) {
	if len(table) < 36 {
		return nil, fmt.Errorf("wazevoframes: a table of %d bytes", len(table))
	}
	if sum := sha256.Sum256(wasm); !bytes.Equal(table[:32], sum[:]) {
		return nil, ErrStale
	}
	n := binary.LittleEndian.Uint32(table[32:])
	if uint64(len(table)-36) != 4*uint64(n) {
		return nil, fmt.Errorf("wazevoframes: a table of %d frames in %d bytes", n, len(table))
	}
	frames := make([]uint32, n)
	for i := range frames {
		frames[i] = binary.LittleEndian.Uint32(table[36+4*i:])
	}
	return frames, nil
}

// Measure compiles wasm with rc into a compilation cache of its own and reads its frames.
func Measure(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte) ([]uint32, error) {
	return compile(ctx, rc, wasm, "")
}

// compile compiles wasm with rc into a compilation cache of its own and reads its frames. With
// into, a compilation cache directory, it then moves the compiled module's entry there: a
// runtime with a cache on into loads it instead of compiling it again. The cache of its own is
// made inside into, so that the move is a rename.
func compile(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, into string) ([]uint32, error) {
	dir, err := os.MkdirTemp(into, ".wazevoframes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, err
	}
	r := wazero.NewRuntimeWithConfig(ctx, rc.WithCompilationCache(cache))
	_, err = r.CompileModule(ctx, wasm)
	_ = r.Close(ctx)
	_ = cache.Close(ctx)
	if err != nil {
		return nil, err
	}
	path, frames, err := readEntry(dir)
	if err != nil || into == "" {
		return frames, err
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return nil, err
	}
	dst := filepath.Join(into, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, err
	}
	return frames, os.Rename(path, dst)
}

// Instrumenter rewrites a module with these frames as its weights (nil: its own estimates), as
// interrupt.InstrumentShipped does.
type Instrumenter func(wasm []byte, frames []uint32) ([]byte, error)

// Margin is the weight a table gives a frame of f bytes: an eighth more and 64 bytes, for the
// code the same compiler makes on another amd64 machine (it picks instructions by the CPU's
// features) and for the weights' own immediates, which change the code a little.
func Margin(f uint32) uint32 { return f + f/8 + 64 }

// Make is Weigh of wasm, its table alone: what a package that ships a module commits.
func Make(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, inst Instrumenter) ([]uint32, error) {
	table, _, err := Weigh(ctx, rc, wasm, inst, "")
	return table, err
}

// Weigh measures the frames of wasm as inst rewrites it with its estimates, weighs each with
// its Margin, rewrites wasm with those weights and compiles that — into the compilation cache
// cacheDir unless it is "" (see compile) — confirming that no function's frame is larger
// than its weight (the weights are immediates in the code, so the code changes a little). It
// returns the weights and the module rewritten with them.
func Weigh(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, inst Instrumenter, cacheDir string) ([]uint32, []byte, error) {
	estimated, err := inst(wasm, nil)
	if err != nil {
		return nil, nil, err
	}
	frames, err := Measure(ctx, rc, estimated)
	if err != nil {
		return nil, nil, err
	}
	weights := make([]uint32, len(frames))
	for i, f := range frames {
		weights[i] = Margin(f)
	}
	out, err := confirm(ctx, rc, wasm, weights, inst, cacheDir)
	return weights, out, err
}

// Check compiles wasm as inst rewrites it with table as its weights, and confirms that no
// function's frame is larger than its weight.
func Check(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, table []uint32, inst Instrumenter) error {
	_, err := confirm(ctx, rc, wasm, table, inst, "")
	return err
}

// confirm is Check, compiling into cacheDir unless it is "", and returns the rewritten module.
func confirm(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, table []uint32, inst Instrumenter, cacheDir string) ([]byte, error) {
	out, err := inst(wasm, table)
	if err != nil {
		return nil, err
	}
	frames, err := compile(ctx, rc, out, cacheDir)
	if err != nil {
		return nil, err
	}
	if len(frames) != len(table) {
		return nil, fmt.Errorf("wazevoframes: %d frames for a table of %d", len(frames), len(table))
	}
	for i, f := range frames {
		if f > table[i] {
			return nil, fmt.Errorf("wazevoframes: function %d takes %d bytes of stack, its weight is %d", i, f, table[i])
		}
	}
	return out, nil
}
