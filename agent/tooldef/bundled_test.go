package tooldef_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
)

// bundledTools returns the tool names of the bundled executable skills (../../skills) in the
// order of their ids: one per directory there that holds a manifest. Read from the directory, so
// a test of "every bundled skill" holds when a skill is added, and still fails when a listing
// leaves one out or adds one.
func bundledTools(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "skills")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, m := range []string{"skill.json", "skill.yaml", "skill.yml"} {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), m)); err == nil {
				// The rule of tooldef.Name, restated rather than trusted.
				names = append(names, tooldef.ToolPrefix+strings.ReplaceAll(e.Name(), "-", "_"))
				break
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s holds no executable skill", dir)
	}
	return names
}
