package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/spec"
)

// allocBound is what refusing a bomb may allocate in all (TotalAlloc, not the peak): generous,
// and still far below what reading any of the bombs below would take.
const allocBound = 64 << 20

// allocated runs f and returns the bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	f()
	goruntime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// tarFile is one member of a test archive: size bytes of zeros (or data, when set) under a
// header declaring declared bytes (0: size); typeflag 0 is a regular file.
type tarFile struct {
	name     string
	size     int64
	data     []byte
	declared int64
	typeflag byte
}

// writeTarGz streams files through tar and gzip (BestSpeed, about 800:1 on zeros) into w. A
// header that declares more than is written ends the archive there, unfinished.
func writeTarGz(w io.Writer, files ...tarFile) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		size := f.size
		if f.data != nil {
			size = int64(len(f.data))
		}
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: size, Typeflag: f.typeflag}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
			h.Linkname = "skill.json"
		}
		if f.declared != 0 {
			h.Size = f.declared
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		var body io.Reader = io.LimitReader(zeroReader{}, size)
		if f.data != nil {
			body = bytes.NewReader(f.data)
		}
		if _, err := io.Copy(tw, body); err != nil {
			return err
		}
		if h.Size != size {
			return gz.Close() // a lying header: the archive stops here
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func tarGzOf(t testing.TB, files ...tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writeTarGz(&buf, files...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zeroBomb is a .tar.gz of files of zeros (sizes in whole MiB) made cheaply: one gzip member of
// 1 MiB of zeros, compressed once and repeated, between members holding the tar headers. gzip
// readers read concatenated members as one stream (RFC 1952 2.2), so it inflates to a real
// archive of the full size, at about 1000 to 1, without compressing a gigabyte to make it.
func zeroBomb(t testing.TB, files ...tarFile) []byte {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		gz.Write(data)
		gz.Close()
		return b.Bytes()
	}
	mib := member(make([]byte, 1<<20))
	var out bytes.Buffer
	for _, f := range files {
		if f.size%(1<<20) != 0 {
			t.Fatalf("zeroBomb: %s: %d is not whole MiB", f.name, f.size)
		}
		var h bytes.Buffer
		if err := tar.NewWriter(&h).WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: f.size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		out.Write(member(h.Bytes())) // the header block; the body needs no padding
		for range f.size >> 20 {
			out.Write(mib)
		}
	}
	out.Write(member(make([]byte, 1024))) // the end of the archive
	return out.Bytes()
}

// wantLimit checks err is a *bundle.LimitError of limit about file, matching bundle.ErrTooLarge,
// whose message names the limit and the file.
func wantLimit(t *testing.T, err error, limit bundle.Limit, file string) *bundle.LimitError {
	t.Helper()
	var le *bundle.LimitError
	if !errors.As(err, &le) || !errors.Is(err, bundle.ErrTooLarge) {
		t.Fatalf("got %v, want a %s PackageLimitError", err, limit)
	}
	if le.Limit != limit || le.File != file {
		t.Errorf("limit %s on %q, want %s on %q: %v", le.Limit, le.File, limit, file, err)
	}
	if msg := err.Error(); !strings.Contains(msg, string(limit)) || !strings.Contains(msg, fmt.Sprintf("%q", file)) && file != "" {
		t.Errorf("message does not name the limit %s and the file %q: %s", limit, file, msg)
	}
	return le
}

// Bombs: about a megabyte of gzip each, inflating to a gigabyte or close to it. Refusing one
// allocates a bounded amount, whatever it would inflate to.
func TestPackageReaderRefusesGzipBombs(t *testing.T) {
	many := func(n int, size int64) []tarFile {
		var fs []tarFile
		for i := range n {
			fs = append(fs, tarFile{name: fmt.Sprintf("resources/z%02d.bin", i), size: size})
		}
		return fs
	}
	tests := []struct {
		name   string
		files  []tarFile     // given: the archive
		limits bundle.Limits // and limits
		limit  bundle.Limit  // expect
		file   string
	}{
		{name: "one file declaring a gigabyte", files: []tarFile{{name: "execute.wasm", size: 1 << 30}},
			limit: bundle.LimitFileBytes, file: "execute.wasm"},
		{name: "a module under its cap, all zeros", files: []tarFile{{name: "execute.wasm", size: 60 << 20}},
			limit: bundle.LimitRatio, file: "execute.wasm"},
		{name: "many files each under the per-file cap", files: many(64, 15<<20),
			limit: bundle.LimitRatio, file: "resources/z00.bin"},
		{name: "many files, ratio allowed: the total stops them", files: many(300, 3<<20),
			limits: bundle.Limits{MaxBytes: 8 << 20, MaxFileBytes: 4 << 20, MaxRatio: 1 << 20}, limit: bundle.LimitBytes, file: "resources/z02.bin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bomb := zeroBomb(t, tc.files...)
			var inflated int64
			for _, f := range tc.files {
				inflated += f.size
			}
			t.Logf("%d bytes of gzip inflating to %d", len(bomb), inflated)
			p := bundle.NewReader(tc.limits)
			var err error
			alloc := allocated(func() { err = p.AddTarGz(bytes.NewReader(bomb)) })
			wantLimit(t, err, tc.limit, tc.file)
			if alloc > allocBound {
				t.Errorf("refusing it allocated %d MiB; want under %d MiB", alloc>>20, allocBound>>20)
			}
			t.Logf("%v; allocated %d KiB", err, alloc>>10)
		})
	}
	// A bomb is a well-formed archive: where the limits allow it, it is read whole.
	p := bundle.NewReader(bundle.Limits{MaxRatio: 1 << 20})
	if err := p.AddTarGz(bytes.NewReader(zeroBomb(t, tarFile{name: "resources/z", size: 8 << 20}))); err != nil || len(p.Files()["resources/z"]) != 8<<20 {
		t.Errorf("the bomb's archive, read whole: %v, %d bytes", err, len(p.Files()["resources/z"]))
	}
}

// The ratio: a .tar.gz that inflates more than MaxRatio to one (plus 1 MiB) is refused, honest
// content of any ratio up to it is not.
func TestPackageReaderRatio(t *testing.T) {
	noise := make([]byte, 4<<20)
	rand.Read(noise)
	// Text from a small vocabulary: more compressible than prose, still far from a bomb.
	var text bytes.Buffer
	words := strings.Fields("the quick brown fox jumps over a lazy dog while skills run in sandboxes")
	r := mrand.New(mrand.NewPCG(1, 2))
	for text.Len() < 4<<20 {
		text.WriteString(words[r.IntN(len(words))])
		text.WriteByte(' ')
	}
	tests := []struct {
		name   string
		files  []tarFile
		limits bundle.Limits
		refuse bool
	}{
		{name: "2 MiB of zeros", files: []tarFile{{name: "resources/z", size: 2 << 20}}, refuse: true},
		{name: "512 KiB of zeros: within the allowance", files: []tarFile{{name: "resources/z", size: 512 << 10}}},
		{name: "4 MiB of noise", files: []tarFile{{name: "execute.wasm", data: noise}}},
		{name: "4 MiB of text", files: []tarFile{{name: "resources/t.md", data: text.Bytes()}}},
		{name: "the bundled hello", files: bundledHello(t, "hello/")},
		{name: "8 MiB of zeros at MaxRatio 10000", files: []tarFile{{name: "resources/z", size: 8 << 20}}, limits: bundle.Limits{MaxRatio: 10000}},
		{name: "8 MiB of zeros at MaxRatio 10", files: []tarFile{{name: "resources/z", size: 8 << 20}}, limits: bundle.Limits{MaxRatio: 10}, refuse: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			archive := tarGzOf(t, tc.files...)
			p := bundle.NewReader(tc.limits)
			err := p.AddTarGz(bytes.NewReader(archive))
			if !tc.refuse {
				if err != nil {
					t.Fatalf("refused (%d bytes of gzip): %v", len(archive), err)
				}
				if len(p.Files()) != len(tc.files) {
					t.Errorf("%d files, want %d", len(p.Files()), len(tc.files))
				}
				return
			}
			le := wantLimit(t, err, bundle.LimitRatio, tc.files[0].name)
			ratio := int64(tc.limits.WithDefaults().MaxRatio)
			if le.Got <= le.Max || le.Max != ratio*le.Compressed+bundle.RatioAllowance {
				t.Errorf("got %d, max %d for %d compressed: not the %d:1 bound", le.Got, le.Max, le.Compressed, ratio)
			}
		})
	}
}

// bundledHello lists skills/hello's package files (not its source) under prefix.
func bundledHello(t testing.TB, prefix string) []tarFile {
	t.Helper()
	var fs []tarFile
	for _, name := range []string{"skill.json", spec.ModuleFile, "SKILL.md"} {
		data, err := os.ReadFile(filepath.Join("..", "skills", "hello", name))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, tarFile{name: prefix + name, data: data})
	}
	return fs
}

