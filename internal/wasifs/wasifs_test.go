package wasifs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

func TestCleanPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		given string
		want  string
		errno sys.Errno
	}{
		{given: "a", want: "a"},
		{given: ".", want: "."},
		{given: "./", want: "."},
		{given: "a/./b//c", want: "a/b/c"},
		{given: "a/b/", want: "a/b/"},
		{given: "a/../b", want: "b"},
		{given: "a/..", want: "."},
		{given: "", errno: sys.ENOENT},
		{given: "..", errno: sys.EPERM},
		{given: "../a", errno: sys.EPERM},
		{given: "a/../../b", errno: sys.EPERM},
		{given: "a/b/../../..", errno: sys.EPERM},
		{given: "/etc/passwd", errno: sys.EPERM},
		{given: "//a", errno: sys.EPERM},
		{given: "a\x00b", errno: sys.EINVAL},
		{given: strings.Repeat("a/", maxPath), errno: sys.ENAMETOOLONG},
		{given: "..a", want: "..a"},
		{given: "a/..b", want: "a/..b"},
	} {
		got, errno := cleanPath(tc.given)
		if got != tc.want || errno != tc.errno {
			t.Errorf("cleanPath(%q) = %q, %v; want %q, %v", tc.given, got, errno, tc.want, tc.errno)
		}
	}
}

func TestInside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		link, target string
		want         bool
	}{
		{"a", "b", true},
		{"d/a", "../b", true},
		{"d/a", "../../b", false},
		{"a", "../b", false},
		{"a", "/etc", false},
		{"a", "", false},
		{"d/e/a", "../x/../../y", true},
		{"d/", "../y", false},
	} {
		if got := inside(tc.link, tc.target); got != tc.want {
			t.Errorf("inside(%q, %q) = %v, want %v", tc.link, tc.target, got, tc.want)
		}
	}
}

// FuzzPathsStayInside hands the FS any path and checks the invariant that matters: whatever
// opens, stats or reads as a link is inside the mount, never the secret beside it.
func FuzzPathsStayInside(f *testing.F) {
	for _, seed := range []string{"abs", "rel", "chain", "outdir/secret.txt", "absdir/secret.txt",
		"../outside/secret.txt", "sub/../../outside/secret.txt", "indir/../rel", "sub/up", "inlink",
		"outdir/", "./rel/", "sub/./up", "/etc/hostname", "fifo", "indir/../../outside"} {
		f.Add(seed)
	}
	tr := hostTree(f)
	fsys, err := Dir(tr.mount, Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer fsys.Close()
	secret, err := os.Stat(tr.secret)
	if err != nil {
		f.Fatal(err)
	}
	outside, err := os.Stat(tr.outside)
	if err != nil {
		f.Fatal(err)
	}
	forbidden := func(st wsys.Stat_t) bool {
		s, o := wsys.NewStat_t(secret), wsys.NewStat_t(outside)
		return (st.Dev == s.Dev && st.Ino == s.Ino) || (st.Dev == o.Dev && st.Ino == o.Ino)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if st, errno := fsys.Stat(p); errno == 0 && forbidden(st) {
			t.Fatalf("Stat(%q) reached outside the mount", p)
		}
		if target, errno := fsys.Readlink(p); errno == 0 && !inside(strings.TrimPrefix(p, "./"), target) {
			t.Fatalf("Readlink(%q) gave %q, which leaves the mount", p, target)
		}
		file, errno := fsys.OpenFile(p, sys.O_RDONLY, 0)
		if errno != 0 {
			return
		}
		defer file.Close()
		st, errno := file.Stat()
		if errno != 0 {
			t.Fatalf("Stat of open %q: %v", p, errno)
		}
		if forbidden(st) {
			t.Fatalf("OpenFile(%q) opened a file outside the mount", p)
		}
		if !st.Mode.IsRegular() && !st.Mode.IsDir() {
			t.Fatalf("OpenFile(%q) opened a %v", p, st.Mode.Type())
		}
	})
}

func TestOptionsValidated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{Writable: true, MaxFiles: 1}, "MaxBytes"},
		{Options{Writable: true, MaxBytes: -1, MaxFiles: 1}, "MaxBytes"},
		{Options{Writable: true, MaxBytes: 1}, "MaxFiles"},
		{Options{MaxBytes: 1, MaxFiles: 1}, "Writable"},
	} {
		_, err := Dir(dir, tc.opts)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Dir(%+v) = %v; want ErrOptions naming %s and the directory", tc.opts, err, tc.field)
		}
	}
	if _, _, err := PrivateTmp(Options{}, nil); !errors.Is(err, ErrOptions) {
		t.Errorf("PrivateTmp without a budget = %v, want ErrOptions", err)
	}
	if _, err := Dir(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dir of a missing directory = %v, want ErrNotExist", err)
	}
}

