package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
)

// askEnv serves a skill, "asker", that fetches a loopback server its manifest does not ask for,
// under a policy that lets a person allow that host.
func askEnv(t testing.TB) (*mcpserver.Server, *runtime.Runtime, string) {
	t.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "asker", "skill.json"), manifest("asker", `"parameters":{"url":{"type":"string","required":true}}`))
	writeFile(t, filepath.Join(dir, "asker", "execute.js"), `export async function execute(args, ctx) {
  try { return {status: (await ctx.fetch(args.url)).status}; } catch (e) { return {error: e.name}; }
}`)
	p := &policy.Policy{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Ask: policy.Ask{Network: []string{"127.0.0.1"}, MaxGrant: 2 * time.Hour}}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Policy: p,
		Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	srv := mcpserver.New(rt, mcpserver.Options{})
	t.Cleanup(srv.Close)
	return srv, rt, upstream.URL
}

// elicitor is a person behind an MCP client: it notes each elicitation and answers it.
type elicitor struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer *mcp.ElicitResult
}

func (e *elicitor) handle(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, r.Params)
	return e.answer, nil
}

func (e *elicitor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.asked)
}

// Over MCP, a run's permission request is an elicitation to the client that made the call: a
// form of allow once, allow for a time, or deny. Its answer decides the call; a client without
// elicitation is never asked, and the call is refused as without asking.
func TestMCPPermissionRequestIsAnElicitation(t *testing.T) {
	t.Parallel()
	// A client of the stateless revision (the newest) is asked by an input-required result
	// and calls again with the answer (multi round-trip requests); an older one is sent an
	// elicitation while its call waits. Either way, the client's elicitation handler answers.
	for _, protocol := range []string{legacyProtocol, newProtocol} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			elicitations(t, protocol)
		})
	}
}

func elicitations(t *testing.T, protocol string) {
	srv, rt, upstream := askEnv(t)
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.MCP().Connect(context.Background(), srv.Transport(st), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "skillbox-test", Version: "1"}, opts).Connect(context.Background(), ct,
			&mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	cs := connect(nil) // a client without elicitation: nobody is asked
	if got := text(t, call(t, cs, "skill_asker", map[string]any{"url": upstream})); got != `{"error":"PermissionDenied"}` {
		t.Errorf("a client without elicitation: %s", got)
	}
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
		asked  int // elicitations: an allowance for a time asks no more
	}{
		{"declined", &mcp.ElicitResult{Action: "decline"}, `{"error":"PermissionDenied"}`, 1},
		{"dismissed", &mcp.ElicitResult{Action: "cancel"}, `{"error":"PermissionDenied"}`, 1},
		{"denied", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, `{"error":"PermissionDenied"}`, 1},
		{"allowed once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, `{"status":204}`, 1},
		{"allowed for a time", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "for", "minutes": 30}}, `{"status":204}`, 1},
		{"then granted", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, `{"status":204}`, 0},
	} {
		person := &elicitor{answer: tc.answer}
		cs := connect(&mcp.ClientOptions{ElicitationHandler: person.handle})
		res := call(t, cs, "skill_asker", map[string]any{"url": upstream})
		if got := text(t, res); got != tc.want || person.count() != tc.asked {
			t.Fatalf("%s: result %s after %d elicitations, want %s after %d", tc.name, got, person.count(), tc.want, tc.asked)
		}
		if tc.asked == 0 {
			continue
		}
		p := person.asked[0]
		if !strings.Contains(p.Message, `"asker" asks to fetch from 127.0.0.1`) || p.Meta["skillbox/runId"] != res.Meta[mcpserver.MetaRunID] {
			t.Errorf("%s: elicitation %q, meta %v, result meta %v", tc.name, p.Message, p.Meta, res.Meta)
		}
	}
	if n := len(rt.PermissionRequests(access.Principal{Role: access.RoleAdmin})); n != 0 {
		t.Errorf("%d requests left waiting", n)
	}
	// A state no run was parked under resumes nothing, whoever sends it.
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "skill_asker", Arguments: map[string]any{"url": upstream},
		RequestState: "park_00000000000000000000000000000000"})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "requestState names no run") {
		t.Errorf("a forged state: %v, %+v", err, res)
	}
}