// A million entries, tiny or empty, are refused at the first over MaxFiles: the archive is
// streamed from a generator, which is stopped long before its end.
func TestPackageReaderFileCount(t *testing.T) {
	const million = 1_000_000
	// Ratio off: a million near-identical headers compress far beyond any sane ratio, and the
	// count is what is under test.
	noRatio := bundle.Limits{MaxRatio: 1 << 30}
	stream := func(entry func(i int) tarFile) func(p *bundle.Reader) (int, error) {
		return func(p *bundle.Reader) (int, error) {
			pr, pw := io.Pipe()
			written := make(chan int, 1)
			go func() {
				n := 0
				gz := gzip.NewWriter(pw)
				tw := tar.NewWriter(gz)
				for ; n < million; n++ {
					f := entry(n)
					if tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: f.typeflag, Mode: 0o644, Size: f.size}) != nil {
						break
					}
					if f.size > 0 && func() error { _, err := tw.Write(make([]byte, f.size)); return err }() != nil {
						break
					}
				}
				tw.Close()
				pw.CloseWithError(gz.Close())
				written <- n
			}()
			err := p.AddTarGz(pr)
			pr.CloseWithError(errors.New("refused")) // stops the generator at its next write
			return <-written, err
		}
	}
	calls := func(add func(p *bundle.Reader, i int) error) func(p *bundle.Reader) (int, error) {
		return func(p *bundle.Reader) (int, error) {
			for i := range million {
				if err := add(p, i); err != nil {
					return i + 1, err
				}
			}
			return million, nil
		}
	}
	tests := []struct {
		name string
		read func(p *bundle.Reader) (int, error) // how many entries were made, and the error
		file string
	}{
		{name: "tar: empty files", read: stream(func(i int) tarFile { return tarFile{name: fmt.Sprintf("resources/%d", i), typeflag: tar.TypeReg} }), file: "resources/256"},
		{name: "tar: one-byte files", read: stream(func(i int) tarFile {
			return tarFile{name: fmt.Sprintf("resources/%d", i), size: 1, typeflag: tar.TypeReg}
		}), file: "resources/256"},
		{name: "tar: directories", read: stream(func(i int) tarFile { return tarFile{name: fmt.Sprintf("d%d/", i), typeflag: tar.TypeDir} }), file: "d256/"},
		{name: "multipart: empty parts", read: calls(func(p *bundle.Reader, i int) error {
			return p.Add(fmt.Sprintf("resources/%d", i), strings.NewReader(""))
		}), file: "resources/256"},
		{name: "multipart: plain fields", read: calls(func(p *bundle.Reader, i int) error {
			_, err := p.AddField("x", strings.NewReader("y"))
			return err
		}), file: "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := bundle.NewReader(noRatio)
			var err error
			var made int
			alloc := allocated(func() { made, err = tc.read(p) })
			le := wantLimit(t, err, bundle.LimitFiles, tc.file)
			if le.Max != bundle.MaxPackageFiles || le.Got != bundle.MaxPackageFiles+1 {
				t.Errorf("got %d of %d: want refusal at the first entry over", le.Got, le.Max)
			}
			if made > 10_000 {
				t.Errorf("%d entries made before the refusal: not early", made)
			}
			if alloc > allocBound {
				t.Errorf("refusing it allocated %d MiB; want under %d MiB", alloc>>20, allocBound>>20)
			}
			t.Logf("%d entries made, %d KiB allocated", made, alloc>>10)
		})
	}
	// The bound itself: 256 entries, a directory among them, are a package.
	files := []tarFile{{name: "resources/", typeflag: tar.TypeDir}}
	for i := range bundle.MaxPackageFiles - 1 {
		files = append(files, tarFile{name: fmt.Sprintf("resources/%d", i), size: 1})
	}
	p := bundle.NewReader(bundle.Limits{})
	if err := p.AddTarGz(bytes.NewReader(tarGzOf(t, files...))); err != nil || len(p.Files()) != bundle.MaxPackageFiles-1 {
		t.Errorf("256 entries: %v, %d files", err, len(p.Files()))
	}
	// The 257th is refused.
	files = append(files, tarFile{name: "resources/last", size: 1})
	wantLimit(t, bundle.NewReader(bundle.Limits{}).AddTarGz(bytes.NewReader(tarGzOf(t, files...))), bundle.LimitFiles, "resources/last")
}

