package pydeps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/pydeps/pydepstest"
)

// testWheels are a pure package that needs another, and one with only a C extension's wheel.
func testWheels(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for _, w := range []struct {
		name, version, tag string
		files              map[string]string
		requires           []string
	}{
		{"demo-pure", "1.0", "py3-none-any", map[string]string{"demo_pure/__init__.py": "from dep_pure import BASE\nVALUE = BASE + 1\n"}, []string{"dep-pure ==2.0"}},
		{"dep-pure", "2.0", "py3-none-any", map[string]string{"dep_pure/__init__.py": "BASE = 41\n"}, nil},
		{"dep-pure", "1.0", "py3-none-any", map[string]string{"dep_pure/__init__.py": "BASE = 0\n"}, nil},
		{"native-ext", "1.0", "cp311-cp311-manylinux_2_17_x86_64", map[string]string{"native_ext/_speed.so": "\x7fELF"}, nil},
		// A pure package over lxml (as python-docx is), and lxml's own platform wheels.
		{"docx-like", "1.0", "py3-none-any", map[string]string{"docx_like/__init__.py": "from lxml import etree\n"}, []string{"lxml>=3.1.0"}},
		{"newer-xml", "1.0", "py3-none-any", map[string]string{"newer_xml/__init__.py": ""}, []string{"lxml>=5"}},
		{"lxml", "5.3.0", "cp311-cp311-manylinux_2_17_x86_64", map[string]string{"lxml/etree.so": "\x7fELF"}, nil},
		// One over lxml and Pillow (as python-pptx is), under Pillow's own spelling, and
		// Pillow's platform wheel.
		{"pptx-like", "1.0", "py3-none-any", map[string]string{"pptx_like/__init__.py": "from PIL import Image\n"}, []string{"lxml>=3.1.0", "Pillow>=3.3.2"}},
		{"Pillow", "10.4.0", "cp311-cp311-manylinux_2_17_x86_64", map[string]string{"PIL/_imaging.so": "\x7fELF"}, nil},
	} {
		name, data := pydepstest.BuildWheel(t, w.name, w.version, w.tag, w.files, w.requires...)
		out[name] = data
	}
	return out
}

