package tooldef_test

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
	sameJSON   = skilltest.SameJSON
	fixture    = skilltest.Fixture
	newRuntime = skilltest.NewRuntime
	mustSkill  = skilltest.MustSkill
)

type fakeCatalog = skilltest.Catalog