// A tar header's declared size is checked before its body is read; entry types and names are as
// Install expects them.
func TestPackageReaderTarHeaders(t *testing.T) {
	noise := func(n int) []byte { b := make([]byte, n); rand.Read(b); return b }
	small := bundle.Limits{MaxBytes: 1 << 20, MaxFileBytes: 700 << 10, MaxModuleBytes: 900 << 10}
	tests := []struct {
		name   string
		files  []tarFile
		limits bundle.Limits
		limit  bundle.Limit // a limit error about file
		file   string
		other  string // or another error saying this
		want   []string
	}{
		{name: "a header declaring a terabyte", files: []tarFile{{name: "resources/x", size: 8, declared: 1 << 40}}, limit: bundle.LimitFileBytes, file: "resources/x"},
		{name: "a module header declaring more than the module cap", files: []tarFile{{name: "execute.wasm", size: 8, declared: policy.ModuleLimits{}.WithDefaults().MaxModuleBytes + 1}}, limit: bundle.LimitFileBytes, file: "execute.wasm"},
		{name: "a header declaring more than the total leaves", limits: small,
			files: []tarFile{{name: "resources/a", data: noise(600 << 10)}, {name: "resources/b", size: 8, declared: 600 << 10}}, limit: bundle.LimitBytes, file: "resources/b"},
		{name: "a manifest over 1 MiB", files: []tarFile{{name: "skill.json", data: noise(1<<20 + 1)}}, limit: bundle.LimitFileBytes, file: "skill.json"},
		{name: "a resource over the file cap", limits: small, files: []tarFile{{name: "resources/r", data: noise(800 << 10)}}, limit: bundle.LimitFileBytes, file: "resources/r"},
		{name: "a module over the file cap but under its own", limits: small, files: []tarFile{{name: "execute.wasm", data: noise(800 << 10)}}, want: []string{"execute.wasm"}},
		{name: "the same under a top-level directory", limits: small, files: []tarFile{{name: "pkg/", typeflag: tar.TypeDir}, {name: "pkg/execute.wasm", data: noise(800 << 10)}, {name: "pkg/skill.json", data: []byte("{}")}},
			want: []string{"execute.wasm", "skill.json"}},
		{name: "a module's cap for a name that stays a resource's", limits: small, files: []tarFile{{name: "pkg/execute.wasm", data: noise(800 << 10)}, {name: "other/skill.json", data: []byte("{}")}},
			limit: bundle.LimitFileBytes, file: "pkg/execute.wasm"},
		{name: "a manifest read under the larger cap, then stripped", files: []tarFile{{name: "pkg/skill.json", data: noise(2 << 20)}},
			limit: bundle.LimitFileBytes, file: "skill.json"},
		{name: "resources/ is not stripped", files: []tarFile{{name: "resources/a", size: 1}, {name: "resources/b", size: 1}}, want: []string{"resources/a", "resources/b"}},
		{name: "./ names", files: []tarFile{{name: "./", typeflag: tar.TypeDir}, {name: "./skill.json", size: 1}, {name: "./resources/a", size: 1}}, want: []string{"resources/a", "skill.json"}},
		{name: "a symlink", files: []tarFile{{name: "skill.json", size: 1}, {name: "resources/l", typeflag: tar.TypeSymlink}}, other: "resources/l: only regular files"},
		{name: "a hard link", files: []tarFile{{name: "skill.json", size: 1}, {name: "resources/l", typeflag: tar.TypeLink}}, other: "resources/l: only regular files"},
		{name: "a FIFO", files: []tarFile{{name: "resources/f", typeflag: tar.TypeFifo}}, other: "resources/f: only regular files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			archive := tarGzOf(t, tc.files...)
			p := bundle.NewReader(tc.limits)
			err := p.AddTarGz(bytes.NewReader(archive))
			switch {
			case tc.limit != "":
				le := wantLimit(t, err, tc.limit, tc.file)
				if last := tc.files[len(tc.files)-1]; last.declared != 0 && le.Got != last.declared && tc.limit == bundle.LimitFileBytes {
					t.Errorf("got %d, want the declared %d", le.Got, last.declared)
				}
			case tc.other != "":
				var me *spec.ManifestError
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.other) {
					t.Errorf("got %v, want a ManifestError saying %q", err, tc.other)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for name := range p.Files() {
					got = append(got, name)
				}
				if fmt.Sprint(sortedStrings(got)) != fmt.Sprint(tc.want) {
					t.Errorf("files %v, want %v", sortedStrings(got), tc.want)
				}
			}
		})
	}
}

