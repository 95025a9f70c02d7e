package runtime

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/spec"
)

// A scan reads manifests only: executable skills are listed unchecked, with their metadata, by
// every accessor that needs no module; a broken manifest is broken at once.
func TestScanListsUnchecked(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", `"version":"1.0.0"`), "hello")
	fixture(t, dir, "corrupt", simple("corrupt", ""), "")
	must(t, os.WriteFile(filepath.Join(dir, "corrupt", spec.ModuleFile), []byte("\x00asm\x01\x00\x00\x00\x01\xff"), 0o644))
	fixture(t, dir, "typo", `{"id":"typo","name":"t","descripton":"x"}`, "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
	for id, want := range map[string]catalog.Status{"hello": catalog.StatusUnchecked, "corrupt": catalog.StatusUnchecked, "typo": catalog.StatusError} {
		s, _ := rt.Skill(id)
		if s.Status() != want || s.Summary().Status != want {
			t.Errorf("%s: %s, want %s", id, s.Status(), want)
		}
	}
	if h, _ := rt.Skill("hello"); h.Version() != "1.0.0" || h.Err() != nil || !h.Status().Usable() {
		t.Errorf("hello: %q %v", h.Version(), h.Err())
	}
	if st := rt.Stats(); st.Checks != 0 || st.ModuleReads != 0 {
		t.Errorf("the scan checked %d skills, read %d modules", st.Checks, st.ModuleReads)
	}
}

// The first run checks the skill, and it is active from then on; a corrupt module found then
// fails the run as a broken skill does, and the skill is listed broken.
func TestFirstRunChecks(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	fixture(t, dir, "corrupt", simple("corrupt", ""), "")
	must(t, os.WriteFile(filepath.Join(dir, "corrupt", spec.ModuleFile), []byte("\x00asm\x01\x00\x00\x00\x01\xff"), 0o644))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin})
	s, _ := rt.Skill("hello")
	if err != nil || s.Status() != catalog.StatusActive || res.Digest == "" || res.Digest != s.Digest() {
		t.Fatalf("run: %v, status %s, digest %q (skill's %q)", err, s.Status(), res.Digest, s.Digest())
	}
	want, err := registry.NewDigester().TreeDigest(s.Dir())
	if err != nil || res.Digest != want {
		t.Errorf("run digest %s, the tree's %s (%v)", res.Digest, want, err)
	}
	_, err = rt.Run(context.Background(), run.Request{Skill: "corrupt", Who: testAdmin})
	if !errors.Is(err, run.ErrNotFound) || !errors.Is(err, run.ErrBroken) || !strings.Contains(err.Error(), spec.ModuleFile) {
		t.Errorf("running a corrupt module: %v", err)
	}
	c, _ := rt.Skill("corrupt")
	if c.Status() != catalog.StatusError || c.Summary().Error == "" {
		t.Errorf("corrupt after its run: %s %q", c.Status(), c.Summary().Error)
	}
	if st := rt.Stats(); st.Checks != 2 || st.Compiles != 1 {
		t.Errorf("%d checks, %d compiles; want 2 and 1", st.Checks, st.Compiles)
	}
}

// The background check finds a corrupt module without anyone running it, and compiles nothing.
func TestBackgroundCheckFindsBroken(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	fixture(t, dir, "corrupt", simple("corrupt", ""), "")
	must(t, os.WriteFile(filepath.Join(dir, "corrupt", spec.ModuleFile), []byte("\x00asm\x01\x00\x00\x00\x01\xff"), 0o644))
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	gen := rt.Generation()
	settled(t, rt)
	c, _ := rt.Skill("corrupt")
	h, _ := rt.Skill("hello")
	if c.Status() != catalog.StatusError || !strings.Contains(c.Err().Error(), spec.ModuleFile) || h.Status() != catalog.StatusActive {
		t.Errorf("after the background check: corrupt %s %v, hello %s", c.Status(), c.Err(), h.Status())
	}
	if rt.Generation() == gen {
		t.Error("a skill found broken did not change the generation: cached tool lists would still offer it")
	}
	if st := rt.Stats(); st.Compiles != 0 || st.Checks != 2 {
		t.Errorf("%d compiles, %d checks; want 0 and 2", st.Compiles, st.Checks)
	}
}

