//lint:file-ignore SA1019 a queued call's log lines reach its client as log notifications, which MCP deprecates only from protocol 2026-07-28

package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
)

// A tool call over MCP that its node has no room for goes to the cluster's queue and runs on
// the node with room, as an HTTP run does: the client gets its result and its log lines as
// they happen, and the history has it once, of face mcp. A call no node has room for waits in
// the queue, read as queued on every node, and a client that gives up cancels it there.
func TestClusterMCPCallsGoThroughTheQueue(t *testing.T) {
	t.Parallel()
	a, b, s := clusterPair(t, nil, runtime.Admission{MaxRuns: 1})
	first := startAsyncStatus(t, a.ts.URL, endlessTicks, "running")
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	var mu sync.Mutex
	var logs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprint(r.Params.Data))
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_ticker", Arguments: map[string]any{"count": 2, "ms": 1}})
	if err != nil || res.IsError {
		t.Fatalf("a call its node has no room for: %v %+v", err, res)
	}
	id, _ := res.Meta[mcpserver.MetaRunID].(string)
	waitHistory(t, s, id, store.StatusSucceeded)
	if rec, _ := s.FindRun(ctx, id); rec.Face != string(run.FaceMCP) {
		t.Errorf("the queued call is recorded as face %q", rec.Face)
	}
	if st := b.rt.Stats(); !slices.ContainsFunc(st.Runs, func(c runtime.RunCount) bool {
		return c.Skill == "ticker" && c.Face == run.FaceMCP && c.Outcome == "success"
	}) {
		t.Errorf("the node with room did not run the call: %+v", st.Runs)
	}
	// The client handles notifications apart from the call's result: they may come after it.
	waitFor(hangGuard, func() bool { mu.Lock(); defer mu.Unlock(); return len(logs) >= 2 })
	mu.Lock()
	if len(logs) != 2 {
		t.Errorf("the call's log lines reached the client as %q, want 2", logs)
	}
	mu.Unlock()

	// b is taken too: a call waits in the queue, and its client gives up.
	second := startAsyncStatus(t, b.ts.URL, endlessTicks, "running|queued")
	waitHistory(t, s, second.RunID, store.StatusRunning)
	callCtx, giveUp := context.WithCancel(ctx)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "skill_ticker", Arguments: map[string]any{"count": 1, "ms": 1}})
		done <- res
	}()
	var waiting string
	if !waitFor(hangGuard, func() bool {
		page, err := s.ListRuns(ctx, store.Query{Status: store.StatusQueued})
		if err == nil && len(page.Runs) == 1 {
			waiting = page.Runs[0].ID
		}
		return waiting != ""
	}) {
		t.Fatal("the call never waited in the queue")
	}
	giveUp()
	<-done
	waitHistory(t, s, waiting, store.StatusFailed)
	if rec, _ := s.FindRun(ctx, waiting); rec.Error == nil || rec.Error.Kind != string(run.KindCanceled) {
		t.Fatalf("the call its client gave up on ended %+v", rec.Error)
	}
	for _, r := range []acceptedReply{first, second} {
		post(t, a.ts.URL+r.Links.Cancel, ``)
	}
}
