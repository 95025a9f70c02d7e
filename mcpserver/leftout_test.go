package mcpserver_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/syncbuf"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMCPToolLeftOut: a skill whose tool name OpenAI and Anthropic refuse (69 characters: MCP
// clients built on their SDKs would fail every request) is not listed, and the server logs
// why; the other tools are listed, and run_skill still runs it.
func TestMCPToolLeftOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "skills")
	longID := "l" + strings.Repeat("o", 62)
	fixture(t, dir, "echo", manifest("echo", `"parameters":{"type":"object"}`), "echo")
	fixture(t, dir, longID, manifest(longID, `"parameters":{"type":"object"}`), "echo")
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	var logs syncbuf.Buffer
	srv := mcpserver.New(rt, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(srv.Close)
	cs := (&env{dir: dir, rt: rt, srv: srv}).connect(t, legacyProtocol, nil)
	res, err := cs.ListTools(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != strings.Join(toolset.Names(), " ")+" skill_echo" {
		t.Errorf("tools %v", names)
	}
	if l := logs.String(); !strings.Contains(l, "left out of the list") || !strings.Contains(l, "skill="+longID) || !strings.Contains(l, "rule=tool-name") {
		t.Errorf("log: %s", l)
	}
	out := call(t, cs, "run_skill", map[string]any{"skill": longID, "args": map[string]any{"x": 1}})
	if out.IsError || !strings.Contains(text(t, out), `"x":1`) {
		t.Errorf("run_skill: %s", text(t, out))
	}
}
