package wasifs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// benchDir is a mount with a small file, hello.txt (5 bytes), at the top and two directories
// down: os.Root walks a path one openat per component, so the depth is part of the cost.
func benchDir(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	must(b, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(b, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello"), 0o644))
	must(b, os.WriteFile(filepath.Join(dir, "a", "b", "hello.txt"), []byte("hello"), 0o644))
	return dir
}

// BenchmarkOpenRead opens, reads and closes a small file through this package's FS and through
// wazero's DirFS (what WithDirMount mounts), on the host side, interleaved; ratio is ours over
// wazero's.
func BenchmarkOpenRead(b *testing.B) {
	dir := benchDir(b)
	ours, err := Dir(dir, Options{})
	must(b, err)
	defer ours.Close()
	theirs := sysfs.DirFS(dir)
	buf := make([]byte, 512)
	openRead := func(fsys sys.FS, name string) func() {
		return func() {
			f, errno := fsys.OpenFile(name, sys.O_RDONLY, 0)
			if errno != 0 {
				b.Fatal(errno)
			}
			if n, errno := f.Read(buf); n != 5 || errno != 0 {
				b.Fatal(n, errno)
			}
			f.Close()
		}
	}
	for _, name := range []string{"hello.txt", "a/b/hello.txt"} {
		b.Run(strings.ReplaceAll(name, "/", "_"), func(b *testing.B) {
			p50 := interleave.Run(b,
				interleave.Contender{Name: "wasifs", F: openRead(ours, name)},
				interleave.Contender{Name: "dirfs", F: openRead(theirs, name)})
			b.ReportMetric(p50["wasifs"]/p50["dirfs"], "wasifs/dirfs")
		})
	}
}

// BenchmarkGuestOpenRead runs the probe guest, which opens, reads and closes the file 200
// times, with each mount; a run with no operation is the floor (instantiate and start). The
// ratio compares the file work alone: (run - floor) ours over (run - floor) wazero's.
func BenchmarkGuestOpenRead(b *testing.B) {
	dir := benchDir(b)
	ours, err := Dir(dir, Options{})
	must(b, err)
	defer ours.Close()
	theirs := sysfs.DirFS(dir)
	run := func(fsys sys.FS, ops ...string) func() {
		return func() { probe(b, []mount{{"/m", fsys}}, ops...) }
	}
	const loop = "loop:/m/a/b/hello.txt:200"
	p50 := interleave.Run(b,
		interleave.Contender{Name: "floor", F: run(ours)},
		interleave.Contender{Name: "wasifs", F: run(ours, loop)},
		interleave.Contender{Name: "dirfs", F: run(theirs, loop)})
	b.ReportMetric((p50["wasifs"]-p50["floor"])/(p50["dirfs"]-p50["floor"]), "wasifs/dirfs")
	b.ReportMetric((p50["wasifs"]-p50["floor"])/200, "wasifs-ns/open")
	b.ReportMetric((p50["dirfs"]-p50["floor"])/200, "dirfs-ns/open")
}
