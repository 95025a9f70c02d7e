package skillmd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// skillTree makes a skill directory with resources, package files, hidden files and symlinks
// both ways, beside a secret outside it.
func skillTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "skill")
	files := map[string]string{
		"SKILL.md":              "---\nname: a\ndescription: b\n---\n",
		"skill.json":            "{}",
		"execute.wasm":          "\x00asm",
		"src/main.go":           "package main",
		"REFERENCE.md":          "reference",
		"resources/a.txt":       "a",
		"resources/deep/b.txt":  "b",
		"a-c.txt":               "ac",
		"big.bin":               strings.Repeat("x", 2048),
		".env":                  "TOKEN=1",
		".git/config":           "[remote] url = https://token@example.com",
		"resources/.hidden.txt": "h",
		"resources/skill.json":  "a resource that happens to be named skill.json",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"out.txt":            "../secret.txt",
		"abs.txt":            filepath.Join(base, "secret.txt"),
		"in.txt":             "resources/a.txt",
		"linkdir":            "resources",
		"loop":               "loop",
		"resources/up.txt":   "../../secret.txt",
		"resources/dangling": "nowhere",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Logf("no FIFO: %v", err)
	}
	return dir
}

func TestReadResource(t *testing.T) {
	dir := skillTree(t)
	tests := []struct {
		rel  string
		max  int64
		want string // content, or the sentinel's name
		msg  string // part of the message, for errors
	}{
		{rel: "REFERENCE.md", want: "reference"},
		{rel: "resources/deep/b.txt", want: "b"},
		{rel: "./resources//a.txt", want: "a"},
		{rel: "in.txt", want: "a"},
		{rel: "linkdir/deep/b.txt", want: "b"},
		{rel: "SKILL.md", want: "---\nname: a\ndescription: b\n---\n"},
		{rel: "big.bin", max: 2048, want: strings.Repeat("x", 2048)},

		{rel: "", want: "invalid", msg: "empty"},
		{rel: "/etc/passwd", want: "invalid", msg: "absolute"},
		{rel: "../secret.txt", want: "invalid", msg: `".."`},
		{rel: "resources/../../secret.txt", want: "invalid", msg: `".."`},
		{rel: "resources\\a.txt", want: "invalid", msg: `"\"`},
		{rel: "a\x00b", want: "invalid", msg: "NUL"},
		{rel: "\xff", want: "invalid", msg: "UTF-8"},
		{rel: strings.Repeat("a/", 3000), want: "invalid", msg: "longer than"},
		{rel: ".", want: "invalid", msg: "names the skill's directory"},
		{rel: "resources", want: "invalid", msg: "is a directory"},

		{rel: "out.txt", want: "denied", msg: "leads outside"},
		{rel: "abs.txt", want: "denied", msg: "leads outside"},
		{rel: "resources/up.txt", want: "denied", msg: "leads outside"},
		{rel: ".env", want: "denied", msg: "hidden"},
		{rel: ".git/config", want: "denied", msg: "hidden"},
		{rel: "resources/.hidden.txt", want: "denied", msg: "hidden"},
		{rel: "loop", want: "denied", msg: "symbolic links"},
		{rel: "fifo", want: "denied", msg: "not a regular file"},

		{rel: "nope.md", want: "not found", msg: "no such file"},
		{rel: "REFERENCE.md/x", want: "not found", msg: "no such file"},
		{rel: "resources/dangling", want: "not found", msg: "no such file"},

		{rel: "big.bin", max: 2047, want: "too large", msg: "2048 bytes is more than the 2047 allowed"},
	}
	sentinels := map[string]error{"invalid": ErrInvalid, "denied": ErrDenied, "not found": ErrNotFound, "too large": ErrTooLarge}
	for _, tc := range tests {
		name := tc.rel
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		t.Run(name, func(t *testing.T) {
			if tc.rel == "fifo" {
				if _, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil {
					t.Skip("no FIFO")
				}
			}
			data, err := ReadResource(dir, tc.rel, tc.max)
			sentinel, wantErr := sentinels[tc.want]
			if !wantErr {
				if err != nil || string(data) != tc.want {
					t.Fatalf("got %q, %v", data, err)
				}
				return
			}
			if !errors.Is(err, sentinel) {
				t.Fatalf("got %q, %v; want %s", data, err, tc.want)
			}
			for name, s := range sentinels {
				if name != tc.want && errors.Is(err, s) {
					t.Errorf("%v also matches %s", err, name)
				}
			}
			var re *ResourceError
			if !errors.As(err, &re) || !strings.Contains(re.Msg, tc.msg) {
				t.Errorf("got %v; want a *ResourceError saying %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("the message shows the host path: %v", err)
			}
		})
	}
	t.Run("no skill directory", func(t *testing.T) {
		_, err := ReadResource(filepath.Join(dir, "missing"), "a.txt", 0)
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the default limit applies when max is 0", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "huge.bin"), make([]byte, DefaultResourceLimit+1), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadResource(dir, "huge.bin", 0); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestListResources(t *testing.T) {
	dir := skillTree(t)
	want := []string{"REFERENCE.md", "a-c.txt", "big.bin", "in.txt", "resources/a.txt", "resources/deep/b.txt", "resources/skill.json"}
	got, err := ListResources(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Everything listed can be read.
	for _, p := range got {
		if _, err := ReadResource(dir, p, 0); err != nil {
			t.Errorf("listed but unreadable: %v", err)
		}
	}
	t.Run("at most max, in walk order", func(t *testing.T) {
		got, err := ListResources(dir, 3)
		if err != nil || !reflect.DeepEqual(got, want[:3]) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("a directory's files stay together", func(t *testing.T) {
		d := t.TempDir()
		for _, n := range []string{"a/b", "a-c"} {
			p := filepath.Join(d, n)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, nil, 0o644)
		}
		got, _ := ListResources(d, 0)
		if !reflect.DeepEqual(got, []string{"a/b", "a-c"}) {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("an empty skill lists nothing, not nil", func(t *testing.T) {
		got, err := ListResources(t.TempDir(), 0)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("got %#v, %v", got, err)
		}
	})
	t.Run("no skill directory", func(t *testing.T) {
		_, err := ListResources(filepath.Join(dir, "missing"), 0)
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	})
}
