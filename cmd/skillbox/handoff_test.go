package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// run --server hands the run to a skillbox serve already running and prints what a local run
// prints: the same result on stdout, the same exit code, the same --json; a failed run, an
// unknown skill, a refused key and a server that is not there each say so, and a key is never
// sent in clear to another machine.
func TestRunHandsOffToAServer(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := t.TempDir()
	skillFixture(t, dir, "echoed", manifest("echoed", `"parameters":{"type":"object"}`), "echo")
	skillFixture(t, dir, "traps", manifest("traps", ""), "unreachable")
	open := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", dir)
	keys := filepath.Join(t.TempDir(), "keys.yaml")
	writeFile(t, keys, "- {name: op, key: operator-key-0123456789, role: admin}\n")
	keyed := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", dir, "--keys", keys)

	args := `{"b":[1,2],"a":"x"}`
	local := cli(t, "", "--skills", dir, "run", "echoed", "--args", args)
	handed := cli(t, "", "run", "echoed", "--server", open.base, "--args", args)
	if local.code != 0 || handed.code != 0 || handed.stdout != local.stdout {
		t.Fatalf("handed off:\n%s\nlocal:\n%s", handed, local)
	}
	asJSON := decode[map[string]any](t, cli(t, "", "--json", "run", "echoed", "--server", open.base+"/", "--args", args).stdout)
	if asJSON["success"] != true || !jsonEqual(asJSON["result"], map[string]any{"a": "x", "b": []any{1.0, 2.0}}) {
		t.Fatalf("--json: %v", asJSON)
	}

	refused := cli(t, "", "--json", "run", "nope", "--server", open.base)
	asJSON = decode[map[string]any](t, refused.stdout)
	if refused.code != exitFailed || asJSON["success"] != false || at(t, asJSON, "error", "kind") != "not_found" {
		t.Fatalf("--json of a skill the server does not have: %s", refused)
	}

	for _, c := range []struct {
		name    string
		env     []string
		args    []string
		code    int
		stderr  []string
		noStdio bool
	}{
		{name: "a run that fails", args: []string{"run", "traps", "--server", open.base}, code: exitFailed,
			stderr: []string{"run failed: trap"}},
		{name: "an unknown skill", args: []string{"run", "nope", "--server", open.base}, code: exitFailed,
			stderr: []string{"nope", "answered 404"}},
		{name: "no key", args: []string{"run", "echoed", "--server", keyed.base}, code: exitFailed,
			stderr: []string{"answered 401", "set SKILLBOX_API_KEY"}},
		{name: "not a URL", args: []string{"run", "echoed", "--server", "127.0.0.1:9"}, code: exitUsage,
			stderr: []string{"is not a server's URL"}},
		{name: "arguments that are not JSON", args: []string{"run", "echoed", "--server", open.base, "--args", "{"}, code: exitUsage,
			stderr: []string{"--args: not JSON"}},
		{name: "a server that is not there", args: []string{"run", "echoed", "--server", "http://" + closedAddr(t)}, code: exitFailed,
			stderr: []string{"cannot reach the server", "unset SKILLBOX_SERVER"}},
	} {
		r := cli(t, "", c.args...)
		for _, want := range c.stderr {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, want, r)
			}
		}
		if r.code != c.code || r.stdout != "" {
			t.Errorf("%s: exit %d, want %d, and nothing on stdout:\n%s", c.name, r.code, c.code, r)
		}
	}

	// Through the environment, with the key: the keyed server runs it. The same key is refused
	// for a server another machine would reach over plain http.
	r := binCLIEnv(t, []string{serverEnv + "=" + keyed.base, keyEnv + "=operator-key-0123456789"}, "", "run", "echoed", "--args", args)
	if r.code != 0 || r.stdout != local.stdout {
		t.Fatalf("through %s with %s:\n%s", serverEnv, keyEnv, r)
	}
	r = binCLIEnv(t, []string{serverEnv + "=http://192.0.2.1:8080", keyEnv + "=operator-key-0123456789"}, "", "run", "echoed")
	if r.code != exitUsage || !strings.Contains(r.stderr, "would go in clear to 192.0.2.1:8080") {
		t.Fatalf("a key over plain http to another machine:\n%s", r)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
