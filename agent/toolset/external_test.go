package toolset_test

import (
	"github.com/skillbox-dev/skillbox/agent/internal/skilltest"
	"github.com/skillbox-dev/skillbox/internal/testcache"
)

// The shared fixtures (package skilltest), by the names the external tests use. These tests
// live outside package toolset because they drive it through prompt and runmodule, which
// import it.
var (
	fixture      = skilltest.Fixture
	newRuntime   = skilltest.NewRuntime
	exe          = skilltest.Exe
	benchCatalog = skilltest.BenchCatalog
	cacheDir     = testcache.Dir()
)

type (
	testCatalog = skilltest.Catalog
	fakeRunner  = skilltest.Runner
)
