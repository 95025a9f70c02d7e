package hostfuncs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newBounded is a run whose /output mount has bounds of its own, and whose maxWriteBytes (2)
// is far below them: the mount's budget replaces it.
func newBounded(t *testing.T, b MountBounds) (*Call, string) {
	t.Helper()
	dir := t.TempDir()
	return NewCall(&Grant{Mounts: []Mount{{Path: "/output", Dir: dir, Writable: true, Bounds: &b}},
		Limits: Limits{MaxFileBytes: 1 << 20, MaxWriteBytes: 2}}), dir
}

func TestBoundedMount(t *testing.T) {
	t.Parallel()
	c, dir := newBounded(t, MountBounds{MaxFiles: 3, MaxFileBytes: 10, MaxTotalBytes: 20})
	w := func(p, data string) reply { return c.writeFile([]byte(p), []byte(data)) }
	wantReply(t, w("/output/a", "0123456789"), StatusOK) // exactly maxFileBytes, over maxWriteBytes
	wantReply(t, w("/output/b", "0123456789a"), StatusLimit, "/output/b: 11 bytes is more than the /output mount's maxFileBytes (10)")
	wantReply(t, w("/output/deep/b", "01234"), StatusOK)
	wantReply(t, w("/output/c", "012345"), StatusLimit, "/output/c: 6 more bytes would pass the /output mount's maxTotalBytes (20; 15 held)")
	// A rewrite replaces the file's size: shrinking a makes room.
	wantReply(t, w("/output/a", "0"), StatusOK)
	wantReply(t, w("/output/c", "012345"), StatusOK)
	wantReply(t, w("/output/d", ""), StatusLimit, "/output/d: the /output mount holds at most 3 files (maxFiles)")
	wantReply(t, w("/output/a", "0123456789"), StatusLimit, "maxTotalBytes") // 1 -> 10 would hold 21
	wantReply(t, w("/output/a", "012345678"), StatusOK)                      // 20 exactly
	if got, _ := os.ReadFile(filepath.Join(dir, "a")); string(got) != "012345678" {
		t.Errorf("a = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); err == nil {
		t.Error("a refused write made its file")
	}
}

// A write that fails on the host gives its place and bytes back.
func TestBoundedMountFailedWriteReturnsBudget(t *testing.T) {
	t.Parallel()
	c, dir := newBounded(t, MountBounds{MaxFiles: 1, MaxFileBytes: 10, MaxTotalBytes: 10})
	if err := os.MkdirAll(filepath.Join(dir, "adir", "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	wantReply(t, c.writeFile([]byte("/output/adir"), []byte("0123456789")), StatusFailed, "/output/adir")
	wantReply(t, c.writeFile([]byte("/output/ok"), []byte("0123456789")), StatusOK)
}

// Other mounts of the same run keep maxWriteBytes.
func TestBoundedMountLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	out, data := t.TempDir(), t.TempDir()
	c := NewCall(&Grant{Mounts: []Mount{
		{Path: "/output", Dir: out, Writable: true, Bounds: &MountBounds{MaxFiles: 4, MaxFileBytes: 100, MaxTotalBytes: 100}},
		{Path: "/data", Dir: data, Writable: true}}, Limits: Limits{MaxFileBytes: 100, MaxWriteBytes: 3}})
	wantReply(t, c.writeFile([]byte("/output/x"), []byte(strings.Repeat("y", 50))), StatusOK)
	wantReply(t, c.writeFile([]byte("/data/x"), []byte("1234")), StatusLimit, "maxWriteBytes (3)")
	wantReply(t, c.writeFile([]byte("/data/x"), []byte("123")), StatusOK)
	if u := c.Usage(); u.BytesWritten != 53 {
		t.Errorf("BytesWritten = %d, want 53: the output's bytes are reported too", u.BytesWritten)
	}
}
