package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// toolchainsRequired reports whether SKILLBOX_REQUIRE_TOOLCHAINS asks that no test skip for a
// missing tool. CI sets it to 1: there every language and client must run.
func toolchainsRequired() bool {
	v := os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS")
	return v != "" && v != "0"
}

// skipMissing skips t for err, which names a missing tool, or fails it when toolchains are
// required.
func skipMissing(t *testing.T, err error) {
	t.Helper()
	if !toolchainsRequired() {
		t.Skipf("skipped: %v", err)
	}
	t.Fatalf("%v (SKILLBOX_REQUIRE_TOOLCHAINS is set, so a missing tool is a failure)", err)
}

// requireTool returns the path of tool on PATH, or skips the test when it is missing (see
// skipMissing).
func requireTool(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		skipMissing(t, fmt.Errorf("%s is not installed: %w", tool, err))
	}
	return p
}
