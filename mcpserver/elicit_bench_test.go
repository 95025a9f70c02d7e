package mcpserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/mcpserver"
)

// BenchmarkPermissionPrompt measures how long a person waits for the question: from the moment
// the runtime takes up a refused call (the request's asked_at) to the moment the client's
// elicitation handler is called, over both kinds of client (an elicitation mid-call, and an
// input-required result the client's SDK calls again for), in-memory, interleaved with a call
// of the same skill that asks nobody (its host is not askable). Reported: "<protocol>-prompt-ms",
// the median wait, and "x-plain", how much longer the allowed call takes than the refused one.
//
//	go test -run '^$' -bench PermissionPrompt -benchtime 200x ./mcpserver/
func BenchmarkPermissionPrompt(b *testing.B) {
	srv, rt, upstream := askEnv(b)
	var mu sync.Mutex
	var prompted time.Time
	connect := func(protocol string, elicit bool) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.MCP().Connect(context.Background(), srv.Transport(st), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Close() })
		opts := &mcp.ClientOptions{}
		if elicit {
			opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				prompted = time.Now()
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
			}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, opts).Connect(context.Background(), ct,
			&mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	admin := access.Principal{Role: access.RoleAdmin, Key: "bench"}
	waits := map[string][]float64{}
	ask := func(name string, cs *mcp.ClientSession) func() {
		return func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_asker", Arguments: map[string]any{"url": upstream}})
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %+v", name, err, res)
			}
			id, _ := res.Meta[mcpserver.MetaRunID].(string)
			rec, ok := rt.RunRecord(admin, id)
			if !ok || len(rec.Result.Usage.Asked) != 1 {
				b.Fatalf("%s: no record of the request of run %s", name, id)
			}
			mu.Lock()
			waits[name] = append(waits[name], float64(prompted.Sub(rec.Result.Usage.Asked[0].Request.AskedAt).Microseconds())/1000)
			mu.Unlock()
		}
	}
	plain := connect(legacyProtocol, false)
	p50 := interleave.Run(b,
		interleave.Contender{Name: "legacy", F: ask("legacy", connect(legacyProtocol, true))},
		interleave.Contender{Name: "stateless", F: ask("stateless", connect(newProtocol, true))},
		interleave.Contender{Name: "plain", F: func() {
			// A host the policy does not make askable: refused at once, nobody asked.
			if _, err := plain.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_asker", Arguments: map[string]any{"url": "http://127.0.0.2:1/"}}); err != nil {
				b.Fatal(err)
			}
		}})
	mu.Lock()
	defer mu.Unlock()
	for name := range waits {
		waits[name] = waits[name][2:] // interleave's two warm-up calls
	}
	interleave.Medians(b, "prompt-ms", waits)
	b.ReportMetric(p50["legacy"]/p50["plain"], "x-plain")
}
