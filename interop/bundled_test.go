package interop

import (
	"os"
	"path/filepath"
	"testing"
)

// bundledWithSkillMD returns, in order, the ids of the bundled skills (../skills) that have a
// SKILL.md: those the Agent Skills extension lists. Read from the directory, so adding a bundled
// skill breaks no test, and a listing that leaves one out or adds one still fails.
func bundledWithSkillMD(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "skills")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "SKILL.md")); e.IsDir() && err == nil {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s holds no skill with a SKILL.md", dir)
	}
	return ids
}
