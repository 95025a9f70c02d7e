package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interrupt"
	"github.com/skillbox-dev/skillbox/internal/wazevoframes"
	"github.com/tetratelabs/wazero"
)

// Compiling a module is the one step of a run whose cost wazero does not let the host bound:
// its optimizing compiler needs memory that grows with the square of a function's size for some
// shapes (a 32 KiB function of chained loads took 721 MiB, a 256 KiB one of blocks 3 GiB), and
// its CompileModule ignores its context inside a function. No bound on the module's bytes both
// admits real modules (Go's largest functions are ~50 KiB) and keeps that safe.
//
// So a Runtime compiles in a child process of the same program when it can: the child compiles
// into the compilation cache and exits; the parent watches its memory and its time, kills it past
// Admission.CompileMemory or CompileTimeout, and then loads the compiled code from the cache
// (which costs about what the code holds). A compile bomb costs the child, never the host.
//
// The child is this program run again, with childEnv set: the program must call
// MaybeCompileChild first thing in main (and in TestMain) for that to work. A program that does
// not compiles in its own process, within the module limits, and the runtime says so in its log.

// childEnv marks a process started to compile one module.
const childEnv = "SKILLBOX_COMPILE_CHILD"

// childCapable is set by MaybeCompileChild in a program that can serve as its own compiler.
var childCapable atomic.Bool

// CanCompileInChild reports whether this program can serve as its own compiler (it called
// MaybeCompileChild).
func CanCompileInChild() bool { return childCapable.Load() }

// MaybeCompileChild is runtime.MaybeCompileChild: in a process started to compile a module it
// compiles it and exits; otherwise it notes that this program can serve as its own compiler.
func MaybeCompileChild() {
	if os.Getenv(childEnv) != "1" {
		childCapable.Store(true)
		return
	}
	os.Exit(serveCompile(os.Stdin, os.Stdout, os.Stderr))
}

// childRequest is what the parent sends a child before the module's bytes.
type childRequest struct {
	CacheDir string `json:"cache"`
	Pages    uint32 `json:"pages"`
	// Memory is what the child may hold: its Go heap's soft limit, so that garbage is collected
	// before the parent's watch would stop it for memory it no longer uses.
	Memory int64 `json:"memory"`
	// Stoppable is the source's: the module was instrumented, and compiles without wazero's
	// interruption (see CompileConfig).
	Stoppable bool `json:"stoppable"`
	// Framed asks for the module's frames (framed.go): the bytes sent are the module before it
	// was instrumented, which the child instruments, compiles twice, and answers the weights of
	// (a wazevoframes table) on its standard output, or nothing if it could not measure them.
	Framed bool `json:"framed"`
}

// Bounds of what a child reads: a header line, then a module (already checked by the parent).
const (
	maxChildHeader = 64 << 10
	maxChildModule = 1 << 30
)

// serveCompile is the child: it reads a request and a module from in, compiles the module with
// the engine's configuration into the cache, and returns the exit code (a framed module's
// weights go to out, errors to errOut).
func serveCompile(in io.Reader, out0, errOut io.Writer) int {
	br := bufio.NewReaderSize(in, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil || len(line) > maxChildHeader {
		fmt.Fprintf(errOut, "compile child: no request: %v\n", err)
		return 2
	}
	var req childRequest
	if err := json.Unmarshal(line, &req); err != nil || req.CacheDir == "" {
		fmt.Fprintf(errOut, "compile child: bad request: %v\n", err)
		return 2
	}
	wasm, err := io.ReadAll(io.LimitReader(br, maxChildModule+1))
	if err != nil || len(wasm) > maxChildModule {
		fmt.Fprintf(errOut, "compile child: reading the module: %v\n", err)
		return 2
	}
	if req.Memory > 0 {
		debug.SetMemoryLimit(req.Memory)
	}
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(req.CacheDir)
	if err != nil {
		fmt.Fprintf(errOut, "compile child: cache: %v\n", err)
		return 2
	}
	if req.Framed {
		out, ok, err := interrupt.Instrument(wasm)
		if err != nil || !ok {
			fmt.Fprintf(errOut, "compile child: the module does not instrument: %v\n", err)
			return 2
		}
		src := Source{Wasm: out, Orig: wasm, Stoppable: true}
		if _, weights, err := frameSource(ctx, req.CacheDir, req.Pages, src); err == nil {
			_, _ = out0.Write(wazevoframes.Encode(src.Wasm, weights))
			_ = cache.Close(ctx)
			return 0
		}
		wasm = out // the frames could not be measured: the module as instrumented, estimates and all
	}
	r := wazero.NewRuntimeWithConfig(ctx, CompileConfig(req.Pages, req.Stoppable).WithCompilationCache(cache))
	_, err = r.CompileModule(ctx, wasm)
	_ = r.Close(ctx)
	_ = cache.Close(ctx)
	if err != nil {
		fmt.Fprintf(errOut, "%v\n", err)
		return 3
	}
	return 0
}

// CompileConfig is the wazero configuration every compilation uses, in the child and in the
// process: the cache keys compiled code on it, so the process finds what the child compiled.
// A stoppable module (see source) is stopped by its own checks; any other runs under wazero's
// interruption, which makes compiled code exit to Go at every loop iteration and function call
// to look at the context (a tight loop runs ~20x slower) but stops a guest at its deadline.
func CompileConfig(pages uint32, stoppable bool) wazero.RuntimeConfig {
	return wazero.NewRuntimeConfig().
		WithCloseOnContextDone(!stoppable).
		WithMemoryLimitPages(pages)
}

// CompileError is a module the compiler could not, or was not let, compile: runtime.CompileError's
// fields, in the same order, which the runtime converts it into.
type CompileError struct {
	Bound string
	Msg   string
}

func (e *CompileError) Error() string { return e.Msg }

// CompiledMarks is the directory, in the cache, of the marks of modules a child compiled: a later
// process that finds a module's mark loads it from the cache without a child of its own.
const CompiledMarks = "skillbox-compiled"

// markPath is where the mark of wasm compiled with pages would be.
func markPath(cacheDir string, pages uint32, src Source) string {
	h := sha256.New()
	h.Write(src.Wasm)
	fmt.Fprintf(h, "\x00%d\x00%s\x00%t\x00frames-1", pages, WazeroSubdir(), src.Stoppable)
	return filepath.Join(cacheDir, CompiledMarks, hex.EncodeToString(h.Sum(nil)))
}

// childRun is what a child compilation cost: whether one ran, its peak memory, its time.
type childRun struct {
	Ran  bool
	Peak int64
	Took time.Duration
}

// compileInChild compiles wasm in a child process into cacheDir, within the memory and time the
// admission allows, unless a child did already (its mark is there). For a stoppable source, the
// child measures its frames too: the mark holds their table (see framed.go), returned. The error
// is a *CompileError, or ctx's.
func compileInChild(ctx context.Context, cacheDir string, pages uint32, src Source, maxMem int64, timeout time.Duration) (childRun, []byte, error) {
	mark := markPath(cacheDir, pages, src)
	if table, ok := readMark(mark); ok {
		return childRun{}, table, nil
	}
	run, table, err := childCompile(ctx, cacheDir, pages, src, maxMem, timeout)
	if err != nil {
		return run, nil, err
	}
	writeMark(mark, table)
	return run, table, nil
}

// maxMark bounds a mark: a frame table, 4 bytes a function.
const maxMark = 64 << 20

// readMark reads the mark at path: whether it is there, and what it holds.
func readMark(path string) ([]byte, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxMark {
		return nil, false
	}
	b, err := os.ReadFile(path)
	return b, err == nil
}

// writeMark writes a mark holding table. The cache directory is the user's own, 0700
// (cachedir.go): a mark there is ours. Its directory is made 0700 whatever the umask, like the
// cache's own; the mark is written whole or not at all.
func writeMark(path string, table []byte) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil || os.Chmod(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".mark-*")
	if err != nil {
		return
	}
	_, werr := f.Write(table)
	if cerr := f.Close(); werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		return
	}
	if os.Rename(f.Name(), path) != nil {
		_ = os.Remove(f.Name())
	}
}