// gnuHeader is a raw GNU tar header block, for entries tar.Writer will not write.
func gnuHeader(name string, typeflag byte, size int64) []byte {
	b := make([]byte, 512)
	copy(b[0:], name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], fmt.Sprintf("%011o\x00", 0))
	b[156] = typeflag
	copy(b[257:], "ustar  \x00")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// tar reads some entries whole inside one Next, never returned: GNU long-name records, each up
// to a megabyte, chained without end. The inflated stream is bounded as a whole.
func TestPackageReaderArchiveBytes(t *testing.T) {
	var raw bytes.Buffer
	record := bytes.Repeat([]byte("a"), 1<<20-1024)
	for range 8 {
		raw.Write(gnuHeader("././@LongLink", 'L', int64(len(record))))
		raw.Write(record) // a multiple of 512: no padding
	}
	raw.Write(gnuHeader("resources/x", '0', 0))
	raw.Write(make([]byte, 1024))
	var archive bytes.Buffer
	gz := gzip.NewWriter(&archive)
	gz.Write(raw.Bytes())
	gz.Close()

	// Ratio off, so the stream's bound is what stops it: 1 MiB + 5 entries' overhead.
	p := bundle.NewReader(bundle.Limits{MaxBytes: 1 << 20, MaxFiles: 4, MaxRatio: 1 << 30})
	le := wantLimit(t, p.AddTarGz(bytes.NewReader(archive.Bytes())), bundle.LimitArchiveBytes, "")
	if want := int64(1<<20 + 5*bundle.TarEntryOverhead); le.Max != want {
		t.Errorf("max %d, want %d", le.Max, want)
	}
	// Within the bound the same chain is read: it is the bound, not the records, that refuses.
	if err := bundle.NewReader(bundle.Limits{MaxBytes: 16 << 20, MaxRatio: 1 << 30}).AddTarGz(bytes.NewReader(archive.Bytes())); err != nil {
		t.Errorf("under the bound: %v", err)
	}
	// With the default ratio, the ratio stops it first.
	wantLimit(t, bundle.NewReader(bundle.Limits{}).AddTarGz(bytes.NewReader(archive.Bytes())), bundle.LimitRatio, "")
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Multipart parts: each file is held to its cap as it streams, a part that never ends included.
func TestPackageReaderParts(t *testing.T) {
	tests := []struct {
		name   string
		limits bundle.Limits
		parts  []tarFile // name and size of zeros; declared -1: a part that never ends
		limit  bundle.Limit
		file   string
	}{
		{name: "a resource that never ends", parts: []tarFile{{name: "resources/inf", declared: -1}}, limit: bundle.LimitFileBytes, file: "resources/inf"},
		{name: "a resource of 256 MiB", parts: []tarFile{{name: "resources/r", size: 256 << 20}}, limit: bundle.LimitFileBytes, file: "resources/r"},
		{name: "a resource one byte over", parts: []tarFile{{name: "resources/r", size: bundle.MaxPackageFileBytes + 1}}, limit: bundle.LimitFileBytes, file: "resources/r"},
		{name: "a resource at the cap", parts: []tarFile{{name: "resources/r", size: bundle.MaxPackageFileBytes}}},
		{name: "a module over the resource cap", parts: []tarFile{{name: "execute.wasm", size: bundle.MaxPackageFileBytes + 1}}},
		{name: "a manifest over 1 MiB", parts: []tarFile{{name: "skill.yaml", size: spec.MaxManifestBytes + 1}}, limit: bundle.LimitFileBytes, file: "skill.yaml"},
		{name: "parts over the total", limits: bundle.Limits{MaxBytes: 1 << 20},
			parts: []tarFile{{name: "resources/a", size: 600 << 10}, {name: "resources/b", size: 600 << 10}}, limit: bundle.LimitBytes, file: "resources/b"},
		{name: "a plain field over 4 KiB", parts: []tarFile{{name: "id", size: bundle.MaxFieldBytes + 1, typeflag: 'F'}}, limit: bundle.LimitFieldBytes, file: "id"},
		{name: "a plain field that never ends", parts: []tarFile{{name: "id", declared: -1, typeflag: 'F'}}, limit: bundle.LimitFieldBytes, file: "id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := bundle.NewReader(tc.limits)
			var err error
			alloc := allocated(func() {
				for _, part := range tc.parts {
					var r io.Reader = io.LimitReader(zeroReader{}, part.size)
					if part.declared == -1 {
						r = zeroReader{}
					}
					if part.typeflag == 'F' {
						_, err = p.AddField(part.name, r)
					} else {
						err = p.Add(part.name, r)
					}
					if err != nil {
						return
					}
				}
			})
			if tc.limit == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantLimit(t, err, tc.limit, tc.file)
			if alloc > allocBound {
				t.Errorf("refusing it allocated %d MiB; want under %d MiB", alloc>>20, allocBound>>20)
			}
		})
	}
}

// zeroReader reads zeros without end.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }
