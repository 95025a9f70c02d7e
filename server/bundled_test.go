package server

import (
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testskills"
)

// bundledDir holds the bundled skills these tests serve.
const bundledDir = "../skills"

// bundledIDs are the ids of the bundled skills in order: every directory of bundledDir holding a
// manifest or a SKILL.md (testskills says why tests read them from the directory).
func bundledIDs(t testing.TB) []string {
	t.Helper()
	return testskills.Must(t, bundledDir, testskills.Skills)
}

// bundledTools are the tool names of the bundled executable skills, in the order of their ids.
func bundledTools(t testing.TB) []string {
	t.Helper()
	return testskills.Must(t, bundledDir, testskills.Tools)
}
