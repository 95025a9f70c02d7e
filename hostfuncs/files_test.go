package hostfuncs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fsFixture is a run with three mounts over fresh temporary directories:
//
//	/workspace     ro  ws   (holds notes.md and dir/)
//	/workspace/out rw  out
//	/data          rw  data
type fsFixture struct {
	c             *Call
	ws, out, data string
	outside       string // a directory no mount covers, holding secret.txt
	replies       []reply
	mu            sync.Mutex
}

func newFS(t *testing.T, limits Limits) *fsFixture {
	t.Helper()
	f := &fsFixture{ws: t.TempDir(), out: t.TempDir(), data: t.TempDir(), outside: t.TempDir()}
	mustWrite(t, filepath.Join(f.ws, "notes.md"), "# notes\n")
	if err := os.Mkdir(filepath.Join(f.ws, "dir"), 0o750); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.outside, "secret.txt"), "top secret")
	f.c = NewCall(&Grant{Mounts: []Mount{
		{Path: "/workspace", Dir: f.ws},
		{Path: "/workspace/out", Dir: f.out, Writable: true},
		{Path: "/data", Dir: f.data, Writable: true},
	}, Limits: limits})
	t.Cleanup(func() { f.checkNoHostPaths(t) })
	return f
}

func bigLimits() Limits { return Limits{MaxFileBytes: 1 << 20, MaxWriteBytes: 1 << 20} }

func (f *fsFixture) read(p string) reply {
	r := f.c.readFile([]byte(p))
	f.record(r)
	return r
}

func (f *fsFixture) write(p string, data []byte) reply {
	r := f.c.writeFile([]byte(p), data)
	f.record(r)
	return r
}

func (f *fsFixture) record(r reply) {
	f.mu.Lock()
	f.replies = append(f.replies, r)
	f.mu.Unlock()
}

// checkNoHostPaths asserts that no refusal the guest saw, and no Denied entry, names a host
// directory: the guest only ever knows virtual paths.
func (f *fsFixture) checkNoHostPaths(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	texts := f.c.Usage().Denied
	for _, r := range f.replies {
		if r.status != StatusOK {
			texts = append(texts, string(r.payload))
		}
	}
	for _, s := range texts {
		for _, dir := range []string{f.ws, f.out, f.data, f.outside} {
			if strings.Contains(s, dir) {
				t.Errorf("message %q leaks the host path %s", s, dir)
			}
		}
	}
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadWriteRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	data := make([]byte, 300)
	for i := range data {
		data[i] = byte(i)
	}
	wantReply(t, f.write("/data/a/b/c/blob.bin", data), StatusOK)
	if got := mustRead(t, filepath.Join(f.data, "a", "b", "c", "blob.bin")); got != string(data) {
		t.Fatalf("host file holds %q, want the 300 bytes written", got)
	}
	r := f.read("/data/a/b/c/blob.bin")
	wantReply(t, r, StatusOK)
	if !bytes.Equal(r.payload, data) {
		t.Fatalf("read back %v, want %v", r.payload, data)
	}
	r = f.read("/workspace/notes.md")
	if r.status != StatusOK || string(r.payload) != "# notes\n" {
		t.Fatalf("read /workspace/notes.md = %v %q", r.status, r.payload)
	}
	wantReply(t, f.write("/data/empty", nil), StatusOK)
	if r := f.read("/data/empty"); r.status != StatusOK || len(r.payload) != 0 {
		t.Fatalf("read /data/empty = %v %q, want OK and empty", r.status, r.payload)
	}
	f.read("/workspace/notes.md") // listed once

	u := f.c.Usage()
	if want := []string{"/data/a/b/c/blob.bin", "/workspace/notes.md", "/data/empty"}; !slices.Equal(u.FilesRead, want) {
		t.Errorf("FilesRead = %q, want %q", u.FilesRead, want)
	}
	if want := []string{"/data/a/b/c/blob.bin", "/data/empty"}; !slices.Equal(u.FilesWritten, want) {
		t.Errorf("FilesWritten = %q, want %q", u.FilesWritten, want)
	}
	if u.BytesWritten != 300 || len(u.Denied) != 0 {
		t.Errorf("BytesWritten = %d, Denied = %q; want 300, none", u.BytesWritten, u.Denied)
	}
}

