package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/syncbuf"
	"github.com/skillbox-dev/skillbox/mcpserver"
)

// stdioClient speaks raw lines to Server.RunStdio over pipes, as a client on the other end of
// skillbox mcp's stdin and stdout would.
type stdioClient struct {
	t       *testing.T
	ctx     context.Context
	in      *io.PipeWriter
	replies chan map[string]any // the responses the server writes, in order; closed at its end
	stop    chan struct{}
	done    chan struct{} // closed when RunStdio has returned runErr
	runErr  error
}

func startStdio(t *testing.T, srv *mcpserver.Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{
		t: t, ctx: testContext(t), in: inW,
		replies: make(chan map[string]any, 16),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go func() {
		c.runErr = srv.RunStdio(context.Background(), inR, outW)
		close(c.done)
		outW.Close()
	}()
	// Read stdout all along, as a client does: the server may answer while a line is still
	// being written to it.
	go func() {
		defer close(c.replies)
		lines := bufio.NewReader(outR)
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				return
			}
			var msg map[string]any
			if err := json.Unmarshal(line, &msg); err != nil || msg["jsonrpc"] != "2.0" {
				msg = map[string]any{"not JSON-RPC": string(line)}
			}
			if _, ok := msg["method"]; ok {
				continue // a notification or a request of the server's: not what the tests await
			}
			select {
			case c.replies <- msg:
			case <-c.stop:
				_, _ = io.Copy(io.Discard, outR)
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(c.stop)
		inW.Close()
		select {
		case <-c.done:
		case <-c.ctx.Done():
			t.Error("RunStdio did not end when its input closed")
		}
	})
	return c
}

