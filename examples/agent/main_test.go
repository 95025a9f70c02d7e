package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// cacheDir is the compilation cache the other packages' tests share: word-count is a Go-built
// module, seconds to compile under -race, once.
var cacheDir = testcache.Dir()

// warmBundled compiles the bundled skills' modules into the shared cache, once, one at a time:
// the runtimes the example makes, and their background checks, then load them from the cache
// instead of each waiting for compilations (a minute and more each under -race on a busy
// machine). It reports nothing: a test that needs a module fails on its own.
var warmBundled = sync.OnceFunc(func() {
	ctx := context.Background()
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: cacheDir})
	if err != nil {
		return
	}
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{bundled}, NoBackgroundCheck: true, Shared: sh})
	if err != nil {
		return
	}
	defer rt.Close(ctx)
	rt.CheckSkills(ctx, bundled)
})

// bundled is the repository's skills directory, as seen from this package's directory.
const bundled = "../../skills"

func noEnv(string) string { return "" }

// Test_main runs the example as `go run ./examples/agent` does, offline, against the bundled
// skills, and checks the transcript: the tools the scripted model called, in order, and the word
// count reaching the answer.
func Test_main(t *testing.T) {
	warmBundled()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--skills", "../../skills", "--cache-dir", cacheDir}, &out, &errOut, noEnv)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut.String(), out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	words := len(strings.Fields(strings.SplitN(defaultPrompt, ":", 2)[1]))
	want := []string{
		"system: ",
		"user: " + defaultPrompt,
		"assistant calls list_skills {}",
		`tool list_skills ok: {"skills":[{"id":"` + firstBundled(t) + `",`,
		`assistant calls skill_word_count {"text":"the quick brown fox jumps over the lazy dog the end"}`,
		fmt.Sprintf(`tool skill_word_count ok: {"words":%d,"lines":1,"characters":51,"top":[{"word":"the","count":3},`, words),
		fmt.Sprintf(`assistant: The text has %d words. The most frequent is "the" (3 times).`, words),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n%s\nwant it to start with\n%s", i+1, lines[i], w)
		}
	}
}

// firstBundled returns the first id, in order, of the bundled skills (../../skills: a
// directory holding a manifest or a SKILL.md), which list_skills lists first: read from the
// directory, so adding a skill there does not break the transcript's check.
func firstBundled(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "skills")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, f := range []string{"skill.json", "skill.yaml", "skill.yml", "SKILL.md"} {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), f)); e.IsDir() && err == nil {
				return e.Name()
			}
		}
	}
	t.Fatalf("%s holds no skill", dir)
	return ""
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		env  func(string) string
		code int
		want string
	}{
		{[]string{"--endpoint", "http://127.0.0.1:1/v1"}, noEnv, 2, "--endpoint needs an API key in $OPENAI_API_KEY"},
		{[]string{"--endpoint", "http://x", "--api-key-env", "MY_KEY"}, noEnv, 2, "$MY_KEY"},
		{[]string{"--nope"}, noEnv, 2, "flag provided but not defined"},
		{[]string{"--policy", "/nonexistent/policy.yaml"}, noEnv, 2, "policy"},
		// A catalog without word-count: the script's call fails, and the model is told so.
		{[]string{"--skills", "/nonexistent", "--cache-dir", cacheDir}, noEnv, 0, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut, tc.env)
			if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q", code, errOut.String())
			}
			if code == 0 && !strings.Contains(out.String(), `tool skill_word_count failed: error: not_found: unknown tool "skill_word_count"`) {
				t.Errorf("transcript:\n%s", out.String())
			}
		})
	}
}

// TestOpenAIClient runs the loop against a local stand-in for an OpenAI-compatible server, which
// checks each request's shape and plays the scripted model's part: the client's wire format,
// offline. No test reaches a real endpoint.
func TestOpenAIClient(t *testing.T) {
	script := Scripted(WordCountScript)
	var requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" || r.Method != http.MethodPost {
			t.Errorf("%s %s, auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		var req struct {
			Model    string               `json:"model"`
			Messages []Message            `json:"messages"`
			Tools    []tooldef.OpenAITool `json:"tools"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range req.Tools {
			names[tool.Function.Name] = tool.Type == "function"
		}
		if req.Model != "test-model" || !names["skill_word_count"] || !names["list_skills"] || !names["load_skill"] || req.Messages[0].Role != "system" {
			t.Errorf("request: model %q, tools %v, first role %q", req.Model, names, req.Messages[0].Role)
		}
		// Every tool message answers a call of the assistant message before it.
		for i, m := range req.Messages {
			if m.Role == "tool" && (i == 0 || m.ToolCallID == "" || m.Content == "") {
				t.Errorf("tool message %d: %+v", i, m)
			}
		}
		reply, err := script.Complete(r.Context(), req.Messages, req.Tools)
		if err != nil {
			t.Fatal(err)
		}
		reply.Role = "assistant"
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": reply, "finish_reason": "stop"}}})
	}))
	defer srv.Close()

	warmBundled()
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{bundled}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	client := &OpenAIClient{Endpoint: srv.URL + "/v1/", APIKey: "sk-test", Model: "test-model", HTTP: srv.Client()}
	answer, err := Converse(context.Background(), rt, client, defaultPrompt, 8, io.Discard)
	if err != nil || !strings.HasPrefix(answer, "The text has 11 words.") || requests != 3 {
		t.Errorf("answer %q, %v after %d requests", answer, err, requests)
	}
}

func TestOpenAIClientErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   string
	}{
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, "401 Unauthorized: Incorrect API key provided"},
		{502, `bad gateway`, "502 Bad Gateway: bad gateway"},
		{200, `not json`, "the reply is not JSON"},
		{200, `{"choices":[]}`, "the reply has no choices"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := &OpenAIClient{Endpoint: srv.URL + "/chat/completions", APIKey: "k", HTTP: srv.Client()}
			_, err := c.Complete(context.Background(), []Message{{Role: "user", Content: "hi"}}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v", err)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	if got := shorten("a\nb", 10); got != `a\nb` {
		t.Errorf("%q", got)
	}
	if got := shorten("héllo", 2); got != "h... (6 bytes)" {
		t.Errorf("%q", got)
	}
}