func TestWriteOverwriteLeavesNoTempFiles(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	for i, s := range []string{"first version, long", "second", ""} {
		wantReply(t, f.write("/data/sub/file.txt", []byte(s)), StatusOK)
		if got := mustRead(t, filepath.Join(f.data, "sub", "file.txt")); got != s {
			t.Fatalf("write %d: file holds %q, want %q", i, got, s)
		}
	}
	entries, err := os.ReadDir(filepath.Join(f.data, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "file.txt" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q, want only file.txt (no temporary files)", names)
	}
	if u := f.c.Usage(); u.BytesWritten != int64(len("first version, long")+len("second")) {
		t.Errorf("BytesWritten = %d: every write counts, overwrites included", u.BytesWritten)
	}
}

func TestWriteCreatesMissingMountDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "not", "yet")
	c := NewCall(&Grant{Mounts: []Mount{{Path: "/out", Dir: dir, Writable: true}}, Limits: bigLimits()})
	wantReply(t, c.readFile([]byte("/out/x")), StatusNotFound, "/out/x: no such file")
	wantReply(t, c.writeFile([]byte("/out/x"), []byte("hi")), StatusOK)
	if got := mustRead(t, filepath.Join(dir, "x")); got != "hi" {
		t.Errorf("file holds %q", got)
	}
}

