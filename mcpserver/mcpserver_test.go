//lint:file-ignore SA1019 the log notifications MCP deprecates from protocol 2026-07-28 are tested here

package mcpserver_test

import (
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/mcpserver"
)

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content: %d items, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content: %T, want text", res.Content[0])
	}
	return tc.Text
}

// waitFor polls cond until it holds; the 2 minutes it allows only guard against a hang.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func TestMCPListTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	for _, protocol := range []string{legacyProtocol, newProtocol} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			cs := e.connect(t, protocol, nil)
			res, err := cs.ListTools(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			var names []string
			for _, tool := range res.Tools {
				byName[tool.Name] = tool
				names = append(names, tool.Name)
			}
			// The toolset, then the skills' tools by name: the fixtures' and every bundled one's.
			want := append([]string{"skill_echo", "skill_mismatch", "skill_number", "skill_sleep"}, bundledTools(t)...)
			slices.Sort(want)
			want = append(toolset.Names(), want...)
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v (instruction skills are no tools: the toolset reaches them)", names, want)
			}
			wc := byName["skill_word_count"]
			if wc.Title != "Word count" || !strings.Contains(wc.Description, "Counts the words") {
				t.Errorf("word-count: title %q, description %q", wc.Title, wc.Description)
			}
			in, _ := json.Marshal(wc.InputSchema)
			if !strings.Contains(string(in), `"text"`) || !strings.Contains(string(in), `"required":["text"]`) {
				t.Errorf("word-count input schema %s", in)
			}
			if out, _ := json.Marshal(wc.OutputSchema); string(out) != `{"type":"object"}` {
				t.Errorf("word-count output schema %s, want the manifest's result schema", out)
			}
			if byName["skill_number"].OutputSchema != nil {
				t.Errorf("number has no result schema, but lists output schema %v", byName["skill_number"].OutputSchema)
			}
			// Under the default policy nothing is granted: every skill is read-only and closed.
			for _, name := range []string{"skill_http_get", "skill_notes", "skill_word_count"} {
				a := byName[name].Annotations
				if a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
					t.Errorf("%s annotations %+v: want readOnlyHint true, openWorldHint false", name, a)
				}
			}
		})
	}
}

func TestMCPCallSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	cs := e.connect(t, legacyProtocol, nil)

	res := call(t, cs, "skill_word_count", map[string]any{"text": "a b a"})
	if res.IsError {
		t.Fatalf("isError: %s", text(t, res))
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok || sc["words"] != 3.0 || sc["characters"] != 5.0 {
		t.Fatalf("structuredContent %#v, want words 3, characters 5", res.StructuredContent)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(t, res)), &fromText); err != nil {
		t.Fatalf("text content is not JSON: %v", err)
	}
	if fmt.Sprint(fromText) != fmt.Sprint(sc) {
		t.Errorf("text content %v differs from structuredContent %v", fromText, sc)
	}
	if id, _ := res.Meta[mcpserver.MetaRunID].(string); !strings.HasPrefix(id, "run_") || res.Meta[mcpserver.MetaSkill] != "word-count" {
		t.Errorf("_meta %v: want the run id and the skill", res.Meta)
	}

	// A result that is not an object is wrapped, as MCP clients of the 2025 revisions need.
	res = call(t, cs, "skill_number", nil)
	if res.IsError || fmt.Sprint(res.StructuredContent) != "map[result:3]" || text(t, res) != `{"result":3}` {
		t.Errorf("number: isError %v, structuredContent %v, text %q; want {\"result\":3}", res.IsError, res.StructuredContent, text(t, res))
	}
}

func TestMCPCallErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	cs := e.connect(t, legacyProtocol, nil)
	cases := []struct {
		name, tool string
		args       any
		want       string
	}{
		// The default policy grants no network.
		{"permission denied", "skill_http_get", map[string]any{"url": "https://example.com/"}, "permission_denied: "},
		{"missing argument", "skill_word_count", map[string]any{}, `invalid_args: `},
		{"wrong type", "skill_word_count", map[string]any{"text": 5}, `invalid_args: argument "text"`},
		{"unknown argument", "skill_echo", map[string]any{"text": "x", "extra": true}, "invalid_args: "},
		{"result against the output schema", "skill_mismatch", map[string]any{"x": 1}, "skill_error: the result does not match the tool's output schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, c.tool, c.args)
			if got := text(t, res); !res.IsError || !strings.HasPrefix(got, c.want) {
				t.Errorf("isError %v, text %q; want isError and a text starting %q", res.IsError, got, c.want)
			}
			if res.StructuredContent != nil {
				t.Errorf("structuredContent %v on a failure", res.StructuredContent)
			}
			if res.Meta[mcpserver.MetaKind] == nil {
				t.Errorf("_meta %v has no error kind", res.Meta)
			}
		})
	}
	// An unknown tool is the client's mistake: a protocol error, not a tool error.
	if _, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "skill_nope"}); err == nil {
		t.Error("unknown tool: no error")
	}
}

func TestMCPResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	cs := e.connect(t, legacyProtocol, nil)
	ctx := testContext(t)

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byURI := map[string]*mcp.Resource{}
	for _, r := range list.Resources {
		byURI[r.URI] = r
	}
	for _, uri := range []string{"skill://hello/SKILL.md", "skill://word-count/SKILL.md", "skill://guide/SKILL.md", "skill://guide/reference/api.md", "skill://guide/data/blob.bin"} {
		if byURI[uri] == nil {
			t.Errorf("%s is not listed", uri)
		}
	}
	for uri := range byURI {
		if strings.Contains(uri, ".secret") || strings.Contains(uri, "escape") || strings.HasPrefix(uri, "skill://echo/") {
			t.Errorf("%s is listed", uri)
		}
	}
	if r := byURI["skill://guide/SKILL.md"]; r == nil || r.MIMEType != "text/markdown" || r.Title != "guide" || !strings.HasPrefix(r.Description, "How to write") {
		t.Errorf("guide's SKILL.md resource: %+v", r)
	}
	if r := byURI["skill://guide/reference/api.md"]; r == nil || r.MIMEType != "text/markdown" {
		t.Errorf("api.md resource: %+v", r)
	}

	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("read %s: %d contents", uri, len(res.Contents))
		}
		return res.Contents[0]
	}
	c := read("skill://hello/SKILL.md")
	want, _ := os.ReadFile(filepath.Join(bundled, "hello", "SKILL.md"))
	if c.MIMEType != "text/markdown" || c.Text != string(want) {
		t.Errorf("hello SKILL.md: %s %q; want the whole file, frontmatter included", c.MIMEType, c.Text)
	}
	if c := read("skill://guide/reference/api.md"); c.Text != "# API\n\nCall it.\n" || c.MIMEType != "text/markdown" {
		t.Errorf("api.md: %s %q", c.MIMEType, c.Text)
	}
	if c := read("skill://guide/data/blob.bin"); string(c.Blob) != "\xff\xfe\x00binary" || c.Text != "" || c.MIMEType != "application/octet-stream" {
		t.Errorf("blob.bin: %s text %q blob %q", c.MIMEType, c.Text, c.Blob)
	}
	// Files that are not listed, read through the template: the manifest of an executable skill.
	if c := read("skill://echo/skill.json"); !strings.Contains(c.Text, `"id":"echo"`) || c.MIMEType != "application/json" {
		t.Errorf("echo skill.json: %s %q", c.MIMEType, c.Text)
	}
}

