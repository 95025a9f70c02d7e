package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewGoUnitTest checks that a scaffolded Go or TinyGo skill comes with a unit test that
// passes: `go test` in its src/ runs the greeting handler natively on skillboxtest's
// scripted host, with no WebAssembly toolchain involved.
func TestNewGoUnitTest(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"go", "tinygo"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			skills := filepath.Join(t.TempDir(), "skills") // no checkout above: the skill has its own SDK
			id := "unit-" + lang
			if r := cli(t, "", "--skills", skills, "new", id, "--lang", lang); r.code != exitOK {
				t.Fatalf("new: %s", r)
			}
			cmd := exec.Command("go", "test", "-count=1", "-v", "./...")
			cmd.Dir = filepath.Join(skills, id, "src")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestGreet") {
				t.Fatalf("go test in the scaffold: %v\n%s", err, out)
			}
		})
	}
}
