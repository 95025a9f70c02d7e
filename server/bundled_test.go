package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bundledDir holds the bundled skills these tests serve.
const bundledDir = "../skills"

// bundledIDs returns the ids of the bundled skills (../skills) in order: every directory there
// that holds a manifest or a SKILL.md. Tests of "every bundled skill" derive what they expect
// from it, so adding a bundled skill breaks none of them, and a listing that leaves one out or
// adds one still fails.
func bundledIDs(t testing.TB) []string {
	t.Helper()
	return bundledScan(t, "skill.json", "skill.yaml", "skill.yml", "SKILL.md")
}

// bundledTools returns the tool names of the bundled executable skills (those with a manifest),
// in the order of their ids: "skill_" + id with '-' written '_', restated rather than taken from
// tooldef.Name.
func bundledTools(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, id := range bundledScan(t, "skill.json", "skill.yaml", "skill.yml") {
		names = append(names, "skill_"+strings.ReplaceAll(id, "-", "_"))
	}
	return names
}

// bundledScan lists, in name order, the directories of bundledDir holding any of files.
func bundledScan(t testing.TB, files ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(bundledDir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(bundledDir, e.Name(), f)); err == nil {
				ids = append(ids, e.Name())
				break
			}
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s holds no skill with any of %v", bundledDir, files)
	}
	return ids
}
