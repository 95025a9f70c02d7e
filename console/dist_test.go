package console

import (
	"bytes"
	"io/fs"
	"path"
	"testing"

	"github.com/skillbox-dev/skillbox/console/build"
)

// TestDistIsCurrent builds the assets from src in memory and compares them with the committed
// dist: a change to src without `make console` fails here, naming what to run.
func TestDistIsCurrent(t *testing.T) {
	t.Parallel()
	built, err := build.Dist("src")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range build.Files {
		committed, err := fs.ReadFile(dist, path.Join("dist", name))
		if err != nil {
			t.Errorf("console/dist/%s: %v: run `make console` (go generate ./console) and commit console/dist", name, err)
			continue
		}
		if !bytes.Equal(committed, built[name]) {
			t.Errorf("console/dist/%s is stale against console/src (%d bytes committed, %d built): run `make console` (go generate ./console) and commit console/dist",
				name, len(committed), len(built[name]))
		}
	}
	// Nothing else in dist: a file left behind would be served.
	entries, err := fs.ReadDir(dist, "dist")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := built[e.Name()]; !ok {
			t.Errorf("console/dist/%s is not built from src: remove it", e.Name())
		}
	}
}

// TestDistIsSmall bounds the bundle: a console that grew past it pulled in something it
// should not (a framework, a second copy of a module). Not a size goal, a tripwire.
func TestDistIsSmall(t *testing.T) {
	t.Parallel()
	total := 0
	for _, name := range build.Files {
		b, err := fs.ReadFile(dist, path.Join("dist", name))
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
	}
	const max = 128 << 10
	if total > max {
		t.Errorf("console/dist is %d bytes, more than %d", total, max)
	}
}
