package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/syncbuf"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
)

// TestMCPStdio speaks JSON-RPC to `skillbox mcp` in-process, as a client would over its stdin and
// stdout: stdout carries the protocol and nothing else, and closing stdin ends the server.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	sess := startMCPStdio(t)
	send, next := sess.send, sess.next

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if init := next(); fmt.Sprint(init["result"].(map[string]any)["serverInfo"].(map[string]any)["name"]) != "skillbox" {
		t.Fatalf("initialize: %v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var names []string
	for _, tool := range next()["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	// The toolset and every bundled skill's tool, by name.
	want := append(toolset.Names(), bundledTools(t)...)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"skill_word_count","arguments":{"text":"a b a"}}}`)
	res := next()["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); sc["words"] != 3.0 || res["isError"] == true {
		t.Errorf("tools/call: %v", res)
	}
	// Arguments that are not even an object are the model's mistake: a tool error it can read.
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"skill_word_count","arguments":["a b a"]}}`)
	msg := next()
	res, _ = msg["result"].(map[string]any)
	if content, _ := res["content"].([]any); res["isError"] != true || len(content) != 1 ||
		!strings.HasPrefix(fmt.Sprint(content[0].(map[string]any)["text"]), "invalid_args: arguments must be a JSON object") {
		t.Errorf("tools/call with an array of arguments: %v", msg)
	}
	if stderr := sess.close(); stderr != "" {
		t.Errorf("stderr without -v: %q", stderr)
	}
}