func TestMCPResourceTraversal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	cs := e.connect(t, legacyProtocol, nil)
	for uri, want := range map[string]string{
		"skill://guide/../echo/skill.json":              `contains ".."`,
		"skill://guide/reference/../../echo/skill.json": `contains ".."`,
		"skill://guide/%2e%2e/echo/skill.json":          `contains ".."`,
		"skill://guide/%2E%2E%2Fecho%2Fskill.json":      `contains ".."`,
		"skill://guide/..%5c..%5coutside.txt":           `contains "\"`,
		"skill://guide//etc/passwd":                     "absolute",
		"skill://guide/%2Fetc%2Fpasswd":                 "absolute",
		"skill://guide/.secret":                         "hidden files",
		"skill://guide/escape.md":                       "leads outside", // a symlink
		"skill://guide/reference":                       "is a directory",
		"skill://guide/nope.md":                         "not found",
		"skill://nope/SKILL.md":                         "not found",
		"skill://echo/SKILL.md":                         "not found", // it has none
		"skill://../guide/SKILL.md":                     "names no skill",
		"file:///etc/passwd":                            "not found",
	} {
		t.Run(uri, func(t *testing.T) {
			res, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: uri})
			if err == nil {
				t.Fatalf("read: %+v, want an error", res.Contents[0])
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to say %q", err, want)
			}
			if strings.Contains(err.Error(), e.dir) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error tells too much: %v", err)
			}
		})
	}
}

func TestMCPPrompts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	cs := e.connect(t, legacyProtocol, nil)
	ctx := testContext(t)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A prompt per instruction skill: the fixture guide, then the bundled ones.
	want := append([]string{"guide"}, bundledInstructions(t)...)
	var got []string
	for _, p := range list.Prompts {
		got = append(got, p.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("prompts %v, want %v (one per instruction skill)", got, want)
	}
	p := list.Prompts[0]
	if !strings.HasPrefix(p.Description, "How to write a guide") || len(p.Arguments) != 1 || p.Arguments[0].Name != "arguments" || p.Arguments[0].Required {
		t.Errorf("prompt %+v", p)
	}
	abs, _ := filepath.Abs(filepath.Join(e.dir, "guide"))
	for args, want := range map[string]string{
		"the moon": "Write a guide about the moon in three parts.",
		"":         "Write a guide about  in three parts.",
	} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "guide", Arguments: map[string]string{"arguments": args}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("messages %+v", res.Messages)
		}
		got := res.Messages[0].Content.(*mcp.TextContent).Text
		if !strings.HasPrefix(got, "Base directory for this skill: "+abs+"\n\n# Guide") || !strings.Contains(got, want) {
			t.Errorf("arguments %q: %q", args, got)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"}); err == nil {
		t.Error("executable skills are no prompts; got one")
	}
}

