package mcpserver_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMCPCallNullMeansOmitted: a tool call whose optional arguments are null (as a client built
// on OpenAI's strict mode forwards them) runs with their defaults; a null the schema accepts
// reaches the module.
func TestMCPCallNullMeansOmitted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "skills")
	fixture(t, dir, "echo", manifest("echo", `"parameters":{"type":"object",
		"properties":{"text":{"type":"string"},"top":{"type":"integer","default":5},"note":{"type":["string","null"]}},
		"required":["text"],"additionalProperties":false}`), "echo")
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	srv := mcpserver.New(rt, mcpserver.Options{})
	t.Cleanup(srv.Close)
	cs := (&env{dir: dir, rt: rt, srv: srv}).connect(t, legacyProtocol, nil)
	res := call(t, cs, "skill_echo", map[string]any{"text": "a", "top": nil, "note": nil})
	if got := text(t, res); res.IsError || got != `{"note":null,"text":"a","top":5}` {
		t.Errorf("isError %v, text %s; want the defaults in place of the nulls", res.IsError, got)
	}
}
