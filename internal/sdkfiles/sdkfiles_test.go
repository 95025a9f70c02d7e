package sdkfiles

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestEmbeddedIsCurrent fails when sdks.zip no longer holds exactly what the rule picks from the
// repository's sdk/: an SDK source was changed, added or removed without regenerating it.
func TestEmbeddedIsCurrent(t *testing.T) {
	t.Parallel()
	for _, name := range Names {
		want, err := Collect("../../sdk", name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Files(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffFiles(got, want); diff != "" {
			t.Errorf("the SDKs embedded in skillbox are stale against sdk/%s (%s): run `make sdks` (go generate ./internal/sdkfiles) and commit internal/sdkfiles/sdks.zip", name, diff)
		}
	}
}

// diffFiles names the first few differences between the embedded files and sdk/'s.
func diffFiles(embedded, source []File) string {
	em := map[string][]byte{}
	for _, f := range embedded {
		em[f.Path] = f.Data
	}
	var diffs []string
	for _, f := range source {
		data, ok := em[f.Path]
		switch {
		case !ok:
			diffs = append(diffs, f.Path+" is not embedded")
		case !bytes.Equal(data, f.Data):
			diffs = append(diffs, f.Path+" differs")
		}
		delete(em, f.Path)
	}
	for p := range em {
		diffs = append(diffs, p+" is embedded but not in sdk/")
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("and %d more", len(diffs)-5))
	}
	return strings.Join(diffs, "; ")
}

func TestInclude(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel  string
		dir  bool
		want bool
	}{
		{"context.go", false, true},
		{"context_test.go", false, false},
		{"skilltest/fake.go", false, true},
		{"skilltest", true, true},
		{"testdata", true, false},
		{"test", true, false},
		{"node_modules", true, false},
		{"target", true, false},
		{".git", true, false},
		{".gitignore", false, false},
		{"test.sh", false, false},
		{"Cargo.lock", false, false},
		{"package-lock.json", false, false},
		{"Cargo.toml", false, true},
		{"src/lib.rs", false, true},
		{"assembly/index.ts", false, true},
		{"README.md", false, true},
		{"skillbox.h", false, true},
	}
	for _, tc := range tests {
		if got := Include(tc.rel, tc.dir); got != tc.want {
			t.Errorf("Include(%q, dir=%v) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
}

// TestCollectNewFile: a file added to an SDK (a new package, say) is collected, and Write and read
// round-trip it.
func TestCollectNewFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"go/go.mod":            "module example.com/sdk\n",
		"go/run.go":            "package sdk\n",
		"go/run_test.go":       "package sdk\n",
		"go/fake/fake.go":      "package fake\n",
		"go/fake/fake_test.go": "package fake\n",
		"go/testdata/x.json":   "{}",
		"c/skillbox.h":         "/* h */\n",
		"c/test/test.c":        "int main(){}\n",
	})
	sdks := map[string][]File{}
	for _, name := range []string{"go", "c"} {
		files, err := Collect(root, name)
		if err != nil {
			t.Fatal(err)
		}
		sdks[name] = files
	}
	if got := paths(sdks["go"]); got != "fake/fake.go go.mod run.go" {
		t.Errorf("go: collected %q", got)
	}
	var buf bytes.Buffer
	if err := Write(&buf, sdks); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Write(&again, sdks); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("the same files made two different archives")
	}
	got, err := read(buf.Bytes(), "c")
	if err != nil || paths(got) != "skillbox.h" || string(got[0].Data) != "/* h */\n" {
		t.Errorf("c: read %q, %v", paths(got), err)
	}
	if _, err := read(buf.Bytes(), "rust"); err == nil || !strings.Contains(err.Error(), `no SDK "rust"`) {
		t.Errorf("an SDK the archive lacks: %v", err)
	}
}

// TestReadBounds: an archive entry past the bounds, or with a path that climbs out, is refused.
func TestReadBounds(t *testing.T) {
	t.Parallel()
	big := map[string][]File{"go": {{Path: "big.go", Data: bytes.Repeat([]byte("a"), MaxFileBytes+1)}}}
	var buf bytes.Buffer
	if err := Write(&buf, big); err != nil {
		t.Fatal(err)
	}
	if _, err := read(buf.Bytes(), "go"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over MaxFileBytes: %v", err)
	}
	many := make([]File, 0, 9)
	for i := range 9 {
		many = append(many, File{Path: fmt.Sprintf("f%d", i), Data: bytes.Repeat([]byte("a"), MaxTotalBytes/8)})
	}
	buf.Reset()
	if err := Write(&buf, map[string][]File{"go": many}); err != nil {
		t.Fatal(err)
	}
	if _, err := read(buf.Bytes(), "go"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("files over MaxTotalBytes: %v", err)
	}
	buf.Reset()
	if err := Write(&buf, map[string][]File{"go": {{Path: "../escape.go", Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := read(buf.Bytes(), "go"); err == nil || !strings.Contains(err.Error(), "not a clean relative path") {
		t.Errorf("a climbing path: %v", err)
	}
}

func paths(files []File) string {
	var p []string
	for _, f := range files {
		p = append(p, f.Path)
	}
	return strings.Join(p, " ")
}