// A remote client's base directory is the skill's URI: the host's path never reaches it.
func TestMCPRemotePromptsHideHostPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{Remote: true})
	cs := e.connect(t, legacyProtocol, nil)
	res, err := cs.GetPrompt(testContext(t), &mcp.GetPromptParams{Name: "guide", Arguments: map[string]string{"arguments": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Messages[0].Content.(*mcp.TextContent).Text
	abs, _ := filepath.Abs(e.dir)
	if !strings.HasPrefix(got, "Base directory for this skill: skill://guide/\n\n") || strings.Contains(got, abs) {
		t.Errorf("remote prompt: %q", got)
	}
}

func TestMCPLogNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	for _, protocol := range []string{legacyProtocol, newProtocol} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var mu sync.Mutex
			var logs []*mcp.LoggingMessageParams
			cs := e.connect(t, protocol, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				mu.Lock()
				defer mu.Unlock()
				logs = append(logs, r.Params)
			}})
			params := &mcp.CallToolParams{Name: "skill_hello", Arguments: map[string]any{"name": "Ada"}}
			if protocol == legacyProtocol {
				if err := cs.SetLoggingLevel(testContext(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
			} else {
				// The stateless protocol has no session level: each request carries its own.
				params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
			}
			res, err := cs.CallTool(testContext(t), params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			// The server sends the notifications before the response, but the client may handle
			// them after it returns the response. It handles them in order, though: once the log
			// of a later call is in, every log of this one is, and no more come.
			marker := &mcp.CallToolParams{Name: "skill_hello", Arguments: map[string]any{"name": "Marker"}, Meta: params.Meta}
			if res, err := cs.CallTool(testContext(t), marker); err != nil || res.IsError {
				t.Fatalf("the later call: %v %+v", err, res)
			}
			isMarker := func(l *mcp.LoggingMessageParams) bool { return l.Data == "greeting Marker" }
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return slices.ContainsFunc(logs, isMarker) })
			mu.Lock()
			defer mu.Unlock()
			before := logs[:slices.IndexFunc(logs, isMarker)]
			if len(before) != 1 {
				t.Fatalf("%d log notifications, want 1: %+v", len(before), before)
			}
			l := before[0]
			if l.Logger != "hello" || l.Level != "info" || l.Data != "greeting Ada" || l.Meta[mcpserver.MetaRunID] != res.Meta[mcpserver.MetaRunID] {
				t.Errorf("log %+v, want hello's info line of run %v", l, res.Meta[mcpserver.MetaRunID])
			}
		})
	}

	// Above the client's level, nothing is sent: word-count logs at debug.
	var mu sync.Mutex
	var got []any // the logs' data, in the order the client handled them
	cs := e.connect(t, legacyProtocol, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		mu.Lock()
		got = append(got, r.Params.Data)
		mu.Unlock()
	}})
	if err := cs.SetLoggingLevel(testContext(t), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "skill_word_count", map[string]any{"text": "a b a"})
	// hello logs at info: once its log is in, anything word-count's run sent is too.
	call(t, cs, "skill_hello", map[string]any{"name": "Marker"})
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(got, any("greeting Marker")) })
	mu.Lock()
	defer mu.Unlock()
	if n := slices.Index(got, any("greeting Marker")); n != 0 {
		t.Errorf("%d notifications at level info for a run that logged at debug: %v", n, got[:n])
	}
}

func TestMCPListChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{PollInterval: 50 * time.Millisecond})
	for _, tc := range []struct{ transport, protocol string }{
		{"memory", legacyProtocol}, {"memory", newProtocol}, {"http", legacyProtocol}, {"http", newProtocol},
	} {
		protocol := tc.protocol
		t.Run(tc.transport+"/protocol="+protocol, func(t *testing.T) {
			changed := map[string]chan struct{}{"tools": make(chan struct{}, 8), "resources": make(chan struct{}, 8), "prompts": make(chan struct{}, 8)}
			signal := func(kind string) { changed[kind] <- struct{}{} }
			connect := e.connect
			if tc.transport == "http" {
				connect = e.connectHTTP
			}
			cs := connect(t, protocol, &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { signal("tools") },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { signal("resources") },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { signal("prompts") },
			})
			ctx := testContext(t)
			// Fill the client's caches (the stateless protocol's lists are cached until changed).
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			wait := func(kinds ...string) {
				t.Helper()
				for _, k := range kinds {
					select {
					case <-changed[k]:
					case <-time.After(2 * time.Minute): // a hang guard
						t.Fatalf("no %s list_changed notification", k)
					}
				}
			}
			hasTool := func(name string) bool {
				t.Helper()
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				return slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
			}

			// Add an executable skill and an instruction skill, and reload: the poll notices.
			fixture(t, e.dir, "added", manifest("added", ""), "hello")
			writeFile(t, filepath.Join(e.dir, "added-guide", "SKILL.md"), strings.ReplaceAll(guideMD, "name: guide", "name: added-guide"))
			if err := e.rt.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			wait("tools", "resources", "prompts")
			if !hasTool("skill_added") {
				t.Fatal("skill_added is not listed after the reload")
			}
			if res := call(t, cs, "skill_added", nil); res.IsError || text(t, res) != `{"greeting":"hi"}` {
				t.Errorf("skill_added: %+v", res)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != 2+len(bundledInstructions(t)) {
				t.Errorf("prompts after the reload: %v %+v", err, prompts)
			}

			// A reload that changes nothing sends nothing.
			if err := e.rt.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed["tools"]:
				t.Error("list_changed after a reload that changed nothing")
			case <-time.After(300 * time.Millisecond):
			}

			// Remove them; Refresh syncs at once.
			if err := os.RemoveAll(filepath.Join(e.dir, "added")); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(e.dir, "added-guide")); err != nil {
				t.Fatal(err)
			}
			if err := e.rt.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			e.srv.Refresh()
			wait("tools", "resources", "prompts")
			if hasTool("skill_added") {
				t.Fatal("skill_added is still listed after its removal")
			}
		})
	}
}

