package console

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/console/build"
)

// TestUnitJS runs the TypeScript unit tests (src/test/unit.ts: the event-stream parser, the
// Markdown reader against markup and unsafe links) under Node, bundled as the app is. Without
// node on PATH it skips, or fails with SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI).
func TestUnitJS(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("no node on PATH, and SKILLBOX_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("no node on PATH: the console's unit tests need Node.js")
	}
	js, err := build.UnitTests("src")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "unit.cjs")
	if err := os.WriteFile(script, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("node %s: %v\n%s", script, err, out)
	}
}
