package interop

import (
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testskills"
)

// bundledWithSkillMD are, in order, the ids of the bundled skills (../skills) that have a
// SKILL.md: those the Agent Skills extension lists (testskills says why tests read them from the
// directory).
func bundledWithSkillMD(t *testing.T) []string {
	t.Helper()
	return testskills.Must(t, filepath.Join("..", "skills"), testskills.WithSkillMD)
}
