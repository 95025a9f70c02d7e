package server

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// /mcp speaks MCP's streamable HTTP behind the same keys: a session needs the runner role.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	env := watEnv(t, keysOptions(), 100)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	send := func(key string) (int, string) {
		req, err := http.NewRequest("POST", env.ts.URL+"/mcp", strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, _ := send(""); status != http.StatusUnauthorized {
		t.Errorf("no key: %d", status)
	}
	if status, _ := send(roleKeys[access.RoleViewer]); status != http.StatusForbidden {
		t.Errorf("viewer: %d", status)
	}
	status, body := send(roleKeys[access.RoleRunner])
	if status != http.StatusOK || !strings.Contains(body, `"serverInfo"`) || !strings.Contains(body, `"tools"`) {
		t.Errorf("runner: %d %s", status, body)
	}
}

// keyTransport sends an API key with every request, as an MCP client configured with a header.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// Both generations of MCP are served at /mcp behind the keys: the stateless 2026-07-28 revision,
// and the sessions of 2025-11-25. Either way, a remote client's load_skill names no host path.
func TestMCPEndpointProtocols(t *testing.T) {
	t.Parallel()
	env := newEnv(t, keysOptions(), "../skills")
	abs, _ := filepath.Abs("../skills")
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ts.URL + "/mcp",
				HTTPClient: &http.Client{Transport: keyTransport{roleKeys[access.RoleRunner]}}}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != protocol {
				t.Errorf("negotiated %s, want %s", v, protocol)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "load_skill", Arguments: map[string]any{"name": "hello"}})
			if err != nil || res.IsError {
				t.Fatalf("load_skill: %v %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "skill://hello/") || strings.Contains(text, abs) {
				t.Errorf("load_skill over HTTP: %q", text)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_word_count", Arguments: map[string]any{"text": "a b"}})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"words":2`) {
				t.Fatalf("skill_word_count: %v %+v", err, res)
			}
			// The run is recorded as the key's, as an HTTP run is.
			id, _ := res.Meta[mcpserver.MetaRunID].(string)
			rec, ok := env.rt.RunRecord(access.Principal{Key: "ops", Role: access.RoleAdmin}, id)
			if !ok || rec.Face != run.FaceMCP || rec.Caller != "runner-client" {
				t.Errorf("run %q over MCP recorded as face %q, caller %q (found %v); want mcp, runner-client", id, rec.Face, rec.Caller, ok)
			}
		})
	}
}

// MCP over HTTP reads a request within the runtime's bound on arguments (and MCP's envelope),
// as every face does, not the SDK's own 4 MiB: a larger body is 413 before it is held.
func TestMCPBodyIsBoundedByTheArgsBound(t *testing.T) {
	t.Parallel()
	env := newEnvRuntime(t, keysOptions(), runtime.Config{MaxArgsBytes: 64}, t.TempDir())
	bound := env.srv.def.own.mcp.MaxMessageBytes()
	if bound != 64+64<<10 {
		t.Fatalf("the MCP face's bound is %d, want the runtime's 64 and the envelope", bound)
	}
	post := func(pad int) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("a", pad) + `"}}`
		req, err := http.NewRequest("POST", env.ts.URL+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("X-API-Key", roleKeys[access.RoleRunner])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if code := post(int(bound)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past the bound: %d, want 413", code)
	}
	if code := post(16); code == http.StatusRequestEntityTooLarge {
		t.Errorf("a small body: %d", code)
	}
}