func skillWith(t *testing.T, requirements string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RequirementsFile), []byte(requirements), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A real pip resolves the pinned requirements from a real index on loopback, dependencies
// included, and the wheels are unpacked into lib/ with a manifest of their sha256s; a second
// vendoring replaces the first's files.
func TestVendorFromAnIndex(t *testing.T) {
	pydepstest.NeedPip(t)
	wheels := testWheels(t)
	url := pydepstest.Index(t, wheels)
	dir := skillWith(t, "# what the skill needs\ndemo-pure==1.0  # pinned\n")
	m, err := Vendor(context.Background(), dir, Options{IndexURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Wheels) != 2 || m.Requirements[0] != "demo-pure==1.0" {
		t.Fatalf("%+v", m)
	}
	for _, w := range m.Wheels {
		sum := sha256.Sum256(wheels[w.File])
		if w.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 %s", w.File, w.SHA256)
		}
	}
	for file, want := range map[string]string{"demo_pure/__init__.py": "VALUE = BASE + 1", "dep_pure/__init__.py": "BASE = 41", "dep_pure-2.0.dist-info/METADATA": "Version: 2.0", ManifestFile: `"sha256"`} {
		if data, err := os.ReadFile(filepath.Join(dir, LibDir, filepath.FromSlash(file))); err != nil || !strings.Contains(string(data), want) {
			t.Errorf("lib/%s: %q %v", file, data, err)
		}
	}
	// Again with the dependency pinned lower: its files are the new version's, nothing is left
	// of the old, and the skill's own file in lib/ stays.
	if err := os.WriteFile(filepath.Join(dir, LibDir, "mine.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RequirementsFile), []byte("dep-pure==1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Vendor(context.Background(), dir, Options{IndexURL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LibDir, "demo_pure")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("demo_pure is left from the first vendoring: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, LibDir, "dep_pure", "__init__.py")); string(data) != "BASE = 0\n" {
		t.Errorf("dep_pure: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, LibDir, "mine.py")); err != nil {
		t.Errorf("the skill's own lib/mine.py: %v", err)
	}
}

// A requirement of a package compiled into the interpreter, the skill's or a dependency's, is
// met by it and not vendored: a copy in lib/ would come first on sys.path.
func TestVendorLeavesTheInterpretersPackages(t *testing.T) {
	pydepstest.NeedPip(t)
	url := pydepstest.Index(t, testWheels(t))
	dir := skillWith(t, "docx-like==1.0\nlxml==4.9.2\n")
	m, err := Vendor(context.Background(), dir, Options{IndexURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Wheels) != 1 || m.Wheels[0].Name != "docx_like" || strings.Join(m.BuiltIn, ",") != "lxml==4.9.2" {
		t.Fatalf("%+v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, LibDir, "lxml-4.9.2.dist-info")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lxml's metadata was vendored: %v", err)
	}
	dir = skillWith(t, "pptx-like==1.0\n")
	m, err = Vendor(context.Background(), dir, Options{IndexURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Wheels) != 1 || m.Wheels[0].Name != "pptx_like" || strings.Join(m.BuiltIn, ",") != "lxml==4.9.2,pillow==9.4.0" {
		t.Fatalf("%+v", m)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, LibDir)); len(entries) != 3 { // pptx_like, its dist-info, the manifest
		t.Fatalf("lib/ holds %v", entries)
	}
}

// A directory of wheels serves alone (--find-links, no index).
func TestVendorFromAWheelDirectory(t *testing.T) {
	pydepstest.NeedPip(t)
	wheels := t.TempDir()
	for name, data := range testWheels(t) {
		if err := os.WriteFile(filepath.Join(wheels, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := skillWith(t, "demo-pure==1.0\n")
	if m, err := Vendor(context.Background(), dir, Options{FindLinks: wheels}); err != nil || len(m.Wheels) != 2 {
		t.Fatalf("%+v %v", m, err)
	}
}

// What cannot be vendored is refused naming it, and lib/ is left as it was: a requirement with
// only a C extension's wheel, one the index does not have, a hash that does not match, and
// requirements that are not pinned or carry options of their own.
func TestVendorRefusals(t *testing.T) {
	pydepstest.NeedPip(t)
	url := pydepstest.Index(t, testWheels(t))
	for reqs, want := range map[string]string{
		"native-ext==1.0\n": "native-ext==1.0 has no pure-Python wheel",
		"newer-xml==1.0\n":  "lxml>=5: Skillbox's Python has lxml 4.9.2 built in, and no other version of it can load",
		"lxml==5.3.0\n":     "lxml==5.3.0: Skillbox's Python has lxml 4.9.2 built in",
		"Pillow==10.4.0\n":  "Pillow==10.4.0: Skillbox's Python has pillow 9.4.0 built in",
		"nosuch==1.0\n":     "nosuch==1.0 has no pure-Python wheel",
		"dep-pure==2.0 --hash=sha256:" + strings.Repeat("0", 64) + "\n": "does not have the --hash",
	} {
		dir := skillWith(t, reqs)
		_, err := Vendor(context.Background(), dir, Options{IndexURL: url})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", reqs, err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, LibDir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: lib/ was written: %v", reqs, err)
		}
	}
	for reqs, want := range map[string]string{
		"demo-pure\n":                 `requirements.txt:1: "demo-pure" is not pinned`,
		"x==1\ndemo-pure>=1.0\n":      `requirements.txt:2: "demo-pure>=1.0" is not pinned`,
		"--index-url http://evil/\n":  "only requirements and their --hash options",
		"-r other.txt\n":              "only requirements and their --hash options",
		"a==1 --install-option=--x\n": "only --hash may follow",
	} {
		if _, err := ReadRequirements(skillWith(t, reqs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", reqs, err, want)
		}
	}
	reqs, err := ReadRequirements(skillWith(t, "Demo.Pure[extra]==1.0 ; python_version >= \"3\" \\\n    --hash=sha256:ab\n"))
	if err != nil || len(reqs) != 1 || reqs[0].Name != "Demo.Pure" || reqs[0].Version != "1.0" {
		t.Errorf("a pinned requirement with extras, a marker and a hash: %+v %v", reqs, err)
	}
}

// A wheel that would write over the skill's own file in lib/, or out of lib/, is refused
// before anything is written.
func TestVendorKeepsTheSkillsFiles(t *testing.T) {
	pydepstest.NeedPip(t)
	evil := map[string][]byte{}
	name, data := pydepstest.BuildWheel(t, "escape", "1.0", "py3-none-any", map[string]string{"../../outside.py": "x"})
	evil[name] = data
	name, data = pydepstest.BuildWheel(t, "clash", "1.0", "py3-none-any", map[string]string{"mine.py": "theirs"})
	evil[name] = data
	url := pydepstest.Index(t, evil)
	dir := skillWith(t, "clash==1.0\n")
	if err := os.MkdirAll(filepath.Join(dir, LibDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LibDir, "mine.py"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Vendor(context.Background(), dir, Options{IndexURL: url}); err == nil || !strings.Contains(err.Error(), "lib/mine.py, which exists") {
		t.Errorf("a clash with the skill's file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, LibDir, "mine.py")); string(data) != "mine" {
		t.Errorf("lib/mine.py is now %q", data)
	}
	dir = skillWith(t, "escape==1.0\n")
	if _, err := Vendor(context.Background(), dir, Options{IndexURL: url}); err == nil || !strings.Contains(err.Error(), "not a clean relative path") {
		t.Errorf("a wheel writing out of lib/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside.py")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outside.py was written: %v", err)
	}
}
