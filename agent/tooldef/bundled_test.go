package tooldef_test

import (
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testskills"
)

// bundledTools are the tool names of the bundled executable skills (../../skills) in the order
// of their ids, one per directory holding a manifest: the rule of tooldef.Name restated rather
// than trusted (testskills says why tests read them from the directory).
func bundledTools(t *testing.T) []string {
	t.Helper()
	return testskills.Must(t, filepath.Join("..", "..", "skills"), testskills.Tools)
}
