package runtime_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// readmeSection is the README heading whose first Go code block is Example's body.
const readmeSection = "## Embedding it in Go"

// TestReadmeEmbedding fails when the README's embedding snippet and Example differ, so the code a
// reader copies is code that compiles and runs. Both are compared line by line with whitespace
// collapsed (the README indents with spaces, gofmt with tabs) and the skills directory named as
// from the repository's root.
func TestReadmeEmbedding(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	snippet, err := readmeBlock(string(readme), readmeSection)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	body, err := exampleBody("example_test.go", "Example")
	if err != nil {
		t.Fatalf("runtime/example_test.go: %v", err)
	}
	want := normalise(strings.ReplaceAll(body, `"../skills"`, `"./skills"`))
	got := normalise(snippet)
	for i := 0; i < max(len(got), len(want)); i++ {
		g, w := line(got, i), line(want, i)
		if g != w {
			t.Fatalf("README.md's Go block under %q differs from Example's body (runtime/example_test.go) at its line %d:\n README:  %q\n Example: %q\nmake them the same code: the Example is what runs", readmeSection, i+1, g, w)
		}
	}
}

// TestReadmeBlockFindsDrift checks the comparison itself: a changed line is found.
func TestReadmeBlockFindsDrift(t *testing.T) {
	doc := "# x\n" + readmeSection + "\n\ntext\n\n```go\nrt, err := runtime.New(ctx)\n```\n\n## Next\n```go\nother()\n```\n"
	block, err := readmeBlock(doc, readmeSection)
	if err != nil || block != "rt, err := runtime.New(ctx)\n" {
		t.Fatalf("readmeBlock = %q, %v", block, err)
	}
	if _, err := readmeBlock("# x\n"+readmeSection+"\n\n## Next\n```go\nother()\n```\n", readmeSection); err == nil {
		t.Fatal("a block under the next heading was taken for the section's")
	}
	if a, b := normalise("a :=  1 // x\n\n"), normalise("\ta := 1   // x"); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("normalise: %q != %q", a, b)
	}
}

// readmeBlock returns the first ```go block under heading, before the next heading of any level.
func readmeBlock(doc, heading string) (string, error) {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return "", errors.New("no heading " + heading)
	}
	var b strings.Builder
	in := false
	for _, l := range strings.SplitAfter(rest, "\n") {
		switch {
		case !in && strings.HasPrefix(l, "#"):
			return "", errors.New("no ```go block under " + heading)
		case !in && strings.TrimSpace(l) == "```go":
			in = true
		case in && strings.TrimSpace(l) == "```":
			return b.String(), nil
		case in:
			b.WriteString(l)
		}
	}
	return "", errors.New("the ```go block under " + heading + " does not end")
}

// exampleBody returns the source between the braces of the function name in file.
func exampleBody(file, name string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Body != nil {
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			// The expected output is the test's, not the snippet's.
			if i := strings.Index(body, "// Output:"); i >= 0 {
				body = body[:i]
			}
			return body, nil
		}
	}
	return "", errors.New("no func " + name)
}

// normalise returns the non-blank lines of s with runs of whitespace made one space.
func normalise(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(no line)"
}
