package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// minNode is the oldest Node.js every client runs on: the Inspector 2.12 declares
// engines.node >=22.19.0. package.json pins the node package, which installs one into
// node_modules, so a machine with an older Node (Debian's is 20) needs nothing else.
var minNode = [3]int{22, 19, 0}

// toolchainsRequired reports whether SKILLBOX_REQUIRE_TOOLCHAINS asks that no test skip for a
// missing tool. CI sets it to 1: there every client must run.
func toolchainsRequired() bool {
	v := os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS")
	return v != "" && v != "0"
}

// skipMissing skips t for err, which names what is missing, or fails it when toolchains are
// required.
func skipMissing(t *testing.T, err error) {
	t.Helper()
	if !toolchainsRequired() {
		t.Skipf("skipped: %v", err)
	}
	t.Fatalf("%v (SKILLBOX_REQUIRE_TOOLCHAINS is set, so a missing tool is a failure)", err)
}

// installClients runs `npm ci` in this directory when node_modules is missing, as a developer
// would on a fresh checkout (CI runs it before the tests; see .ci/run). Without npm, or when
// the registry cannot be reached, the clients are missing: see skipMissing.
func installClients(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", ".package-lock.json")); err == nil {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipMissing(t, fmt.Errorf("the clients are not installed in interop/node_modules and npm is not on PATH to install them: %w", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
	if out, err := cmd.CombinedOutput(); err != nil {
		skipMissing(t, fmt.Errorf("npm ci in interop: %w\n%s", err, out))
	}
}

// node returns a Node.js of at least minNode and its version: the one the pinned node package
// installed in node_modules, else the one on PATH.
func node(t *testing.T) (path, version string) {
	t.Helper()
	var tried []string
	candidates := []string{filepath.Join("node_modules", ".bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(abs, "--version").Output()
		if err != nil {
			continue
		}
		v := string(regexp.MustCompile(`v[0-9.]+`).Find(out))
		if atLeast(v, minNode) {
			return abs, v
		}
		tried = append(tried, c+" is "+v)
	}
	skipMissing(t, fmt.Errorf("no Node.js >= %d.%d.%d (tried %v): run npm ci in interop, which installs it as the node package", minNode[0], minNode[1], minNode[2], tried))
	return "", ""
}

// atLeast reports whether version ("v22.23.3") is min or later.
func atLeast(version string, min [3]int) bool {
	var got [3]int
	parts := regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`).FindStringSubmatch(version)
	if parts == nil {
		return false
	}
	for i := range got {
		got[i], _ = strconv.Atoi(parts[i+1])
		if got[i] != min[i] {
			return got[i] > min[i]
		}
	}
	return true
}

// pinned returns the exact versions package.json asks for, by package name.
func pinned(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	return pkg.Dependencies
}
