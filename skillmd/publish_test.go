package skillmd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"a": true, "pdf-tools": true, "a1-b2-c3": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "-a": false, "a-": false, "a--b": false,
		"A": false, "pdf_tools": false, "pdf.tools": false, "é": false, "a b": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestFrontmatterIsYAML12 checks the values a strict YAML 1.2 reader (the JavaScript "yaml"
// package, which MCP clients use to check skills/list against the file) makes of frontmatter,
// where yaml.v3's YAML 1.1 leanings differ: the expected JSON is that reader's output.
func TestFrontmatterIsYAML12(t *testing.T) {
	t.Parallel()
	md := "---\nname: x\ndescription: >\n  folded\n  text\n" +
		"octal: 017\nunderscore: 1_000\nbinary: 0b101\nhex: 0x1F\noct: 0o17\ndate: 2024-01-01\n" +
		"yes: yes\non: on\nbool: True\nnull1: ~\nnull2:\nfloat: 1e3\nneg: -12\nquoted: \"012\"\n" +
		"tagged: !!str 12\ncustom: !thing value\nbig: 99999999999999999999999\n" +
		"base: &b {k: v}\nref: *b\nmerged: {<<: *b, other: 1}\nkeys: {1: a, true: b}\n" +
		"metadata:\n  version: \"2.1\"\n  list: [a, 1, null]\n---\n\nbody\n"
	got, err := Frontmatter("SKILL.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"base":{"k":"v"},"big":1e+23,"binary":"0b101","bool":true,"custom":"value","date":"2024-01-01",` +
		`"description":"folded text\n","float":1000,"hex":31,"keys":{"1":"a","true":"b"},"merged":{"\u003c\u003c":{"k":"v"},"other":1},` +
		`"metadata":{"list":["a",1,null],"version":"2.1"},"name":"x","neg":-12,"null1":null,"null2":null,"oct":15,"octal":17,` +
		`"on":"on","quoted":"012","ref":{"k":"v"},"tagged":"12","underscore":"1_000","yes":"yes"}`
	data, _ := json.Marshal(got)
	if string(data) != want {
		t.Errorf("frontmatter\n got %s\nwant %s", data, want)
	}
}

func TestFrontmatterRefuses(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]string{
		"\xef\xbb\xbf---\nname: x\ndescription: d\n---\n":   "byte order mark",
		"# no frontmatter\n":                                "no frontmatter",
		"---\nname: x\ndescription: d\n":                    "not closed",
		"---\n---\n":                                        "empty",
		"---\n- a\n---\n":                                   "mapping",
		"---\ndescription: d\n---\n":                        "name: is required",
		"---\nname: [a]\ndescription: d\n---\n":             "name: must be text",
		"---\nname: x\ndescription: \"  \"\n---\n":          "description: is empty",
		"---\nname: x\ndescription: d\nn: .inf\n---\n":      "no JSON equivalent",
		"---\nname: x\ndescription: d\nn: 1e400\n---\n":     "beyond what JSON",
		"---\nname: x\ndescription: d\n? [a]\n: b\n---\n":   "key that is a list",
		"---\nname: x\ndescription: d\n~: b\n---\n":         "null key",
		"---\nname: x\ndescription: d\nn: !!int abc\n---\n": "tagged !!int",
		"---\nname: x\nname: y\ndescription: d\n---\n":      "already defined",
		"---\nname: x\ndescription: d: e\n---\n":            "mapping values are not allowed",
	} {
		_, err := Frontmatter("SKILL.md", []byte(md))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Frontmatter(%q): %v, want an error saying %q", md, err, want)
		}
	}
}