// Concurrent first runs of one skill check it once.
func TestConcurrentFirstRunsCheckOnce(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "hello", simple("hello", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := rt.Run(context.Background(), run.Request{Skill: "hello", Who: testAdmin}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if st := rt.Stats(); st.Checks != 1 || st.ModuleReads != 1 {
		t.Errorf("%d checks, %d module reads; want 1 and 1", st.Checks, st.ModuleReads)
	}
}

// A module replaced under a checked version is not compiled under it: the run finds it changed,
// reloads once, and runs the new module, checked first; it never answers not found.
func TestModuleReplacedUnderPinnedVersion(t *testing.T) {
	dir := t.TempDir()
	sd := fixture(t, dir, "s", simple("s", `"parameters":{"type":"object"}`), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
	s, _ := rt.Skill("s")
	if s.Status() != catalog.StatusUnchecked || s.in().Verified().Status != catalog.StatusActive {
		t.Fatalf("checking: %s", s.Status())
	}
	before := rt.Generation()
	echo, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), echo, 0o644))
	res, err := rt.Run(context.Background(), run.Request{Skill: "s", Args: []byte(`{"x":1}`), Who: testAdmin})
	if err != nil || string(res.Result) != `{"x":1}` {
		t.Fatalf("run after the module changed: %v %+v", err, res)
	}
	if rt.Generation() == before {
		t.Error("the run did not reload the skills")
	}
	if got, _ := rt.Skill("s"); got.Digest() != res.Digest || got.Digest() == s.Digest() {
		t.Errorf("ran digest %s; the registry has %s, the old version %s", res.Digest, got.Digest(), s.Digest())
	}
}

// What was checked is remembered by the files' identity (path, size, modification time,
// inode): a rescan adopts the verdict of an unchanged skill without reading its module, and a
// changed file makes the skill unchecked again. The index carries it to a new Runtime; one that
// does not decode is ignored.
func TestFingerprintDecidesWhatIsKnown(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache") // made 0700 by New
	sd := fixture(t, dir, "s", simple("s", ""), "hello")
	fixture(t, dir, "other", simple("other", ""), "hello")
	cfg := Config{SkillDirs: []string{dir}, NoBackgroundCheck: true, Shared: newShared(t, SharedConfig{CacheDir: cache})}
	rt := newRuntime(t, cfg)
	s, _ := rt.Skill("s")
	digest := s.Digest() // checks it
	must(t, rt.Reload(context.Background()))
	s, _ = rt.Skill("s")
	if s.Status() != catalog.StatusActive || s.Digest() != digest || rt.Stats().ModuleReads != 1 {
		t.Fatalf("after a reload: %s, %d module reads; want active, adopted without a read", s.Status(), rt.Stats().ModuleReads)
	}
	if o, _ := rt.Skill("other"); o.Status() != catalog.StatusUnchecked {
		t.Errorf("other, never checked: %s", o.Status())
	}

	// A new Runtime over the same directories finds the verdict in the index, which its first
	// scan reads.
	must(t, rt.Close(context.Background()))
	rt2 := newRuntime(t, cfg)
	rt2.Skills()
	if s2, _ := rt2.Skill("s"); s2.Status() != catalog.StatusActive || s2.Digest() != digest || rt2.Stats().ModuleReads != 0 {
		t.Fatalf("a new runtime: %s, %d reads; want active from the index", s2.Status(), rt2.Stats().ModuleReads)
	}

	// A changed module is not adopted: same size, another content, a new modification time.
	wasm, err := os.ReadFile(filepath.Join(sd, spec.ModuleFile))
	must(t, err)
	wasm[len(wasm)-1] ^= 0xff
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile)+".new", wasm, 0o644))
	must(t, os.Rename(filepath.Join(sd, spec.ModuleFile)+".new", filepath.Join(sd, spec.ModuleFile))) // a new inode too
	must(t, rt2.Reload(context.Background()))
	s2, _ := rt2.Skill("s")
	if s2.Status() != catalog.StatusUnchecked {
		t.Fatalf("a changed module was adopted: %s", s2.Status())
	}
	if s2.in().Verified(); rt2.Stats().ModuleReads != 1 || s2.Digest() == digest {
		t.Errorf("checking the changed module: %d reads, digest changed %v", rt2.Stats().ModuleReads, s2.Digest() != digest)
	}
	must(t, rt2.Close(context.Background()))

	// A corrupt index is ignored, whole.
	idx, _ := filepath.Glob(filepath.Join(cache, "index", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("index files: %v", idx)
	}
	data, err := os.ReadFile(idx[0])
	must(t, err)
	data[len(data)/2] ^= 0x40
	must(t, os.WriteFile(idx[0], data, 0o600))
	var logs strings.Builder
	cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))
	rt3 := newRuntime(t, cfg)
	rt3.Skills()
	if s3, _ := rt3.Skill("s"); s3.Status() != catalog.StatusUnchecked || !strings.Contains(logs.String(), "skill index ignored") {
		t.Errorf("with a corrupt index: %s; log %s", s3.Status(), logs.String())
	}
}

// syncWriter lets a logger write from the background goroutine while the test reads.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
