package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/mcpserver"
)

// A tool whose run leaves files lists them (name, size, media type, sha256), in a text block
// of their own and in _meta, never their bytes; its structured content stays the skill's
// result.
func TestToolResultListsArtifacts(t *testing.T) {
	e := newEnv(t, mcpserver.Options{})
	fixture(t, e.dir, "out", manifest("out", `"parameters":{"spec":{"type":"string","required":true}},"permissions":{"files":[{"path":"/output","access":"read-write"}]}`), "output")
	if err := e.rt.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	cs := e.connect(t, newProtocol, nil)
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "skill_out", Arguments: map[string]any{"spec": "a.txt*3;b/c.txt*2"}})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content %d blocks", len(res.Content))
	}
	text := res.Content[1].(*mcp.TextContent).Text
	for _, want := range []string{"files left by run run_", "- a.txt (3 bytes, text/plain; charset=utf-8, sha256 ", "- b/c.txt (2 bytes"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
	if strings.Contains(text, "xxx") {
		t.Errorf("the bytes are inline: %q", text)
	}
	meta, _ := json.Marshal(res.Meta[mcpserver.MetaArtifacts])
	if !strings.Contains(string(meta), `"name":"b/c.txt","sha256":"5dde896887f6754c9b15bfe3a441ae4806df2fde94001311e08bf110622e0bbe","size":2`) {
		t.Errorf("_meta artifacts %s", meta)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"result":"S00"}` {
		t.Errorf("structured content %s", sc)
	}
}
