package skillmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadResource: a path a model names reads a file inside the skill's directory, or is
// refused; never a file outside it, never a hidden one.
func FuzzReadResource(f *testing.F) {
	for _, s := range []string{"SKILL.md", "resources/a.md", "../outside.txt", "resources/../../outside.txt", ".secret",
		"resources/./a.md", "/etc/passwd", "resources\\a.md", "link.md", "resources//a.md", "a\x00b"} {
		f.Add(s)
	}
	root := f.TempDir()
	skill := filepath.Join(root, "skill")
	for name, data := range map[string]string{"SKILL.md": "---\nname: x\n---\n", "resources/a.md": "inside", ".secret": "hidden"} {
		p := filepath.Join(skill, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(skill, "link.md")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		data, err := ReadResource(skill, rel, 0)
		if err != nil {
			return
		}
		if s := string(data); s == "outside" || s == "hidden" {
			t.Fatalf("ReadResource(%q) read %q", rel, s)
		}
		if strings.Contains(rel, "..") {
			t.Fatalf("ReadResource(%q) accepted a path with ..", rel)
		}
	})
}