func TestMCPCancel(t *testing.T) {
	t.Parallel()
	// One run at a time: the second call gets the slot only if the first run really ended (and
	// waits for it as long as that takes: MaxWait is far off).
	e := newEnvRuntime(t, mcpserver.Options{}, runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 1, MaxWait: 10 * time.Minute}})})
	cs := e.connect(t, legacyProtocol, nil)
	// The client's deadline passes once the sleep is running, not while it is still being
	// compiled or admitted; only a deadline or its timeout (60 s) can end the sleep.
	ctx := newExpiring()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_sleep"})
		called <- err
	}()
	waitFor(t, func() bool { return len(called) > 0 || e.rt.Stats().Admission.Running == 1 })
	ctx.expire()
	if err := <-called; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call: %v, want the client's deadline", err)
	}
	res := call(t, cs, "skill_echo", map[string]any{"text": "after"})
	if res.IsError {
		t.Fatalf("echo after the canceled sleep: %+v", res)
	}
	// The sleep ended canceled (not at its timeout): the client's deadline stopped it.
	waitFor(t, func() bool { return hasCount(e.rt.Stats(), "sleep", run.FaceMCP, "canceled") })
}

// expiring is a context whose deadline passes when the test calls expire: a client's deadline
// that cannot pass before the test is ready for it, however slow the machine.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiring) Done() <-chan struct{} { return c.done }

func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *expiring) expire() { c.once.Do(func() { close(c.done) }) }

func TestMCPStreamableHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	hs := httptest.NewServer(e.srv.Handler())
	defer hs.Close()
	for _, protocol := range []string{legacyProtocol, newProtocol} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			// Each step has its own deadline: on a busy machine the steps together may take
			// longer than one step ever should.
			step := func() context.Context { return testContext(t) }
			var mu sync.Mutex
			var logs []string
			client := mcp.NewClient(&mcp.Implementation{Name: "skillbox-test", Version: "1"}, &mcp.ClientOptions{
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					mu.Lock()
					defer mu.Unlock()
					logs = append(logs, fmt.Sprint(r.Params.Data))
				},
			})
			cs, err := client.Connect(step(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(step(), nil)
			// The toolset, the 4 fixtures and every bundled skill.
			if want := len(toolset.Names()) + 4 + len(bundledTools(t)); err != nil || len(tools.Tools) != want {
				t.Fatalf("tools: %v, %d, want %d", err, len(tools.Tools), want)
			}
			// A client of the stateless revision gets it; an older one its sessions.
			want := legacyProtocol
			if protocol == newProtocol {
				want = "2026-07-28"
			}
			if v := cs.InitializeResult().ProtocolVersion; v != want {
				t.Errorf("negotiated %s, want %s", v, want)
			}
			params := &mcp.CallToolParams{Name: "skill_hello", Arguments: map[string]any{"name": "Ada"}}
			if protocol == legacyProtocol {
				// The level lasts for the session.
				if err := cs.SetLoggingLevel(step(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			} else {
				// Without sessions, each request says the level it wants.
				params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
			}
			res, err := cs.CallTool(step(), params)
			if err != nil || res.IsError || fmt.Sprint(res.StructuredContent) != "map[greeting:Hello, Ada!]" {
				t.Fatalf("call: %v %+v", err, res)
			}
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(logs) > 0 })
			mu.Lock()
			if !slices.Equal(logs, []string{"greeting Ada"}) {
				t.Errorf("logs %q", logs)
			}
			mu.Unlock()
			if res := call(t, cs, "skill_http_get", map[string]any{"url": "https://example.com/"}); !res.IsError {
				t.Errorf("http-get under the default policy: %+v", res)
			}
			rr, err := cs.ReadResource(step(), &mcp.ReadResourceParams{URI: "skill://hello/SKILL.md"})
			if err != nil || !strings.HasPrefix(rr.Contents[0].Text, "---\nname: hello\n") {
				t.Fatalf("read: %v %+v", err, rr)
			}
		})
	}
}