// send writes line and a newline in one write.
func (c *stdioClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// next returns the next response.
func (c *stdioClient) next() map[string]any {
	c.t.Helper()
	select {
	case msg, ok := <-c.replies:
		if !ok {
			<-c.done
			c.t.Fatalf("the server ended its output (RunStdio: %v)", c.runErr)
		}
		if bad, ok := msg["not JSON-RPC"]; ok {
			c.t.Fatalf("the server wrote a line that is not JSON-RPC: %q", bad)
		}
		return msg
	case <-c.ctx.Done():
		c.t.Fatal("no response from the server")
	}
	return nil
}

// expectError reads the next response and checks it is the JSON-RPC error code for id (nil:
// null), with a message containing want.
func (c *stdioClient) expectError(code int, id any, want string) {
	c.t.Helper()
	msg := c.next()
	rpcErr, _ := msg["error"].(map[string]any)
	gotID, hasID := msg["id"]
	if rpcErr == nil || rpcErr["code"] != float64(code) || !hasID || gotID != id {
		c.t.Fatalf("reply %v: want error %d with id %v", msg, code, id)
	}
	if m, _ := rpcErr["message"].(string); !strings.Contains(m, want) {
		c.t.Errorf("error message %q does not say %q", m, want)
	}
}

// session is a client's normal start and use: initialize, tools/list, tools/call of echo. Its
// first response must be initialize's: nothing sent before may have been answered but what the
// caller read.
func (c *stdioClient) session() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	init := c.next()
	if init["id"] != 1.0 || fmt.Sprint(init["result"].(map[string]any)["serverInfo"].(map[string]any)["name"]) != "skillbox" {
		c.t.Fatalf("initialize: %v", init)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list := c.next()
	var names []string
	for _, tool := range list["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if list["id"] != 2.0 || !strings.Contains(strings.Join(names, ","), "skill_echo") {
		c.t.Fatalf("tools/list: %v", list)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"skill_echo","arguments":{"text":"hi"}}}`)
	res := c.next()
	result, _ := res["result"].(map[string]any)
	if sc, _ := result["structuredContent"].(map[string]any); res["id"] != 3.0 || result["isError"] == true || sc["text"] != "hi" {
		c.t.Fatalf("tools/call: %v", res)
	}
}

// end closes the server's input and returns RunStdio's result.
func (c *stdioClient) end() error {
	c.t.Helper()
	c.in.Close()
	select {
	case <-c.done:
		return c.runErr
	case <-c.ctx.Done():
		c.t.Fatal("RunStdio did not end when its input closed")
	}
	return nil
}

// TestRunStdioBadLines sends lines that are no JSON-RPC message, then uses the session as a
// client would: each is answered with the JSON-RPC error it calls for, and the session goes on.
func TestRunStdioBadLines(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	e := newEnv(t, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	type reply struct {
		code int
		id   any // nil: null
		want string
	}
	const parseError, invalidRequest = -32700, -32600
	cases := []struct {
		name  string
		lines []string
		want  []reply
	}{
		{"not JSON", []string{"hello, world"}, []reply{{parseError, nil, "line 1: not JSON"}}},
		{"a stray print before a message", []string{"starting up...", `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
			[]reply{{parseError, nil, "not JSON"}}},
		{"truncated", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"`}, []reply{{parseError, nil, "not JSON"}}},
		{"two values on a line", []string{`{"jsonrpc":"2.0","id":8,"method":"ping"} {"jsonrpc":"2.0","id":9,"method":"ping"}`},
			[]reply{{parseError, nil, "not JSON"}}},
		{"binary with NULs", []string{"\x00\x01\x02\xff\x00{\x00}"}, []reply{{parseError, nil, ""}}},
		{"a NUL after a message", []string{`{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\x00"}, []reply{{parseError, nil, "not JSON"}}},
		{"invalid UTF-8", []string{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + "\xc3\x28" + `"}}`},
			[]reply{{parseError, nil, "not UTF-8"}}},
		{"a number", []string{"42"}, []reply{{invalidRequest, nil, "not a number"}}},
		{"a string", []string{`"ping"`}, []reply{{invalidRequest, nil, "not a string"}}},
		{"null", []string{"null"}, []reply{{invalidRequest, nil, "not null"}}},
		{"true", []string{"true"}, []reply{{invalidRequest, nil, "not a boolean"}}},
		{"an object that is no message", []string{`{"foo":1}`}, []reply{{invalidRequest, nil, "version"}}},
		{"no version", []string{`{"id":9,"method":"ping"}`}, []reply{{invalidRequest, 9.0, "version"}}},
		{"version 1.0", []string{`{"jsonrpc":"1.0","id":"a","method":"ping"}`}, []reply{{invalidRequest, "a", "version"}}},
		{"method not a string", []string{`{"jsonrpc":"2.0","id":4,"method":5}`}, []reply{{invalidRequest, 4.0, "invalid request"}}},
		{"id an object", []string{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`}, []reply{{invalidRequest, nil, "invalid request"}}},
		{"id a fraction", []string{`{"jsonrpc":"1.0","id":1.5,"method":"ping"}`}, []reply{{invalidRequest, nil, "version"}}},
		{"a response without an id", []string{`{"jsonrpc":"2.0","result":{}}`}, []reply{{invalidRequest, nil, "invalid request"}}},
		{"an empty batch", []string{"[]"}, []reply{{invalidRequest, nil, "batches are not supported"}}},
		{"a batch", []string{`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]`},
			[]reply{{invalidRequest, nil, "batches are not supported"}}},
		{"blank lines", []string{"", "   ", "\t\r", "\r"}, nil},
		{"several in a row", []string{"oops", "", "42", "\x00"},
			[]reply{{parseError, nil, "line 1"}, {invalidRequest, nil, "line 3"}, {parseError, nil, "line 4"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startStdio(t, e.srv)
			for _, line := range tc.lines {
				c.send(line)
			}
			for _, r := range tc.want {
				c.expectError(r.code, r.id, r.want)
			}
			if tc.name == "a stray print before a message" {
				if msg := c.next(); msg["id"] != 7.0 || msg["result"] == nil {
					t.Fatalf("ping after a stray print: %v", msg)
				}
			}
			c.session()
			if err := c.end(); err != nil {
				t.Errorf("RunStdio: %v, want nil at the end of its input", err)
			}
		})
	}
	t.Run("logged", func(t *testing.T) {
		c := startStdio(t, e.srv)
		c.send("garbage-to-log")
		c.expectError(parseError, nil, "not JSON")
		_ = c.end()
		if got := log.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "refused a line") {
			t.Errorf("log %q: want a warning for each refused line", got)
		}
	})
}

// TestRunStdioLongLine crosses the bound on a message (Server.MaxMessageBytes) with a message written in chunks, as a pipe
// delivers it: the line is refused as soon as it crosses the bound, the rest of it is skipped,
// and the session goes on. A line of exactly the bound is a message like any other.
func TestRunStdioLongLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	c := startStdio(t, e.srv)
	bound := int(e.srv.MaxMessageBytes())
	// ping with padding, id, to total bytes before its newline.
	ping := func(id, total int) []byte {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"`, id)
		const tail = `"}}`
		return []byte(head + strings.Repeat("a", total-len(head)-len(tail)) + tail)
	}
	writeChunks := func(data []byte) {
		t.Helper()
		for len(data) > 0 {
			n := min(len(data), 64<<10)
			if _, err := c.in.Write(data[:n]); err != nil {
				t.Fatal(err)
			}
			data = data[n:]
		}
	}
	writeChunks(append(ping(99, 2*bound), '\n'))
	c.expectError(-32600, nil, fmt.Sprintf("longer than %d bytes", bound))
	c.session()

	writeChunks(append(ping(98, bound+1), '\n'))
	c.expectError(-32600, nil, "runs.maxArgsBytes")
	writeChunks(append(ping(97, bound), '\n'))
	if msg := c.next(); msg["id"] != 97.0 || msg["result"] == nil {
		t.Fatalf("a line of exactly the bound: %v, want the ping's result", msg)
	}
	if err := c.end(); err != nil {
		t.Errorf("RunStdio: %v", err)
	}
}
