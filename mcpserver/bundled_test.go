package mcpserver_test

import (
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testskills"
)

// bundledTools are the tool names of the bundled executable skills (those with a manifest), in
// the order of their ids (testskills says why tests read them from the directory).
func bundledTools(t *testing.T) []string {
	t.Helper()
	return testskills.Must(t, bundled, testskills.Tools)
}

// bundledWithSkillMD are the ids of the bundled skills that have a SKILL.md, in order.
func bundledWithSkillMD(t *testing.T) []string {
	t.Helper()
	return testskills.Must(t, bundled, testskills.WithSkillMD)
}

// bundledInstructions are the ids of the bundled instruction skills (a SKILL.md, no manifest).
func bundledInstructions(t *testing.T) []string {
	t.Helper()
	return testskills.Must(t, bundled, testskills.Instructions)
}