// A call the runtime has no room for is a tool error of kind busy — not a JSON-RPC error, which
// ends many agent loops — and the model can retry it.
func TestMCPBusyIsAToolError(t *testing.T) {
	t.Parallel()
	e := newEnvRuntime(t, mcpserver.Options{}, runtime.Config{Shared: testengine.Shared(t, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 1, MaxWait: 50 * time.Millisecond}})})
	cs := e.connect(t, legacyProtocol, nil)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	sleeping := make(chan struct{})
	go func() {
		defer close(sleeping)
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_sleep"})
	}()
	waitFor(t, func() bool { return e.rt.Stats().Admission.Running == 1 })
	res := call(t, cs, "skill_echo", map[string]any{"text": "x"})
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.HasPrefix(text, "busy: ") || res.Meta[mcpserver.MetaKind] != "busy" {
		t.Errorf("call while busy: isError %v, %q, meta %v", res.IsError, text, res.Meta)
	}
	cancel()
	<-sleeping
	if st := e.rt.Stats(); !hasCount(st, "echo", run.FaceMCP, "busy") {
		t.Errorf("the busy call is not in the runtime's stats: %+v", st.Runs)
	}
}

func hasCount(st runtime.Stats, skill string, face run.Face, outcome string) bool {
	for _, c := range st.Runs {
		if c.Skill == skill && c.Face == face && c.Outcome == outcome && c.Count > 0 {
			return true
		}
	}
	return false
}

// The disclosure toolset reaches instruction skills from clients that load only tools: over MCP
// load_skill gives the instructions, rendered with the skill's directory for a local client and
// its skill:// URI for a remote one (never a host path); read_skill_resource reads its files;
// run_skill runs an executable skill; the disclosure offer lists the toolset alone.
func TestMCPDisclosureToolset(t *testing.T) {
	t.Parallel()
	call := func(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprintf("remote=%v", remote), func(t *testing.T) {
			e := newEnv(t, mcpserver.Options{Remote: remote})
			cs := e.connect(t, legacyProtocol, nil)
			text, isErr := call(t, cs, "load_skill", `{"name":"guide","arguments":"the moon"}`)
			abs, _ := filepath.Abs(filepath.Join(e.dir, "guide"))
			base := abs
			if remote {
				base = "skill://guide/"
			}
			if isErr || !strings.HasPrefix(text, "Base directory for this skill: "+base+"\n") || !strings.Contains(text, "about the moon") {
				t.Errorf("load_skill: %v %q", isErr, text)
			}
			if remote && strings.Contains(text, e.dir) {
				t.Errorf("a remote client was handed a host path: %q", text)
			}
			if text, isErr := call(t, cs, "read_skill_resource", `{"skill":"guide","resource":"reference/api.md"}`); isErr || text != "# API\n\nCall it.\n" {
				t.Errorf("read_skill_resource: %v %q", isErr, text)
			}
			if text, isErr := call(t, cs, "run_skill", `{"skill":"echo","args":{"text":"hi"}}`); isErr || !strings.Contains(text, `"hi"`) {
				t.Errorf("run_skill: %v %q", isErr, text)
			}
			if faces := runFaces(e.rt, "echo"); !slices.Equal(faces, []run.Face{run.FaceMCP}) {
				t.Errorf("run_skill over MCP was recorded as face %v, want [mcp]", faces)
			}
			if text, isErr := call(t, cs, "list_skills", `{"query":"guide","limit":1}`); isErr || !strings.Contains(text, `"id":"guide"`) {
				t.Errorf("list_skills: %v %q", isErr, text)
			}
			// A toolset tool fails as a skill's own tool does: "<kind>: <message>".
			if text, isErr := call(t, cs, "run_skill", `{"skill":"echo","args":{}}`); !isErr || !strings.HasPrefix(text, "invalid_args: ") || !strings.Contains(text, "text") {
				t.Errorf("run_skill with a missing argument: %v %q", isErr, text)
			}
			if text, isErr := call(t, cs, "load_skill", `{}`); !isErr || !strings.HasPrefix(text, `invalid_args: argument "name": is required`) {
				t.Errorf("load_skill without a name: %v %q", isErr, text)
			}
		})
	}
	t.Run("offer=disclosure", func(t *testing.T) {
		e := newEnv(t, mcpserver.Options{Offer: toolset.OfferDisclosure})
		cs := e.connect(t, legacyProtocol, nil)
		res, err := cs.ListTools(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, toolset.Names()) {
			t.Errorf("tools %v, want the toolset alone", names)
		}
	})
	t.Run("offer=skills", func(t *testing.T) {
		e := newEnv(t, mcpserver.Options{Offer: toolset.OfferSkills})
		res, err := e.connect(t, legacyProtocol, nil).ListTools(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if !strings.HasPrefix(tool.Name, "skill_") {
				t.Errorf("tool %s offered with the skills offer", tool.Name)
			}
		}
	})
}

