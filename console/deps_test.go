package console

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists what pkg links (go list -deps), skipping when there is no go command.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot list the packages' imports")
	}
	out, err := exec.Command(gocmd, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLinksNothingButTheStandardLibrary: the console's handler is embedded files and net/http;
// a program that mounts it must not link the bundler that built them, or any of Skillbox.
func TestLinksNothingButTheStandardLibrary(t *testing.T) {
	t.Parallel()
	for _, d := range deps(t, "github.com/skillbox-dev/skillbox/console") {
		if d != "github.com/skillbox-dev/skillbox/console" {
			t.Errorf("package console links %s", d)
		}
	}
}

// TestServerDoesNotLinkTheConsole: the server takes the console as an http.Handler, so a
// program that mounts the API alone carries none of it.
func TestServerDoesNotLinkTheConsole(t *testing.T) {
	t.Parallel()
	for _, d := range deps(t, "github.com/skillbox-dev/skillbox/server") {
		if strings.HasPrefix(d, "github.com/skillbox-dev/skillbox/console") {
			t.Errorf("package server links %s: take it as server.Options.Console instead", d)
		}
	}
}