// childCompile runs one child compilation and watches it; it returns the frame table the child
// answered, if any.
func childCompile(ctx context.Context, cacheDir string, pages uint32, src Source, maxMem int64, timeout time.Duration) (run childRun, table []byte, err error) {
	run.Ran = true
	start := time.Now()
	defer func() { run.Took = time.Since(start) }()
	exe, err := os.Executable()
	if err != nil {
		return run, nil, fmt.Errorf("compile child: %w", err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	req := childRequest{CacheDir: cacheDir, Pages: pages, Memory: maxMem * 3 / 4, Stoppable: src.Stoppable}
	module := src.Wasm
	if src.Stoppable && src.Orig != nil && !src.Framed {
		req.Framed, module = true, src.Orig
	}
	head, _ := json.Marshal(req)
	cmd.Stdin = io.MultiReader(bytes.NewReader(append(head, '\n')), bytes.NewReader(module))
	var stderr boundedBuffer
	cmd.Stderr = &stderr
	stdout := &limitedBuffer{max: maxMark}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		return run, nil, fmt.Errorf("compile child: %w", err)
	}
	// Watch the child's memory; kill it the moment it holds more than it may.
	overMemory := make(chan int64, 1)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if rss := processRSS(cmd.Process.Pid); rss > maxMem {
					overMemory <- rss
					_ = cmd.Process.Kill()
					return
				}
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	run.Peak = peakRSS(cmd.ProcessState)
	select {
	case rss := <-overMemory:
		return run, nil, &CompileError{Bound: "compileMemory", Msg: fmt.Sprintf("compiling it took more than %d MiB (%d MiB when it was stopped): the most a compilation may hold (Admission.CompileMemory, serve --compile-memory); rebuild with optimisations, or split its largest functions", maxMem>>20, rss>>20)}
	default:
	}
	switch {
	case err == nil:
		return run, stdout.Bytes(), nil
	case parent.Err() != nil:
		return run, nil, parent.Err()
	case ctx.Err() != nil:
		return run, nil, &CompileError{Bound: "compileTimeout", Msg: fmt.Sprintf("compiling it took longer than %s (Admission.CompileTimeout, serve --compile-timeout): rebuild with optimisations, or split its largest functions", timeout)}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		return run, nil, &CompileError{Msg: "does not compile: " + strings.TrimSpace(stderr.String())}
	}
	return run, nil, fmt.Errorf("compile child: %v: %s", err, strings.TrimSpace(stderr.String()))
}

// processRSS reads a process's resident memory, in bytes (0 when it cannot be read).
func processRSS(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// boundedBuffer keeps the first 4 KiB written to it: a child's error message.
type boundedBuffer struct{ b bytes.Buffer }

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := 4<<10 - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *boundedBuffer) String() string { return w.b.String() }

// limitedBuffer keeps what is written to it up to max bytes, and refuses the rest: a child's
// answer, which a bug could make endless.
type limitedBuffer struct {
	b   bytes.Buffer
	max int
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		return 0, errors.New("compile child: its answer is too long")
	}
	return w.b.Write(p)
}

func (w *limitedBuffer) Bytes() []byte { return w.b.Bytes() }
