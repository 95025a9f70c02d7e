package repocheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDesignNamesEveryPackage fails when a Go package of the module is not named in
// docs/design.md by its path ("`store/sqlite/`"), so the map of the code cannot fall behind the
// code: a new package gets its line when it is made.
func TestDesignNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the module's packages")
	}
	cmd := exec.Command(gocmd, "list", "-f", "{{.ImportPath}} {{.Module.Path}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.Bytes())
	}
	design, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, module, ok := strings.Cut(line, " ")
		if !ok || module == "" {
			t.Fatalf("go list printed %q", line)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if rel == "" {
			continue // the module's root holds no package
		}
		n++
		if !bytes.Contains(design, []byte("`"+rel+"/`")) {
			t.Errorf("docs/design.md does not name the package %s: add `%s/` and what it holds to its map of the packages", rel, rel)
		}
	}
	if n < 20 {
		t.Fatalf("go list found %d packages: the test reads the wrong tree", n)
	}
}
