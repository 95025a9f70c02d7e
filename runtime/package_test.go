package runtime

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

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

// A real package still installs, read either way.
func TestPackageReaderInstallsBundledHello(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"tar.gz", "multipart"} {
		t.Run(how, func(t *testing.T) {
			p := bundle.NewReader(bundle.Limits{})
			if how == "tar.gz" {
				if err := p.AddTarGz(bytes.NewReader(tarGzOf(t, bundledHello(t, "hello/")...))); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := p.AddField("id", strings.NewReader("hello")); err != nil {
					t.Fatal(err)
				}
				for _, f := range bundledHello(t, "") {
					if err := p.Add(f.name, bytes.NewReader(f.data)); err != nil {
						t.Fatal(err)
					}
				}
			}
			rt := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
			s, err := rt.Install(ctx, "hello", p.Files(), InstallOptions{Who: testAdmin})
			if err != nil {
				t.Fatal(err)
			}
			if s.Status() != catalog.StatusActive {
				t.Fatalf("installed as %s: %v", s.Status(), s.Err())
			}
			if res, err := rt.Run(ctx, run.Request{Skill: "hello", Args: []byte(`{"name":"Ada"}`), Who: testAdmin}); err != nil || !res.Success {
				t.Fatalf("run: %v %+v", err, res)
			}
		})
	}
}