func TestTruncateCountsGrowth(t *testing.T) {
	t.Parallel()
	fsys := mustDir(t, t.TempDir(), Options{Writable: true, MaxBytes: 100, MaxFiles: 1})
	f, errno := fsys.OpenFile("a", sys.O_RDWR|sys.O_CREAT, 0o600)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	steps := []struct {
		size  int64
		errno sys.Errno
		used  int64
	}{
		{60, 0, 60},               // growth counts
		{10, 0, 60},               // shrinking gives nothing back
		{50, 0, 100},              // growth again: 40 more
		{51, errBudget, 100},      // one byte over
		{1 << 40, errBudget, 100}, // a hole past MaxBytes
	}
	for _, s := range steps {
		if errno := f.Truncate(s.size); errno != s.errno {
			t.Errorf("Truncate(%d) = %v, want %v", s.size, errno, s.errno)
		}
		if u := fsys.Usage(); u.BytesWritten != s.used {
			t.Errorf("after Truncate(%d): %d bytes used, want %d", s.size, u.BytesWritten, s.used)
		}
	}
	if n, errno := f.Pwrite([]byte("x"), 200); n != 0 || errno != errBudget {
		t.Errorf("Pwrite past MaxBytes = %d, %v; want 0, %v", n, errno, errBudget)
	}
	if !errors.Is(fsys.Usage().Exceeded, ErrBudget) {
		t.Errorf("Usage().Exceeded = %v, want ErrBudget", fsys.Usage().Exceeded)
	}
}

func TestPrivateTmpCleanup(t *testing.T) {
	t.Parallel()
	a, cleanA, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 10}, nil)
	must(t, err)
	b, cleanB, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 10}, nil)
	must(t, err)
	defer cleanB()
	got := probe(t, []mount{{"/tmp", a}, {"/other", b}},
		"mkdir:/tmp/d", "mkdir:/tmp/d/e", "write:/tmp/d/e/f:x", "write:/tmp/g:y", "readdir:/other")
	expectLines(t, got, []string{
		"mkdir /tmp/d = ok", "mkdir /tmp/d/e = ok", "write /tmp/d/e/f:x = ok 1", "write /tmp/g:y = ok 1",
		"readdir /other = ok",
	})
	dir := a.made()
	// Directories the guest (or anyone) made read-only or unsearchable must not keep the tree.
	must(t, os.Chmod(filepath.Join(dir, "d", "e"), 0o500))
	must(t, os.Chmod(filepath.Join(dir, "d"), 0))
	cleanA()
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("private /tmp %s left after cleanup: %v", dir, err)
	}
	cleanA() // a second call does nothing
	if _, errno := a.Stat("."); errno != sys.EBADF {
		t.Errorf("Stat after cleanup = %v, want EBADF", errno)
	}
}