func TestMountAccess(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	// The longest mount wins: /workspace/out is writable inside the read-only /workspace.
	wantReply(t, f.write("/workspace/out/report.txt", []byte("r")), StatusOK)
	if got := mustRead(t, filepath.Join(f.out, "report.txt")); got != "r" {
		t.Errorf("out/report.txt holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "out")); !os.IsNotExist(err) {
		t.Errorf("the write went to the /workspace directory too: %v", err)
	}
	r := f.read("/workspace/out/report.txt")
	if r.status != StatusOK || string(r.payload) != "r" {
		t.Errorf("read back = %v %q", r.status, r.payload)
	}

	// A path only sharing a prefix with the longer mount belongs to the shorter one.
	wantReply(t, f.write("/workspace/outside.txt", []byte("x")), StatusDenied,
		"/workspace/outside.txt: mount /workspace is read-only")
	wantReply(t, f.write("/workspace/notes.md", []byte("x")), StatusDenied, "read-only")
	wantReply(t, f.write("/workspace/new/deep/file", []byte("x")), StatusDenied, "read-only")
	if got := mustRead(t, filepath.Join(f.ws, "notes.md")); got != "# notes\n" {
		t.Errorf("read-only file changed to %q", got)
	}
	for _, p := range []string{"outside.txt", "new"} {
		if _, err := os.Stat(filepath.Join(f.ws, p)); !os.IsNotExist(err) {
			t.Errorf("a refused write created %s: %v", p, err)
		}
	}

	// Outside every mount.
	for _, p := range []string{"/etc/passwd", "/workspacex/a", "/dat/a", "/skill/x", "/DATA/x"} {
		wantReply(t, f.read(p), StatusDenied, "outside the granted mounts", "(/workspace, /workspace/out, /data)")
		wantReply(t, f.write(p, []byte("x")), StatusDenied, "outside the granted mounts")
	}

	u := f.c.Usage()
	wantDenied := []string{
		"write /workspace/outside.txt: mount /workspace is read-only",
		"write /workspace/notes.md: mount /workspace is read-only",
		"write /workspace/new/deep/file: mount /workspace is read-only",
		"file /etc/passwd: outside the granted mounts",
	}
	for _, w := range wantDenied {
		if !slices.Contains(u.Denied, w) {
			t.Errorf("Denied = %q, missing %q", u.Denied, w)
		}
	}
	if len(u.Denied) != 3+2*5 {
		t.Errorf("Denied has %d entries, want 13", len(u.Denied))
	}
	if u.BytesWritten != 1 {
		t.Errorf("BytesWritten = %d, want 1: refused writes use no quota", u.BytesWritten)
	}
}

func TestNoMounts(t *testing.T) {
	t.Parallel()
	c := NewCall(&Grant{Limits: bigLimits()})
	wantReply(t, c.readFile([]byte("/workspace/a")), StatusDenied, "(this run has no file access)")
	wantReply(t, c.writeFile([]byte("/workspace/a"), nil), StatusDenied, "(this run has no file access)")
}

func TestPathValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		want string
	}{
		{"empty", "", "path must be 1 to 4096 bytes"},
		{"too long", "/data/" + strings.Repeat("a", 4091), "path must be 1 to 4096 bytes"},
		{"relative", "data/x", "must be absolute"},
		{"dot relative", "./x", "must be absolute"},
		{"dotdot", "/data/../etc/passwd", "must be clean"},
		{"dotdot at the end", "/data/a/..", "must be clean"},
		{"dotdot escaping", "/data/../../../../etc/passwd", "must be clean"},
		{"dot", "/data/./x", "must be clean"},
		{"empty segment", "/data//x", "must be clean"},
		{"trailing slash", "/data/x/", "must be clean"},
		{"double leading slash", "//data/x", "must be clean"},
		{"root", "/", "must be clean"},
		{"NUL", "/data/x\x00.txt", "contains a NUL byte or a backslash"},
		{"backslash", `/data/a\..\b`, "contains a NUL byte or a backslash"},
		{"mount itself", "/data", `path "/data" is a mount's directory, not a file`},
		{"nested mount itself", "/workspace/out", "is a mount's directory"},
		{"outer mount itself", "/workspace", "is a mount's directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFS(t, bigLimits())
			wantReply(t, f.read(tt.path), StatusInvalid, tt.want)
			wantReply(t, f.write(tt.path, []byte("x")), StatusInvalid, tt.want)
			u := f.c.Usage()
			if len(u.Denied) != 0 || u.BytesWritten != 0 || len(u.FilesWritten) != 0 {
				t.Errorf("usage after an invalid path: %+v", u)
			}
		})
	}
	// 4096 bytes is still a valid length, in few enough segments.
	f := newFS(t, bigLimits())
	p := "/data/" + strings.Repeat("a/", 30)
	p += strings.Repeat("b", 4096-len(p))
	if len(p) != 4096 {
		t.Fatalf("len = %d", len(p))
	}
	wantReply(t, f.read(p), StatusNotFound)
	// A deep path is refused before it can create a directory per segment.
	deep := "/data/" + strings.Repeat("a/", maxPathDepth) + "f"
	wantReply(t, f.write(deep, []byte("x")), StatusInvalid, "deeper than 32 segments")
	if _, err := os.Stat(filepath.Join(f.data, "a")); err == nil {
		t.Errorf("a refused deep write created directories")
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	f := newFS(t, Limits{MaxFileBytes: 10, MaxWriteBytes: 100})
	mustWrite(t, filepath.Join(f.data, "ten"), "0123456789")
	mustWrite(t, filepath.Join(f.data, "eleven"), "0123456789A")
	mustWrite(t, filepath.Join(f.data, "file"), "x")

	wantReply(t, f.read("/data/missing.txt"), StatusNotFound, "/data/missing.txt: no such file")
	wantReply(t, f.read("/data/no/such/dir/file"), StatusNotFound, "no such file")
	wantReply(t, f.read("/workspace/dir"), StatusInvalid, "/workspace/dir: not a regular file")
	wantReply(t, f.read("/data/file/below"), StatusFailed, "/data/file/below: not a directory")
	if r := f.read("/data/ten"); r.status != StatusOK || string(r.payload) != "0123456789" {
		t.Errorf("read of exactly maxFileBytes = %v %q", r.status, r.payload)
	}
	wantReply(t, f.read("/data/eleven"), StatusLimit, "/data/eleven: 11 bytes is more than maxFileBytes (10)")
	if u := f.c.Usage(); !slices.Equal(u.FilesRead, []string{"/data/ten"}) || len(u.Denied) != 0 {
		t.Errorf("FilesRead = %q, Denied = %q: want only the successful read, no denials", u.FilesRead, u.Denied)
	}
}

