package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/bundle/bundletest"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// bundledHello lists skills/hello's package files (not its source) under prefix.
func bundledHello(t testing.TB, prefix string) []bundletest.Entry {
	t.Helper()
	var fs []bundletest.Entry
	for _, name := range []string{"skill.json", spec.ModuleFile, "SKILL.md"} {
		data, err := os.ReadFile(filepath.Join("..", "skills", "hello", name))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, bundletest.Entry{Name: prefix + name, Data: data})
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
				if err := p.AddTarGz(bytes.NewReader(bundletest.TarGz(t, bundledHello(t, "hello/")...))); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := p.AddField("id", strings.NewReader("hello")); err != nil {
					t.Fatal(err)
				}
				for _, f := range bundledHello(t, "") {
					if err := p.Add(f.Name, bytes.NewReader(f.Data)); err != nil {
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
