package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bundledTools returns the tool names of the bundled executable skills (bundled: the
// directories holding a manifest), in the order of their ids: "skill_" + id with '-' written
// '_', the rule restated rather than taken from the code under test. Tests of "every bundled
// skill" derive what they expect from the directory, so adding a bundled skill breaks none of
// them, and a listing that leaves one out or adds one still fails.
func bundledTools(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, id := range bundledWith(t, "skill.json", "skill.yaml", "skill.yml") {
		names = append(names, "skill_"+strings.ReplaceAll(id, "-", "_"))
	}
	return names
}

// bundledWith lists, in name order, the ids of the bundled skills whose directory holds any of
// files.
func bundledWith(t *testing.T, files ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(bundled)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(bundled, e.Name(), f)); err == nil {
				ids = append(ids, e.Name())
				break
			}
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s holds no skill with any of %v", bundled, files)
	}
	return ids
}