func TestReadOnlyRefusesEveryMutation(t *testing.T) {
	t.Parallel()
	tr := hostTree(t)
	fsys := mustDir(t, tr.mount, Options{})
	f, errno := fsys.OpenFile("hello.txt", sys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	for name, errno := range map[string]sys.Errno{
		"Mkdir":         fsys.Mkdir("d", 0o755),
		"Chmod":         fsys.Chmod("hello.txt", 0o777),
		"Rename":        fsys.Rename("hello.txt", "x"),
		"Rmdir":         fsys.Rmdir("sub"),
		"Unlink":        fsys.Unlink("hello.txt"),
		"Link":          fsys.Link("hello.txt", "x"),
		"Symlink":       fsys.Symlink("hello.txt", "x"),
		"Utimens":       fsys.Utimens("hello.txt", 0, 0),
		"File.Truncate": f.Truncate(0),
		"File.Utimens":  f.Utimens(0, 0),
		"File.Write":    second(f.Write([]byte("x"))),
		"File.Pwrite":   second(f.Pwrite([]byte("x"), 0)),
	} {
		if errno != sys.EROFS {
			t.Errorf("%s on a read-only mount = %v, want EROFS", name, errno)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(tr.mount, "hello.txt")); string(b) != "hello" {
		t.Errorf("hello.txt changed: %q", b)
	}
}

func second[T any](_ T, errno sys.Errno) sys.Errno { return errno }

// TestReaddirChunks reads a directory larger than one chunk: asked for more than it holds, the
// FS returns what there is (wazero takes fewer than asked as the end); asked for fewer, it
// returns exactly that many and goes on from there.
func TestReaddirChunks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = readdirChunk*2 + 5
	for i := range n {
		must(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644))
	}
	fsys := mustDir(t, dir, Options{})
	d, errno := fsys.OpenFile(".", sys.O_RDONLY|sys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer d.Close()
	first, errno := d.Readdir(10)
	if errno != 0 || len(first) != 10 {
		t.Fatalf("Readdir(10) = %d entries, %v", len(first), errno)
	}
	rest, errno := d.Readdir(1 << 30)
	if errno != 0 || len(rest) != n-10 {
		t.Fatalf("Readdir(1<<30) = %d entries, %v; want %d", len(rest), errno, n-10)
	}
	if rest[0].Ino == 0 || rest[0].Type != 0 {
		t.Errorf("entry %+v: want an inode and a regular file's type", rest[0])
	}
	if _, errno := d.Seek(0, io.SeekStart); errno != 0 {
		t.Fatal(errno)
	}
	if again, errno := d.Readdir(0); errno != 0 || len(again) != n {
		t.Errorf("after rewinding, Readdir(0) = %d entries, %v; want %d", len(again), errno, n)
	}
}

// MaxFileBytes bounds each file below MaxBytes, by every way a file grows: a write (cut short
// to the room left, then refused), a write to a file opened to append, a write at an offset,
// a seek for writing, and a truncate.
func TestMaxFileBytes(t *testing.T) {
	t.Parallel()
	fsys := mustDir(t, t.TempDir(), Options{Writable: true, MaxBytes: 100, MaxFiles: 4, MaxFileBytes: 10})
	f, errno := fsys.OpenFile("a", sys.O_RDWR|sys.O_CREAT, 0o600)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	if n, errno := f.Write([]byte("0123456")); n != 7 || errno != 0 {
		t.Fatalf("Write = %d, %v", n, errno)
	}
	if n, errno := f.Write([]byte("789abc")); n != 3 || errno != 0 {
		t.Errorf("Write past MaxFileBytes = %d, %v; want 3 (cut short), 0", n, errno)
	}
	if n, errno := f.Write([]byte("x")); n != 0 || errno != errBudget {
		t.Errorf("Write at MaxFileBytes = %d, %v; want 0, %v", n, errno, errBudget)
	}
	var be *BudgetError
	if !errors.As(fsys.Usage().Exceeded, &be) || be.Field != "MaxFileBytes" || be.Limit != 10 || be.Path != "a" {
		t.Errorf("Exceeded = %v; want MaxFileBytes 10 of a", fsys.Usage().Exceeded)
	}
	if n, errno := f.Pwrite([]byte("xy"), 9); n != 1 || errno != 0 {
		t.Errorf("Pwrite across MaxFileBytes = %d, %v; want 1, 0", n, errno)
	}
	if _, errno := f.Seek(11, io.SeekStart); errno != errBudget {
		t.Errorf("Seek past MaxFileBytes = %v, want %v", errno, errBudget)
	}
	if errno := f.Truncate(11); errno != errBudget {
		t.Errorf("Truncate past MaxFileBytes = %v, want %v", errno, errBudget)
	}
	g, errno := fsys.OpenFile("b", sys.O_WRONLY|sys.O_CREAT|sys.O_APPEND, 0o600)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer g.Close()
	for i, want := range []int{8, 2, 0} {
		if n, _ := g.Write([]byte("01234567")); n != want {
			t.Errorf("append %d wrote %d, want %d", i, n, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(fsys.root.Name(), "b")); err != nil || fi.Size() != 10 {
		t.Errorf("b: %v, %v; want 10 bytes", fi, err)
	}
	if _, err := Dir(t.TempDir(), Options{Writable: true, MaxBytes: 1, MaxFiles: 1, MaxFileBytes: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("a negative MaxFileBytes = %v, want ErrOptions", err)
	}
}

// A private /tmp the guest never uses makes no directory; one that cannot be made fails every
// call with EIO and says why once.
func TestPrivateTmpIsMadeOnFirstUse(t *testing.T) {
	host := t.TempDir()
	t.Setenv("TMPDIR", host)
	unused, clean, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 10}, nil)
	must(t, err)
	got := probe(t, []mount{{"/tmp", unused}}, "readdir:/tmp", "stat:/tmp/a", "read:/tmp/a", "unlink:/tmp/a", "rmdir:/tmp/d")
	expectLines(t, got, []string{"readdir /tmp = ok", "stat /tmp/a = ENOENT", "read /tmp/a = ENOENT", "unlink /tmp/a = ENOENT", "rmdir /tmp/d = ENOENT"})
	if unused.made() != "" {
		t.Fatalf("a /tmp only read made %s", unused.made())
	}
	clean()
	used, clean, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 10}, nil)
	must(t, err)
	got = probe(t, []mount{{"/tmp", used}}, "readdir:/tmp", "write:/tmp/a:x", "read:/tmp/a", "readdir:/tmp")
	expectLines(t, got, []string{"readdir /tmp = ok", "write /tmp/a:x = ok 1", "read /tmp/a = ok x", "readdir /tmp = ok a"})
	if dir := used.made(); filepath.Dir(dir) != host {
		t.Fatalf("a used /tmp is %q, want one in %s", dir, host)
	}
	clean()
	if entries, _ := os.ReadDir(host); len(entries) != 0 {
		t.Fatalf("left in the host's temporary directory: %v", entries)
	}

	t.Setenv("TMPDIR", filepath.Join(host, "missing"))
	var told []error
	broken, clean, err := PrivateTmp(Options{MaxBytes: 1000, MaxFiles: 10}, func(err error) { told = append(told, err) })
	must(t, err)
	defer clean()
	got = probe(t, []mount{{"/tmp", broken}}, "write:/tmp/a:x", "stat:/tmp/a")
	expectLines(t, got, []string{"write /tmp/a:x = EIO", "stat /tmp/a = EIO"})
	if len(told) != 1 || !errors.Is(told[0], fs.ErrNotExist) {
		t.Fatalf("told %v, want the one error of the missing directory", told)
	}
}