// runFaces lists the faces skill's runs were counted under, in the runtime's order.
func runFaces(rt *runtime.Runtime, skill string) []run.Face {
	var faces []run.Face
	for _, c := range rt.Stats().Runs {
		if c.Skill == skill {
			faces = append(faces, c.Face)
		}
	}
	return faces
}

// A call that carries a progressToken gets its run's progress as notifications/progress: the
// status events and each log line, numbered upward, before the result. A skill's own tool and
// run_skill both do, over memory and over HTTP in either protocol; a call without a token gets
// none.
func TestMCPProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{})
	for _, tc := range []struct{ transport, protocol string }{
		{"memory", legacyProtocol}, {"memory", newProtocol}, {"http", legacyProtocol}, {"http", newProtocol},
	} {
		t.Run(tc.transport+"/protocol="+tc.protocol, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			got := map[any][]string{} // by token
			connect := e.connect
			if tc.transport == "http" {
				connect = e.connectHTTP
			}
			cs := connect(t, tc.protocol, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				p := r.Params
				got[p.ProgressToken] = append(got[p.ProgressToken], fmt.Sprintf("%v %s", p.Progress, p.Message))
			}})
			for token, params := range map[string]*mcp.CallToolParams{
				"own":       {Name: "skill_hello", Arguments: map[string]any{"name": "Ada"}},
				"run_skill": {Name: "run_skill", Arguments: map[string]any{"skill": "hello", "args": map[string]any{"name": "Ada"}}},
			} {
				params.SetProgressToken(token)
				if res, err := cs.CallTool(testContext(t), params); err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", token, err, res)
				}
				want := []string{"1 hello: started", "2 hello: running", "3 hello: greeting Ada"}
				waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got[token]) >= len(want) })
				mu.Lock()
				if !slices.Equal(got[token], want) {
					t.Errorf("%s: progress %q, want %q", token, got[token], want)
				}
				mu.Unlock()
			}
			if res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "skill_hello"}); err != nil || res.IsError {
				t.Fatalf("no token: %v %+v", err, res)
			}
			// The client handles notifications in order: once a later call's progress is in, any
			// the call without a token got is too.
			later := &mcp.CallToolParams{Name: "skill_hello", Arguments: map[string]any{"name": "Marker"}}
			later.SetProgressToken("later")
			if res, err := cs.CallTool(testContext(t), later); err != nil || res.IsError {
				t.Fatalf("later: %v %+v", err, res)
			}
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got["later"]) >= 3 })
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 3 {
				t.Errorf("progress for calls without a token: %v", got)
			}
		})
	}
}
