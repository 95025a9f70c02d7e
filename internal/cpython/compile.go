package cpython

import (
	"archive/zip"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/skillbox-dev/skillbox/internal/memimage"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// pythonWASM is the snapshotted interpreter, stripped of custom sections (wazero v1.12 loads a
// module with DWARF from its file cache in seconds, and its cache key ignores the debug setting).
//
//go:embed python.wasm
var pythonWASM []byte

// pythonFrames is the stack each of the interpreter's functions takes, as wazero's compiler
// sized it on amd64: the weights of its call stack's bound (package wazevoframes). Its test
// checks it, and makes it again with -update-frames.
//
//go:embed python.frames
var pythonFrames []byte

// stdlibZip is the standard library, .pyc files laid out as the guest sees them.
//
//go:embed stdlib.zip
var stdlibZip []byte

// StdlibPath is where the standard library is mounted in the guest. It must be the first mount
// and keep this path: the snapshot's preopen table names it as fd 3 (see embed.c).
const StdlibPath = "/usr/local/lib/python3.11"

// Packages are the third-party Python packages compiled into the interpreter (by
// interpreters/python/build.sh), by normalised name: their version. pydeps never vendors them.
var Packages = map[string]string{"lxml": "4.9.2", "pillow": "9.4.0"}

// SkillPath is where the skill's directory is mounted, read-only.
const SkillPath = "/skill"

// Compiled is the interpreter compiled into one wazero.Runtime of its own, with the WASI
// functions (poll_oneoff replaced, see poll.go) and the skillbox functions it imports. It is
// safe for concurrent runs; each run instantiates it afresh.
type Compiled struct {
	runtime wazero.Runtime
	module  wazero.CompiledModule
	// image is the snapshot's memory, taken out of the module (package memimage): every run's
	// memory starts from it.
	image  *memimage.Image
	stdlib *zip.Reader
	// closed is set by Close: Run checks it rather than instantiating into a closed runtime.
	closed atomic.Bool
}

// ErrClosed is returned by Run on a Compiled that was closed.
var ErrClosed = errors.New("cpython: compiled interpreter is closed")

// Compile makes a wazero.Runtime with rc and compiles the interpreter into it. rc is the
// caller's engine configuration — its memory limit, compilation cache and interruption: the
// caller keeps one configuration for every module it compiles, so the cache finds what it
// compiled before. The interpreter is instrumented (package interrupt): its call stack is
// bounded, and a run is stopped at its deadline by interrupt.Stop, so rc should not close
// modules when their context is done (WithCloseOnContextDone(false)). wazero's interruption
// would stop it too, but it costs a CPU-bound run half its speed.
//
// # Errors
//
// The errors of wazero's compilation and instantiation of the host modules, wrapped; a memory
// limit below the snapshot's initial memory is one of them.
func Compile(ctx context.Context, rc wazero.RuntimeConfig) (*Compiled, error) {
	return CompileIn(ctx, rc, "")
}

// CompileIn is Compile that keeps the interpreter as it prepares it for wazero (instrumented, its
// memory an image) in cacheDir, the directory of rc's compilation cache, for the next process of
// this executable to read instead of preparing it again (see prepared.go); "" keeps nothing.
func CompileIn(ctx context.Context, rc wazero.RuntimeConfig, cacheDir string) (*Compiled, error) {
	code, img, err := prepare(cacheDir)
	if err != nil {
		return nil, err
	}
	return compile(ctx, rc, code, img)
}

// compile compiles code, the interpreter prepared (or, for the benchmarks that measure what the
// instrumentation costs, split but not instrumented: such an interpreter cannot be stopped but
// by wazero's interruption, and its call stack is not bounded), whose memory starts from img.
func compile(ctx context.Context, rc wazero.RuntimeConfig, code []byte, img *memimage.Image) (*Compiled, error) {
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	fail := func(err error) (*Compiled, error) {
		_ = r.Close(ctx)
		_ = img.Close()
		return nil, err
	}
	w := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(w)
	i32 := api.ValueTypeI32
	w.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(pollOneoff), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("in", "out", "nsubscriptions", "result.nevents").Export("poll_oneoff")
	if _, err := w.Instantiate(ctx); err != nil {
		return fail(fmt.Errorf("cpython: instantiate WASI: %w", err))
	}
	if _, err := hostModule(r).Instantiate(ctx); err != nil {
		return fail(fmt.Errorf("cpython: instantiate the skillbox host module: %w", err))
	}
	cm, err := r.CompileModule(ctx, code)
	if err != nil {
		return fail(fmt.Errorf("cpython: compile the interpreter: %w", err))
	}
	z, err := zip.NewReader(bytes.NewReader(stdlibZip), int64(len(stdlibZip)))
	if err != nil {
		return fail(fmt.Errorf("cpython: read the embedded standard library: %w", err))
	}
	return &Compiled{runtime: r, module: cm, image: img, stdlib: z}, nil
}

// Close releases the runtime and the compiled code. Runs under way are closed with it; later
// runs return ErrClosed.
func (c *Compiled) Close(ctx context.Context) error {
	c.closed.Store(true)
	return errors.Join(c.runtime.Close(ctx), c.image.Close())
}

// Start instantiates the interpreter without running it, its memory made by mem (nil: Go
// slices), then closes the instance: the floor benchmarks measure a run against (a bare
// instantiate of the same snapshot, its memory started from the image).
func (c *Compiled) Start(ctx context.Context, mem memimage.Allocator) error {
	m, err := c.runtime.InstantiateModule(c.memoryFor(ctx, mem), c.module, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return err
	}
	return m.Close(ctx)
}

// memoryFor is ctx with mem (nil: a new memimage.NewAllocator) as the allocator of the next
// instance, its memory started from the snapshot's image: the interpreter cannot run without it.
func (c *Compiled) memoryFor(ctx context.Context, mem memimage.Allocator) context.Context {
	if mem == nil {
		mem = memimage.NewAllocator()
	}
	mem.StartFrom(c.image)
	return experimental.WithMemoryAllocator(ctx, mem)
}
