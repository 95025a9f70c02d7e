package wasifs

//go:generate clang --target=wasm32-wasi -O2 -Wall -Wl,--strip-all -o testdata/probe.wasm testdata/probe.c

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// probeWasm is testdata/probe.c built by the go:generate line above (Debian: clang, lld and
// wasi-libc). It runs the file operations named in its arguments and prints what it got.
//
//go:embed testdata/probe.wasm
var probeWasm []byte

var probeOnce struct {
	sync.Once
	rt  wazero.Runtime
	mod wazero.CompiledModule
	err error
}

// compiledProbe compiles the probe once for the test binary; every run instantiates it afresh.
func compiledProbe(tb testing.TB) (wazero.Runtime, wazero.CompiledModule) {
	tb.Helper()
	probeOnce.Do(func() {
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		probeOnce.rt = rt
		probeOnce.mod, probeOnce.err = rt.CompileModule(ctx, probeWasm)
	})
	if probeOnce.err != nil {
		tb.Fatalf("compile testdata/probe.wasm: %v", probeOnce.err)
	}
	return probeOnce.rt, probeOnce.mod
}

// mount is one file system the probe sees, at a guest path.
type mount struct {
	guest string
	fs    sys.FS
}

// probe runs the guest with the mounts and the operations, and returns its output lines. It
// fails the test if the run does not end within 2 minutes (a host call blocked on a FIFO would
// not); a run takes milliseconds, so only a hang, never a loaded machine, meets that bound.
func probe(tb testing.TB, mounts []mount, ops ...string) []string {
	tb.Helper()
	rt, mod := compiledProbe(tb)
	var cfg wazero.FSConfig = wazero.NewFSConfig()
	for _, m := range mounts {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(m.fs, m.guest)
	}
	var out bytes.Buffer
	mc := wazero.NewModuleConfig().WithName("").WithArgs(append([]string{"probe"}, ops...)...).
		WithStdout(&out).WithStderr(&out).WithFSConfig(cfg)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		m, err := rt.InstantiateModule(ctx, mod, mc)
		if m != nil {
			m.Close(ctx)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("probe %q: %v\n%s", ops, err, out.String())
		}
	case <-time.After(3 * time.Minute):
		tb.Fatalf("probe %q did not finish: a host call is blocked", ops)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// expectLines compares the probe's output with want, line by line.
func expectLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
}

// tree is a host directory to mount, beside a secret it must not reach.
type tree struct {
	mount, outside, secret string
}

