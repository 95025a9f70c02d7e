package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
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
	if status, _ := send(roleKeys[RoleViewer]); status != http.StatusForbidden {
		t.Errorf("viewer: %d", status)
	}
	status, body := send(roleKeys[RoleRunner])
	if status != http.StatusOK || !strings.Contains(body, `"serverInfo"`) || !strings.Contains(body, `"tools"`) {
		t.Errorf("runner: %d %s", status, body)
	}
}
