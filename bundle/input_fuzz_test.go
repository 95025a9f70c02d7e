package bundle_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
)

// FuzzPackageReader: any upload, as a .tar.gz or as one part, is read within the package limits
// or refused with an error — never a panic, never more than the limits.
func FuzzPackageReader(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat([]byte{0}, 2048))
	_ = zw.Close()
	f.Add(gz.Bytes(), "skill.json", []byte(`{"id":"x"}`))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"), "resources/a.md", []byte("# a"))
	f.Add([]byte{}, "../escape", []byte("x"))
	l := bundle.Limits{MaxFiles: 8, MaxBytes: 1 << 16, MaxModuleBytes: 1 << 15, MaxFileBytes: 1 << 14, MaxRatio: 20}
	f.Fuzz(func(t *testing.T, tgz []byte, name string, part []byte) {
		p := bundle.NewReader(l)
		_ = p.AddTarGz(bytes.NewReader(tgz))
		q := bundle.NewReader(l)
		_ = q.Add(name, bytes.NewReader(part))
		for _, files := range []map[string][]byte{p.Files(), q.Files()} {
			if len(files) > l.MaxFiles {
				t.Fatalf("%d files read, more than %d", len(files), l.MaxFiles)
			}
			var total int64
			for _, data := range files {
				total += int64(len(data))
			}
			if total > l.MaxBytes {
				t.Fatalf("%d bytes read, more than %d", total, l.MaxBytes)
			}
		}
	})
}