func TestWriteQuota(t *testing.T) {
	t.Parallel()
	f := newFS(t, Limits{MaxFileBytes: 100, MaxWriteBytes: 10})
	wantReply(t, f.write("/data/a", []byte("1234")), StatusOK)
	wantReply(t, f.write("/data/b", []byte("1234567")), StatusLimit,
		"/data/b: 7 more bytes would pass maxWriteBytes (10)")
	if _, err := os.Stat(filepath.Join(f.data, "b")); !os.IsNotExist(err) {
		t.Errorf("a write over quota created its file: %v", err)
	}
	if got := f.c.Usage().BytesWritten; got != 4 {
		t.Errorf("BytesWritten = %d after a refused write, want 4", got)
	}
	wantReply(t, f.write("/data/b", []byte("123456")), StatusOK) // exactly 10
	wantReply(t, f.write("/data/c", []byte("x")), StatusLimit, "1 more bytes would pass maxWriteBytes (10)")
	wantReply(t, f.write("/data/d", nil), StatusOK) // an empty write always fits
	u := f.c.Usage()
	if u.BytesWritten != 10 || !slices.Equal(u.FilesWritten, []string{"/data/a", "/data/b", "/data/d"}) {
		t.Errorf("usage = %d bytes, %q", u.BytesWritten, u.FilesWritten)
	}
}

func TestFailedWriteReturnsQuota(t *testing.T) {
	t.Parallel()
	f := newFS(t, Limits{MaxFileBytes: 100, MaxWriteBytes: 10})
	mustWrite(t, filepath.Join(f.data, "file"), "x")
	if err := os.MkdirAll(filepath.Join(f.data, "adir", "child"), 0o750); err != nil {
		t.Fatal(err)
	}
	// A parent that is a file, and a target that is a non-empty directory: both fail on the host.
	wantReply(t, f.write("/data/file/below", []byte("12345678")), StatusFailed, "/data/file/below")
	wantReply(t, f.write("/data/adir", []byte("12345678")), StatusFailed, "/data/adir")
	if got := f.c.Usage().BytesWritten; got != 0 {
		t.Errorf("BytesWritten = %d after failed writes, want 0", got)
	}
	entries, _ := os.ReadDir(f.data)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".skillbox-") {
			t.Errorf("a failed write left %s behind", e.Name())
		}
	}
	wantReply(t, f.write("/data/ok", []byte("1234567890")), StatusOK)
}

func TestWriteQuotaConcurrent(t *testing.T) {
	t.Parallel()
	f := newFS(t, Limits{MaxFileBytes: 100, MaxWriteBytes: 100})
	var wg sync.WaitGroup
	results := make([]Status, 25)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = f.write("/data/f"+strings.Repeat("x", i), []byte("0123456789")).status
		}()
	}
	wg.Wait()
	var oks, limits int
	for _, s := range results {
		switch s {
		case StatusOK:
			oks++
		case StatusLimit:
			limits++
		}
	}
	if oks != 10 || limits != 15 {
		t.Errorf("%d OK and %d LIMIT, want 10 and 15", oks, limits)
	}
	if got := f.c.Usage().BytesWritten; got != 100 {
		t.Errorf("BytesWritten = %d, want 100", got)
	}
}