// TestMCPToolsFlag checks that --tools picks what `skillbox mcp` offers, and that a value it
// does not know is a usage error naming the valid ones.
func TestMCPToolsFlag(t *testing.T) {
	t.Parallel()
	for flag, want := range map[string]string{
		"disclosure": strings.Join(toolset.Names(), ","),
		"skills":     strings.Join(slices.Sorted(slices.Values(bundledTools(t))), ","), // MCP lists tools by name
	} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			sess := startMCPStdio(t, "--tools", flag)
			sess.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
			sess.next()
			sess.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			sess.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			var names []string
			for _, tool := range sess.next()["result"].(map[string]any)["tools"].([]any) {
				names = append(names, tool.(map[string]any)["name"].(string))
			}
			if strings.Join(names, ",") != want {
				t.Errorf("--tools %s: tools %v, want %s", flag, names, want)
			}
			sess.close()
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		r := cli(t, "", "mcp", "--tools", "some")
		if r.code != exitUsage || !strings.Contains(r.stderr, "use all, skills or disclosure") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestMCPStdioBadLine sends `skillbox mcp` a line that is not JSON before its first message: it
// answers with a JSON-RPC parse error, warns on stderr, and serves the session that follows.
func TestMCPStdioBadLine(t *testing.T) {
	t.Parallel()
	sess := startMCPStdio(t)
	send, next := sess.send, sess.next

	send("Loading skills... done")
	msg := next()
	if rpcErr, _ := msg["error"].(map[string]any); rpcErr["code"] != -32700.0 || msg["id"] != nil {
		t.Fatalf("a line that is not JSON: %v, want error -32700 with id null", msg)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if init := next(); init["id"] != 1.0 || init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"skill_word_count","arguments":{"text":"a b a"}}}`)
	res, _ := next()["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); sc["words"] != 3.0 || res["isError"] == true {
		t.Errorf("tools/call after a bad line: %v", res)
	}
	if got := sess.close(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "line=1") {
		t.Errorf("stderr %q: want a warning naming the refused line", got)
	}
}

// mcpStdio is `skillbox mcp` run in-process over pipes, as a client drives it over its stdin and
// stdout.
type mcpStdio struct {
	t      *testing.T
	inW    *io.PipeWriter
	lines  *bufio.Scanner
	stderr *syncbuf.Buffer
	code   chan int
}

func startMCPStdio(t *testing.T, flags ...string) *mcpStdio {
	t.Helper()
	// mcp checks every skill in the background, and the tests call word-count.
	warm(bundledModules...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m := &mcpStdio{t: t, inW: inW, lines: bufio.NewScanner(outR), stderr: &syncbuf.Buffer{}, code: make(chan int, 1)}
	m.lines.Buffer(make([]byte, 1<<20), 1<<20)
	go func() {
		m.code <- runCLI(append([]string{"--cache-dir", cacheDir, "--skills", bundled, "mcp"}, flags...), inR, outW, m.stderr)
		outW.Close()
	}()
	return m
}

// send writes one line to the server's stdin.
func (m *mcpStdio) send(msg string) {
	m.t.Helper()
	if _, err := io.WriteString(m.inW, msg+"\n"); err != nil {
		m.t.Fatalf("writing to stdin: %v; stderr:\n%s", err, m.stderr.String())
	}
}

// next returns the next response; every line on stdout must be a JSON-RPC message.
func (m *mcpStdio) next() map[string]any {
	m.t.Helper()
	for m.lines.Scan() {
		var msg map[string]any
		if err := json.Unmarshal(m.lines.Bytes(), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			m.t.Fatalf("stdout carries something other than JSON-RPC: %q", m.lines.Text())
		}
		if _, isResponse := msg["id"]; isResponse {
			return msg
		}
	}
	m.t.Fatalf("stdout ended: %v; stderr:\n%s", m.lines.Err(), m.stderr.String())
	return nil
}

// close closes stdin, checks that the server ends with exit 0, and returns its stderr.
func (m *mcpStdio) close() string {
	m.t.Helper()
	m.inW.Close()
	select {
	case c := <-m.code:
		if c != exitOK {
			m.t.Errorf("exit %d; stderr:\n%s", c, m.stderr.String())
		}
	case <-time.After(hangTimeout):
		m.t.Fatalf("mcp did not end within %v of its stdin closing", hangTimeout)
	}
	return m.stderr.String()
}

// clientDir is the official TypeScript SDK's test client.
const clientDir = "../../mcpserver/testdata/client"

// TestMCPOfficialClient drives the MCP server with the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in clientDir's package-lock.json): `skillbox mcp` over
// stdio, and mcpserver.Handler mounted at /mcp over streamable HTTP. client.mjs checks tools/list,
// a successful call's structuredContent, tool errors, log notifications and resources/read.
func TestMCPOfficialClient(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node")
	npm := requireTool(t, "npm")
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		ci := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		ci.Dir = clientDir
		if out, err := ci.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", clientDir, err, out)
		}
	}
	bin := binary(t)
	skills, err := filepath.Abs(bundled)
	if err != nil {
		t.Fatal(err)
	}
	warm(bundledModules...) // mcp checks every skill in the background

	client := func(t *testing.T, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*hangTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
		cmd.Dir = clientDir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var summary struct{ Failures []string }
		if jerr := json.Unmarshal(stdout.Bytes(), &summary); jerr != nil || err != nil || len(summary.Failures) > 0 {
			t.Fatalf("node client.mjs %s: %v\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(args, " "), errors.Join(err, jerr), stdout.String(), stderr.String())
		}
		t.Logf("node client.mjs %s:\n%s", args[0], stdout.String())
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		client(t, "stdio", bin, "mcp", "--skills", skills, "--cache-dir", cacheDir, "--data-dir", testDataDir(t)) // the SDK passes the child a bare environment
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{skills}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(context.Background())
		srv := mcpserver.New(rt, mcpserver.Options{})
		defer srv.Close()
		mux := http.NewServeMux()
		mux.Handle("/mcp", srv.Handler())
		hs := httptest.NewServer(mux)
		defer hs.Close()
		client(t, "http", hs.URL+"/mcp")
	})
	// The HTTP API's /mcp, behind its Host, cross-site and content-type checks, as skillbox
	// serve runs it: the official client is not a browser and passes them.
	t.Run("http through the API server", func(t *testing.T) {
		t.Parallel()
		rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{skills}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(context.Background())
		srv, err := server.New(rt, server.Options{CORSOrigins: []string{"http://localhost:3000"}})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		client(t, "http", hs.URL+"/mcp")
	})
}

// TestMCPStopsQuietly shuts `skillbox mcp` down as MCP clients do, by closing its stdin or,
// when that is not enough or not tried, with SIGTERM: either way it exits 0 and prints
// nothing on stderr, so a client's log shows no error for a clean stop.
func TestMCPStopsQuietly(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	for _, how := range []string{"close stdin", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, "--cache-dir", cacheDir, "--skills", bundled, "mcp")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr syncbuf.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`+"\n")
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"serverInfo"`) {
				t.Fatalf("initialize: %q %v; stderr %s", line, err, stderr.String())
			}
			if how == "SIGTERM" {
				err = cmd.Process.Signal(syscall.SIGTERM)
			} else {
				err = stdin.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v", err)
			}
			if s := stderr.String(); s != "" {
				t.Errorf("stderr on a clean stop: %q", s)
			}
		})
	}
}
