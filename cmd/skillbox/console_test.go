package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestServeConsoleFlag: serve offers the console unless --no-console, parsed with serve's own
// flags (the server mounts what env.console returns at /console/; console/server_test.go
// tests the mounting).
func TestServeConsoleFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--no-console"}, false},
		{[]string{"--no-console=false"}, true},
	} {
		e := &env{}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		cmdServe.flags(fs, e)
		e.globalFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		h := e.console()
		if (h != nil) != c.want {
			t.Errorf("serve %v: console %v, want %v", c.args, h != nil, c.want)
			continue
		}
		if h == nil {
			continue
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != 200 || !strings.Contains(w.Body.String(), `src="app.js"`) {
			t.Errorf("serve %v: the console's page: %d %.100s", c.args, w.Code, w.Body.String())
		}
	}
	if !strings.Contains(cmdServe.usage, "--no-console") {
		t.Errorf("serve's usage does not name --no-console: %s", cmdServe.usage)
	}
}
