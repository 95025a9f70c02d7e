package prompt

import (
	"os"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/internal/skilltest"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// The shared fixtures (package skilltest), by the names these tests use.
var (
	exe       = skilltest.Exe
	mustSkill = skilltest.MustSkill
)

type testCatalog = skilltest.Catalog