// hostTree builds <tmp>/mount with files, symlinks that stay inside, symlinks that leave it in
// every way (absolute, "..", a chain, a symlinked directory, absolute and relative), and a FIFO;
// and <tmp>/outside/secret.txt, what the escapes point at.
func hostTree(t testing.TB) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{mount: filepath.Join(base, "mount"), outside: filepath.Join(base, "outside")}
	tr.secret = filepath.Join(tr.outside, "secret.txt")
	for _, d := range []string{tr.outside, filepath.Join(tr.mount, "sub")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(tr.secret, []byte("SECRET"), 0o644))
	must(t, os.WriteFile(filepath.Join(tr.mount, "hello.txt"), []byte("hello"), 0o644))
	must(t, os.WriteFile(filepath.Join(tr.mount, "sub", "inner.txt"), []byte("inner"), 0o644))
	links := map[string]string{
		"abs":    tr.secret,
		"rel":    "../outside/secret.txt",
		"chain":  "chain2",
		"chain2": "sub/up",
		"sub/up": "../rel",
		"outdir": "../outside",
		"absdir": tr.outside,
		"inlink": "sub/inner.txt",
		"indir":  "sub",
		"dangle": filepath.Join(tr.outside, "planted.txt"),
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(tr.mount, name)))
	}
	must(t, syscall.Mkfifo(filepath.Join(tr.mount, "fifo"), 0o644))
	return tr
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustDir(t testing.TB, root string, opts Options) *FS {
	t.Helper()
	f, err := Dir(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// escapeOps read the secret every way a symlink or a path can point at it.
var escapeOps = []string{
	"read:/m/abs", "read:/m/rel", "read:/m/chain", "read:/m/outdir/secret.txt",
	"read:/m/absdir/secret.txt", "stat:/m/rel", "readdir:/m/outdir",
	"read:/m/../outside/secret.txt", "read:/m/sub/../../outside/secret.txt",
}

func TestGuestSymlinkEscapesRefused(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	got := probe(t, []mount{{"/m", mustDir(t, tr.mount, Options{})}}, append(escapeOps,
		"readlink:/m/rel", "readlink:/m/abs", "lstat:/m/rel",
		"read:/m/inlink", "read:/m/indir/inner.txt", "readlink:/m/inlink", "read:/m/hello.txt",
		"readdir:/m", "stat:/m/sub")...)
	expectLines(t, got, []string{
		"read /m/abs = EACCES",
		"read /m/rel = EACCES",
		"read /m/chain = EACCES",
		"read /m/outdir/secret.txt = EACCES",
		"read /m/absdir/secret.txt = EACCES",
		"stat /m/rel = EACCES",
		"readdir /m/outdir = EACCES",
		"read /m/../outside/secret.txt = EPERM",
		"read /m/sub/../../outside/secret.txt = EPERM",
		"readlink /m/rel = EACCES",
		"readlink /m/abs = EACCES",
		"lstat /m/rel = ok symlink 21",
		"read /m/inlink = ok inner",
		"read /m/indir/inner.txt = ok inner",
		"readlink /m/inlink = ok sub/inner.txt",
		"read /m/hello.txt = ok hello",
		"readdir /m = ok abs absdir chain chain2 dangle fifo hello.txt indir inlink outdir rel sub",
		"stat /m/sub = ok dir",
	})
}

// TestGuestDirMountFollowsEscapes runs the same operations through wazero's own directory
// mount: the secret is read. It shows the probe and the tree do catch an escape, so the
// refusals above are this package's doing.
func TestGuestDirMountFollowsEscapes(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	got := probe(t, []mount{{"/m", sysfs.DirFS(tr.mount)}}, escapeOps[:5]...)
	for _, line := range got {
		if !strings.HasSuffix(line, "= ok SECRET") {
			t.Errorf("wazero's DirFS no longer follows this escape (update the package doc): %s", line)
		}
	}
}

func TestGuestReadOnlyRefusesMutations(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	got := probe(t, []mount{{"/m", mustDir(t, tr.mount, Options{})}},
		"write:/m/hello.txt:x", "write:/m/new.txt:x", "append:/m/hello.txt:x", "creat:/m/new.txt",
		"openrw:/m/hello.txt", "mkdir:/m/d", "rmdir:/m/sub", "unlink:/m/hello.txt",
		"rename:/m/hello.txt:/m/moved.txt", "symlink:hello.txt:/m/l", "link:/m/hello.txt:/m/l",
		"read:/m/hello.txt", "readdir:/m/sub", "stat:/m/hello.txt")
	expectLines(t, got, []string{
		"write /m/hello.txt:x = EROFS",
		"write /m/new.txt:x = EROFS",
		"append /m/hello.txt:x = EROFS",
		"creat /m/new.txt = EROFS",
		"openrw /m/hello.txt = EROFS",
		"mkdir /m/d = EROFS",
		"rmdir /m/sub = EROFS",
		"unlink /m/hello.txt = EROFS",
		"rename /m/hello.txt:/m/moved.txt = EROFS",
		"symlink hello.txt:/m/l = EROFS",
		"link /m/hello.txt:/m/l = EROFS",
		"read /m/hello.txt = ok hello",
		"readdir /m/sub = ok inner.txt up",
		"stat /m/hello.txt = ok file 5",
	})
	if b, _ := os.ReadFile(filepath.Join(tr.mount, "hello.txt")); string(b) != "hello" {
		t.Errorf("hello.txt changed on the host: %q", b)
	}
}

func TestGuestWritable(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	w := mustDir(t, tr.mount, Options{Writable: true, MaxBytes: 1 << 20, MaxFiles: 100})
	tmp, cleanup, err := PrivateTmp(Options{MaxBytes: 1 << 20, MaxFiles: 100}, nil)
	must(t, err)
	defer cleanup()
	got := probe(t, []mount{{"/m", w}, {"/tmp", tmp}},
		"write:/m/new.txt:one", "append:/m/new.txt:two", "read:/m/new.txt",
		"mkdir:/m/d", "rename:/m/new.txt:/m/d/moved.txt", "read:/m/d/moved.txt", "readdir:/m/d",
		"rename:/m/d/moved.txt:/tmp/moved.txt", "rename:/m/d/moved.txt:/m/../moved.txt",
		"rename:/m/d/moved.txt:/m/outdir/moved.txt", "write:/m/rel:overwrite", "write:/m/outdir/new.txt:x",
		"write:/m/dangle:planted", "append:/m/dangle:planted", "creat:/m/dangle", "mkdir:/m/outdir/d",
		"write:/m/inlink:through a link inside", "read:/m/sub/inner.txt",
		"symlink:/etc/hostname:/m/l", "symlink:hello.txt:/m/l", "link:/m/hello.txt:/m/l",
		"write:/tmp/t.txt:temp", "read:/tmp/t.txt", "readdir:/tmp",
		"unlink:/m/d/moved.txt", "rmdir:/m/d", "unlink:/m/sub", "rmdir:/m/hello.txt", "readdir:/m")
	expectLines(t, got, []string{
		"write /m/new.txt:one = ok 3",
		"append /m/new.txt:two = ok 3",
		"read /m/new.txt = ok onetwo",
		"mkdir /m/d = ok",
		"rename /m/new.txt:/m/d/moved.txt = ok",
		"read /m/d/moved.txt = ok onetwo",
		"readdir /m/d = ok moved.txt",
		"rename /m/d/moved.txt:/tmp/moved.txt = ENOSYS",
		"rename /m/d/moved.txt:/m/../moved.txt = EPERM",
		"rename /m/d/moved.txt:/m/outdir/moved.txt = EACCES",
		"write /m/rel:overwrite = EACCES",
		"write /m/outdir/new.txt:x = EACCES",
		"write /m/dangle:planted = EACCES",
		"append /m/dangle:planted = EACCES",
		"creat /m/dangle = EEXIST",
		"mkdir /m/outdir/d = EACCES",
		"write /m/inlink:through a link inside = ok 21",
		"read /m/sub/inner.txt = ok through a link inside",
		"symlink /etc/hostname:/m/l = EPERM",
		"symlink hello.txt:/m/l = EPERM",
		"link /m/hello.txt:/m/l = EPERM",
		"write /tmp/t.txt:temp = ok 4",
		"read /tmp/t.txt = ok temp",
		"readdir /tmp = ok t.txt",
		"unlink /m/d/moved.txt = ok",
		"rmdir /m/d = ok",
		"unlink /m/sub = EISDIR",
		"rmdir /m/hello.txt = ENOTDIR",
		"readdir /m = ok abs absdir chain chain2 dangle fifo hello.txt indir inlink outdir rel sub",
	})
	entries, err := os.ReadDir(tr.outside)
	must(t, err)
	if b, _ := os.ReadFile(tr.secret); len(entries) != 1 || string(b) != "SECRET" {
		t.Errorf("the directory outside the mount changed: %v, secret %q", entries, b)
	}
	if u := w.Usage(); u.BytesWritten != 27 || u.FilesCreated != 2 || u.Exceeded != nil {
		t.Errorf("usage %+v, want 27 bytes, 2 files, nothing exceeded", u)
	}
}

func TestGuestByteBudget(t *testing.T) {
	t.Parallel()
	tmp, cleanup, err := PrivateTmp(Options{MaxBytes: 10000, MaxFiles: 10}, nil)
	must(t, err)
	defer cleanup()
	got := probe(t, []mount{{"/tmp", tmp}},
		"fill:/tmp/a:8192", "fill:/tmp/b:8192", "write:/tmp/c:x", "stat:/tmp/b")
	expectLines(t, got, []string{
		"fill /tmp/a:8192 = ok 8192",
		"fill /tmp/b:8192 = EIO after 1808",
		"write /tmp/c:x = EIO",
		"stat /tmp/b = ok file 1808",
	})
	u := tmp.Usage()
	var be *BudgetError
	if u.BytesWritten != 10000 || !errorsAs(u.Exceeded, &be) || be.Field != "MaxBytes" || be.Path != "b" || be.Limit != 10000 {
		t.Errorf("usage %+v (%v), want 10000 bytes and MaxBytes exceeded at b", u, u.Exceeded)
	}
}

func TestGuestHoleAndFileBudget(t *testing.T) {
	t.Parallel()
	tmp, cleanup, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 3}, nil)
	must(t, err)
	defer cleanup()
	got := probe(t, []mount{{"/tmp", tmp}},
		"write:/tmp/a:x", "seekw:/tmp/a:999", "seekw:/tmp/a:1000000000", "mkdir:/tmp/d",
		"write:/tmp/d/b:x", "write:/tmp/a:overwrite is free of the file budget", "creat:/tmp/c",
		"mkdir:/tmp/e", "unlink:/tmp/d/b", "creat:/tmp/d/b", "stat:/tmp/a")
	expectLines(t, got, []string{
		"write /tmp/a:x = ok 1",
		"seekw /tmp/a:999 = ok",
		"seekw /tmp/a:1000000000 = EIO",
		"mkdir /tmp/d = ok",
		"write /tmp/d/b:x = ok 1",
		"write /tmp/a:overwrite is free of the file budget = ok 36",
		"creat /tmp/c = EIO",
		"mkdir /tmp/e = EIO",
		"unlink /tmp/d/b = ok",
		"creat /tmp/d/b = EIO",
		"stat /tmp/a = ok file 36",
	})
	var be *BudgetError
	if u := tmp.Usage(); u.FilesCreated != 3 || !errorsAs(u.Exceeded, &be) || be.Field != "MaxBytes" {
		t.Errorf("usage %+v (%v): want 3 files and the first refusal, the seek, on MaxBytes", u, u.Exceeded)
	}
}

func TestGuestSpecialFilesRefused(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	w := mustDir(t, tr.mount, Options{Writable: true, MaxBytes: 100, MaxFiles: 1})
	got := probe(t, []mount{{"/m", w}}, "read:/m/fifo", "openrw:/m/fifo", "write:/m/fifo:x", "append:/m/fifo:x", "stat:/m/fifo")
	expectLines(t, got, []string{
		"read /m/fifo = EACCES",
		"openrw /m/fifo = EACCES",
		"write /m/fifo:x = EACCES",
		"append /m/fifo:x = EACCES",
		"stat /m/fifo = ok other 0",
	})
}

func errorsAs(err error, target any) bool { return err != nil && errors.As(err, target) }