// publishTree is a skill "pdf" with a SKILL.md, resources (one executable, one in a
// subdirectory), package files and a hidden file, which are not published.
func publishTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pdf")
	for rel, data := range map[string]string{
		"SKILL.md":             "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\n\n# PDF\n",
		"reference/forms.md":   "# Forms\n",
		"scripts/extract.sh":   "#!/bin/sh\necho hi\n",
		"skill.json":           "{}",
		"execute.wasm":         "\x00asm",
		"src/main.go":          "package main",
		".env":                 "SECRET=1",
		"reference/.git/HEAD":  "ref",
		"templates/a b/c.json": "{}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "scripts", "extract.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func digestOf(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestPublish(t *testing.T) {
	t.Parallel()
	dir := publishTree(t)
	var p Publisher
	pkg, err := p.Publish(dir, "SKILL.md", "pdf")
	if err != nil {
		t.Fatal(err)
	}
	md := "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\n\n# PDF\n"
	want := []File{
		{Path: "SKILL.md", Size: int64(len(md)), Digest: digestOf(md)},
		{Path: "reference/forms.md", Size: 8, Digest: digestOf("# Forms\n")},
		{Path: "scripts/extract.sh", Size: 18, Digest: digestOf("#!/bin/sh\necho hi\n"), Executable: true},
		{Path: "templates/a b/c.json", Size: 2, Digest: digestOf("{}")},
	}
	if !reflect.DeepEqual(pkg.Files, want) {
		t.Errorf("files\n got %+v\nwant %+v", pkg.Files, want)
	}
	if pkg.Name != "pdf" || !reflect.DeepEqual(pkg.Frontmatter, map[string]any{"name": "pdf", "description": "Reads PDFs.", "license": "MIT"}) {
		t.Errorf("name %q, frontmatter %v", pkg.Name, pkg.Frontmatter)
	}
	if pkg.Size() != int64(len(md))+8+18+2 {
		t.Errorf("size %d", pkg.Size())
	}

	// Unchanged, the same digest; a changed file (same size, so only its time tells) and an
	// execute bit change it.
	again, _ := p.Publish(dir, "SKILL.md", "pdf")
	if again.Digest != pkg.Digest {
		t.Errorf("digest changed without a change: %s, %s", pkg.Digest, again.Digest)
	}
	forms := filepath.Join(dir, "reference", "forms.md")
	if err := os.WriteFile(forms, []byte("# Fórm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(forms, later, later); err != nil {
		t.Fatal(err)
	}
	changed, err := p.Publish(dir, "SKILL.md", "pdf")
	if err != nil || changed.Files[1].Digest != digestOf("# Fórm\n") || changed.Digest == pkg.Digest {
		t.Fatalf("after a change: %v %+v", err, changed)
	}
	if err := os.Chmod(filepath.Join(dir, "reference", "forms.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if x, _ := p.Publish(dir, "SKILL.md", "pdf"); !x.Files[1].Executable || x.Digest == changed.Digest {
		t.Errorf("an execute bit is not seen: %+v", x.Files[1])
	}
}

// TestPublishCacheIsByIdentity checks that a cached digest is used only for the file it was taken
// of: a file replaced by another of the same size and time is hashed again (its inode differs).
func TestPublishCacheIsByIdentity(t *testing.T) {
	t.Parallel()
	dir := publishTree(t)
	var p Publisher
	if _, err := p.Publish(dir, "SKILL.md", "pdf"); err != nil {
		t.Fatal(err)
	}
	forms := filepath.Join(dir, "reference", "forms.md")
	st, _ := os.Stat(forms)
	tmp := forms + ".new"
	if err := os.WriteFile(tmp, []byte("# Other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, forms); err != nil {
		t.Fatal(err)
	}
	pkg, err := p.Publish(dir, "SKILL.md", "pdf")
	if err != nil || pkg.Files[1].Digest != digestOf("# Other\n") {
		t.Fatalf("a replaced file keeps its old digest: %v %+v", err, pkg)
	}
}

func TestPublishRefuses(t *testing.T) {
	t.Parallel()
	refuse := func(t *testing.T, dir, id, want string) {
		t.Helper()
		_, err := new(Publisher).Publish(dir, "SKILL.md", id)
		var pe *PublishError
		if !errors.As(err, &pe) || !errors.Is(err, ErrUnpublishable) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Publish: %v, want a PublishError saying %q", err, want)
		}
		if strings.Contains(err.Error(), dir) {
			t.Errorf("the error names the host path: %v", err)
		}
	}
	write := func(t *testing.T, path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("name differs from id", func(t *testing.T) {
		t.Parallel()
		refuse(t, publishTree(t), "pdf-tools", `the name "pdf" differs from the skill's id "pdf-tools"`)
	})
	t.Run("invalid name", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: PDF_Tools\ndescription: d\n---\n")
		refuse(t, dir, "pdf-tools", `"PDF_Tools" is not a valid Agent Skills name`)
	})
	t.Run("long description", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: x\ndescription: "+strings.Repeat("é", 1025)+"\n---\n")
		refuse(t, dir, "x", "1025 characters")
	})
	t.Run("YAML only a lenient reader takes", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: x\ndescription: Use it: always\n---\n")
		refuse(t, dir, "x", "SKILL.md:")
	})
	t.Run("too many files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: x\ndescription: d\n---\n")
		for i := range MaxPublishedFiles {
			write(t, filepath.Join(dir, "r", strings.Repeat("f", 1+i/26)+string(rune('a'+i%26))), "")
		}
		refuse(t, dir, "x", "more than the 512 files")
	})
	t.Run("too many bytes", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: x\ndescription: d\n---\n")
		big := strings.Repeat("x", MaxPublishedBytes/2)
		write(t, filepath.Join(dir, "a.bin"), big)
		write(t, filepath.Join(dir, "b.bin"), big)
		refuse(t, dir, "x", "larger than the 16777216 bytes")
	})
	t.Run("a FIFO", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, "SKILL.md"), "---\nname: x\ndescription: d\n---\n")
		if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		// ListResources leaves it out; a FIFO swapped in for a listed file is refused on open.
		pkg, err := new(Publisher).Publish(dir, "SKILL.md", "x")
		if err != nil || len(pkg.Files) != 1 {
			t.Fatalf("%v %+v", err, pkg)
		}
	})
	t.Run("exactly at the limits", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		md := "---\nname: x\ndescription: d\n---\n"
		write(t, filepath.Join(dir, "SKILL.md"), md)
		for i := range MaxPublishedFiles - 2 {
			write(t, filepath.Join(dir, "r", strings.Repeat("f", 1+i/26)+string(rune('a'+i%26))), "")
		}
		write(t, filepath.Join(dir, "z.bin"), strings.Repeat("x", MaxPublishedBytes-len(md)))
		pkg, err := new(Publisher).Publish(dir, "SKILL.md", "x")
		if err != nil || len(pkg.Files) != MaxPublishedFiles || pkg.Size() != MaxPublishedBytes {
			t.Fatalf("at the limits: %v", err)
		}
	})
}

func TestArchive(t *testing.T) {
	t.Parallel()
	dir := publishTree(t)
	var p Publisher
	pkg, err := p.Publish(dir, "SKILL.md", "pdf")
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := Archive(&a, dir, pkg); err != nil {
		t.Fatal(err)
	}
	if err := Archive(&b, dir, pkg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two archives of the same files differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		f := pkg.Files[len(names)]
		if h.Name != f.Path || digestOf(string(data)) != f.Digest || h.Uid != 0 || h.Uname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("entry %+v does not match %+v", h, f)
		}
		if want := int64(0o644); f.Executable && h.Mode != 0o755 || !f.Executable && h.Mode != want {
			t.Errorf("%s: mode %o", h.Name, h.Mode)
		}
		names = append(names, h.Name)
	}
	if len(names) != len(pkg.Files) {
		t.Errorf("entries %v", names)
	}

	// A file that changed since pkg was made makes no archive.
	if err := os.WriteFile(filepath.Join(dir, "reference", "forms.md"), []byte("# Changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Archive(io.Discard, dir, pkg); !errors.Is(err, ErrUnpublishable) || !strings.Contains(err.Error(), "reference/forms.md changed") {
		t.Errorf("archive of a changed skill: %v", err)
	}
}
