package runtime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/spec"
)

// oneFunctionModule is a module with memory and one exported function, "execute", whose body
// (without its size) is body.
func oneFunctionModule(body []byte) []byte {
	var b bytes.Buffer
	b.Write(wasmHeader())
	section := func(id byte, data []byte) {
		b.WriteByte(id)
		b.Write(appendULEB(nil, uint64(len(data))))
		b.Write(data)
	}
	section(1, []byte{0x01, 0x60, 0x00, 0x00})                                       // () -> ()
	section(3, []byte{0x01, 0x00})                                                   // one function
	section(5, []byte{0x01, 0x00, 0x01})                                             // memory, min 1 page
	section(7, append([]byte{0x01, 0x07}, append([]byte("execute"), 0x00, 0x00)...)) // export
	code := append(appendULEB([]byte{0x01}, uint64(len(body))), body...)
	section(10, code)
	return b.Bytes()
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// chainBody is the shape that costs wazero's compiler memory by the square of its size: a chain
// of loads (each a new value with a known bound), then empty blocks (each of which copies them).
// 16 KiB of it takes about 190 MiB to compile.
func chainBody(size int) []byte {
	b := []byte{0x00, 0x41, 0x00} // no locals; i32.const 0
	for len(b)+3 <= size/2 {
		b = append(b, 0x28, 0x02, 0x00) // i32.load
	}
	b = append(b, 0x1a) // drop
	for len(b)+4 <= size {
		b = append(b, 0x02, 0x40, 0x0b) // block end
	}
	return append(b, 0x0b)
}

// blocksBody is empty blocks: little memory, but time by the square of their number.
func blocksBody(size int) []byte {
	b := []byte{0x00}
	for len(b)+4 <= size {
		b = append(b, 0x02, 0x40, 0x0b)
	}
	return append(b, 0x0b)
}

func compileBombSkill(t *testing.T, dir, id string, body []byte) {
	t.Helper()
	sd := fixture(t, dir, id, simple(id, ""), "")
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), oneFunctionModule(body), 0o644))
}

// A module whose compilation needs more than Admission.CompileMemory is stopped in its child: the
// run fails memory_limit naming the bound, the host did not hold the memory, validate says the
// same, and the next run does not compile it again.
func TestCompileMemoryIsEnforcedInAChild(t *testing.T) {
	if !engine.CanCompileInChild() {
		t.Skip("this test binary does not call MaybeCompileChild")
	}
	dir := t.TempDir()
	compileBombSkill(t, dir, "chain", chainBody(16<<10))
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	// The bound sits between the two, far from each: a child compiling hello peaks at 19 MiB
	// (47 MiB in a -race binary, whose runtime holds more), one compiling chain at 208 MiB
	// (611 MiB under -race).
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{NoCache: true, Admission: Admission{CompileMemory: 128 << 20}})})
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	_, err := rt.Run(context.Background(), run.Request{Skill: "chain", Who: testAdmin})
	goruntime.ReadMemStats(&after)
	if !errors.Is(err, run.ErrMemoryLimit) || !strings.Contains(err.Error(), "CompileMemory") {
		t.Fatalf("run of a compile bomb: %v", err)
	}
	if ce := (*CompileError)(nil); !errors.As(err, &ce) || ce.Bound != "compileMemory" {
		t.Errorf("run of a compile bomb: %v; a caller cannot match it as a *CompileError", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("this process allocated %d MiB while the child compiled", grew>>20)
	}
	children := rt.Stats().ChildCompiles
	if _, err := rt.Run(context.Background(), run.Request{Skill: "chain", Who: testAdmin}); !errors.Is(err, run.ErrMemoryLimit) || rt.Stats().ChildCompiles != children {
		t.Errorf("second run: %v; %d compilations, want the refusal remembered", err, rt.Stats().ChildCompiles-children)
	}
	s, _ := rt.CheckSkill(context.Background(), filepath.Join(dir, "chain"))
	if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), "CompileMemory") {
		t.Errorf("validate: %v", s.Err())
	}
	// The runtime still compiles and runs what fits.
	if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil {
		t.Errorf("hello after the bomb: %v", err)
	}
}

// A module whose compilation takes longer than Admission.CompileTimeout is stopped: wazero's own
// CompileModule would not stop within a function.
func TestCompileTimeoutIsEnforcedInAChild(t *testing.T) {
	if !engine.CanCompileInChild() {
		t.Skip("this test binary does not call MaybeCompileChild")
	}
	dir := t.TempDir()
	compileBombSkill(t, dir, "blocks", blocksBody(64<<10)) // seconds of compiling
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{NoCache: true, Admission: Admission{CompileTimeout: 300 * time.Millisecond}})})
	_, err := rt.Run(context.Background(), run.Request{Skill: "blocks", Who: testAdmin})
	if !errors.Is(err, run.ErrTimeout) || !strings.Contains(err.Error(), "CompileTimeout") {
		t.Fatalf("run: %v", err)
	}
}

// Compiling in a child hands the code over through the cache: the process compiles nothing
// itself that the child did not (a Go guest compiles in about a second; loading it, a tenth).
func TestCompilesHappenInAChild(t *testing.T) {
	if !engine.CanCompileInChild() {
		t.Skip("this test binary does not call MaybeCompileChild")
	}
	sh := newShared(t, SharedConfig{NoCache: true})
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}, Shared: sh})
	if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Args: []byte(`{"name":"a"}`), Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	if st := rt.Stats(); st.ChildCompiles != 1 || st.Compiles != 1 {
		t.Errorf("%d compilations, %d in a child; want one, in a child", st.Compiles, st.ChildCompiles)
	}
	if rt.privateCache == "" || rt.cacheDir != rt.privateCache {
		t.Errorf("without a cache, the runtime hands code over through %q", rt.cacheDir)
	}
	dir := rt.privateCache
	must(t, rt.Close(context.Background()))
	must(t, sh.Close(context.Background()))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the private cache %s outlived the Shared's Close: %v", dir, err)
	}
}

// A module a child compiled into a cache is marked there: another runtime (another process of the
// same program) over that cache loads it without a child of its own.
func TestCompiledMarksSpareChildren(t *testing.T) {
	if !engine.CanCompileInChild() {
		t.Skip("this test binary does not call MaybeCompileChild")
	}
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	cache := filepath.Join(t.TempDir(), "cache")
	var children []int64
	for range 2 {
		rt := newRuntime(t, Config{SkillDirs: []string{dir}, Shared: newShared(t, SharedConfig{CacheDir: cache})})
		if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil {
			t.Fatal(err)
		}
		children = append(children, rt.Stats().ChildCompiles)
	}
	if children[0] != 1 || children[1] != 0 {
		t.Errorf("children per runtime %v, want [1 0]", children)
	}
}