// Empty files cost no bytes of quota, so the number of writes is capped on its own.
func TestWriteCountIsBounded(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	for i := range maxWrites {
		wantReply(t, f.write(fmt.Sprintf("/data/d%d/f%04d", i, i), nil), StatusOK)
	}
	wantReply(t, f.write("/data/one-more", nil), StatusLimit, "at most 256 files")
	u := f.c.Usage()
	if len(u.FilesWritten) != maxWrites || u.BytesWritten != 0 {
		t.Errorf("FilesWritten holds %d entries, bytes %d", len(u.FilesWritten), u.BytesWritten)
	}
	if _, err := os.Stat(filepath.Join(f.data, "one-more")); err == nil {
		t.Errorf("the refused write was made")
	}
}

func TestSymlinks(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	secret := filepath.Join(f.outside, "secret.txt")
	mustWrite(t, filepath.Join(f.data, "inside.txt"), "inside")
	links := map[string]string{
		"evil":      secret, // absolute, outside
		"evil-rel":  "../../../../../../../../" + strings.TrimPrefix(secret, "/"),
		"evildir":   f.outside,       // a directory outside
		"good":      "inside.txt",    // relative, inside
		"sub/good2": "../inside.txt", // relative, inside, through ..
		"abs-in":    filepath.Join(f.data, "inside.txt"),
		"dangling":  "no-such-file",
		"loop":      "loop",
	}
	for name, target := range links {
		p := filepath.Join(f.data, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}

	for _, p := range []string{"/data/evil", "/data/evil-rel", "/data/evildir/secret.txt"} {
		r := f.read(p)
		wantReply(t, r, StatusDenied, p+": leads outside its mount")
		if strings.Contains(string(r.payload), "top secret") {
			t.Fatalf("read %s returned the outside file", p)
		}
	}
	wantReply(t, f.write("/data/evildir/new.txt", []byte("x")), StatusDenied, "leads outside its mount")
	wantReply(t, f.write("/data/evildir/sub/new.txt", []byte("x")), StatusDenied, "leads outside its mount")
	if _, err := os.Stat(filepath.Join(f.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a write through a symlinked directory created a file outside the mount: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.outside, "sub")); !os.IsNotExist(err) {
		t.Errorf("a write through a symlinked directory created a directory outside the mount: %v", err)
	}

	for _, p := range []string{"/data/good", "/data/sub/good2"} {
		if r := f.read(p); r.status != StatusOK || string(r.payload) != "inside" {
			t.Errorf("read %s = %v %q, want OK inside", p, r.status, r.payload)
		}
	}
	// os.Root refuses absolute symlinks even when they point inside the root.
	wantReply(t, f.read("/data/abs-in"), StatusDenied, "leads outside its mount")
	wantReply(t, f.read("/data/dangling"), StatusNotFound)
	if r := f.read("/data/loop"); r.status == StatusOK {
		t.Errorf("read of a symlink loop = OK %q", r.payload)
	}

	if got := mustRead(t, secret); got != "top secret" {
		t.Errorf("the outside file changed to %q", got)
	}
	denied := f.c.Usage().Denied
	if !slices.Contains(denied, "read /data/evil: leads outside its mount") ||
		!slices.Contains(denied, "write /data/evildir/new.txt: leads outside its mount") {
		t.Errorf("Denied = %q, want the symlink escapes recorded", denied)
	}
	if u := f.c.Usage(); u.BytesWritten != 0 {
		t.Errorf("BytesWritten = %d after refused writes", u.BytesWritten)
	}
}

// Writing to a symlink (the final component) that leads out of the mount should be refused like
// reading it is (docs/abi.md: write_file has the read_file path rules, "DENIED for a symlink that
// leads out of its mount").
func TestWriteThroughEscapingSymlinkDenied(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	secret := filepath.Join(f.outside, "secret.txt")
	if err := os.Symlink(secret, filepath.Join(f.data, "evil")); err != nil {
		t.Fatal(err)
	}
	wantReply(t, f.write("/data/evil", []byte("overwrite")), StatusDenied, "leads outside its mount")
	if got := mustRead(t, secret); got != "top secret" {
		t.Errorf("the outside file changed to %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(f.data, "evil")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi, err)
	}
}

// Writing to a symlink that stays inside the mount succeeds, but replaces the link with a regular
// file rather than writing through it: the link's target keeps its contents.
func TestWriteToInsideSymlinkReplacesLink(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	mustWrite(t, filepath.Join(f.data, "target.txt"), "old")
	if err := os.Symlink("target.txt", filepath.Join(f.data, "link")); err != nil {
		t.Fatal(err)
	}
	wantReply(t, f.write("/data/link", []byte("new")), StatusOK)
	if r := f.read("/data/link"); r.status != StatusOK || string(r.payload) != "new" {
		t.Errorf("read /data/link = %v %q, want new", r.status, r.payload)
	}
	if got := mustRead(t, filepath.Join(f.data, "target.txt")); got != "old" {
		t.Errorf("target.txt = %q: the write went through the link", got)
	}
}

// Usage.Denied is printed to the operator's terminal (cmd/skillbox: "[denied] %s"); a guest must
// not be able to put control characters in it, as skillbox_env already ensures for its names.
func TestDeniedFilePathIsEscaped(t *testing.T) {
	t.Parallel()
	f := newFS(t, bigLimits())
	f.read("/etc/\x1b[2J\nfake entry")
	f.write("/workspace/\x1b[31mred", []byte("x"))
	for _, d := range f.c.Usage().Denied {
		if strings.ContainsAny(d, "\x1b\n") {
			t.Errorf("Denied entry %q holds raw control characters", d)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/workspace/a", "/workspace/out/b/c", "/data", "/data/../x", "//data",
		"/data/a/", "/workspace/outx", "/skill/SKILL.md", "", "/", "/data/\x00", `/data\x`, "/data/./a",
		"/data/a/b/../../..", "/workspace/out", "/workspace/out/..", "/a/b/c"} {
		f.Add(s)
	}
	c := NewCall(&Grant{Mounts: []Mount{
		{Path: "/workspace", Dir: "/nonexistent/ws"},
		{Path: "/workspace/out", Dir: "/nonexistent/out", Writable: true},
		{Path: "/data", Dir: "/nonexistent/data", Writable: true},
		{Path: "/skill", Dir: "/nonexistent/skill"},
	}})
	f.Fuzz(func(t *testing.T, p string) {
		m, rel, bad := c.resolve(context.Background(), p)
		if bad != nil {
			if m != nil || rel != "" {
				t.Fatalf("resolve(%q) refused (%v) but returned a mount", p, bad.Status)
			}
			if bad.Status != StatusInvalid && bad.Status != StatusDenied {
				t.Fatalf("resolve(%q) = status %v, want INVALID or DENIED", p, bad.Status)
			}
			return
		}
		if m == nil {
			t.Fatalf("resolve(%q) accepted without a mount", p)
		}
		if !strings.HasPrefix(p, m.Path+"/") {
			t.Fatalf("resolve(%q) picked mount %s, which does not contain it", p, m.Path)
		}
		if p != m.Path+"/"+rel {
			t.Fatalf("resolve(%q) = %s + %q, which does not rebuild the path", p, m.Path, rel)
		}
		if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\x00\\") || filepath.Clean(rel) != rel {
			t.Fatalf("resolve(%q) = rel %q, not a clean relative path", p, rel)
		}
		for _, seg := range strings.Split(rel, "/") {
			if seg == ".." || seg == "." || seg == "" {
				t.Fatalf("resolve(%q) = rel %q with segment %q", p, rel, seg)
			}
		}
		if !filepath.IsLocal(rel) {
			t.Fatalf("resolve(%q) = rel %q, which is not local", p, rel)
		}
		for _, other := range c.Grant.Mounts {
			if len(other.Path) > len(m.Path) && strings.HasPrefix(p, other.Path+"/") {
				t.Fatalf("resolve(%q) picked %s over the longer %s", p, m.Path, other.Path)
			}
		}
	})
}
