package server

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/run"
)

// toolNames lists the names of an OpenAI tools array.
func toolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var tools []tooldef.OpenAITool
	if err := json.Unmarshal(body, &tools); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Function.Name)
	}
	return names
}

func TestToolsOffer(t *testing.T) {
	t.Parallel()
	skills := bundledTools(t)
	all := append(slices.Clone(skills), toolset.Names()...)
	tests := []struct {
		name   string
		offer  toolset.Offer // the server's option
		query  string
		status int
		want   []string
	}{
		{"default: skills then the toolset", "", "", 200, all},
		{"?tools=skills", "", "?tools=skills", 200, skills},
		{"?tools=disclosure", "", "?tools=disclosure", 200, toolset.Names()},
		{"?tools=ALL is case-insensitive", toolset.OfferSkills, "?tools=ALL", 200, all},
		{"the server's offer", toolset.OfferDisclosure, "", 200, toolset.Names()},
		{"the server's offer, anthropic", toolset.OfferDisclosure, "?format=anthropic", 200, toolset.Names()},
		{"unknown offer", "", "?tools=some", 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := newTestServer(t, Options{Offer: tc.offer})
			r := get(t, ts.URL+"/v1/tools"+tc.query)
			if tc.status != 200 {
				e := wantError(t, r, tc.status, "bad_request")
				if !strings.Contains(e.Error.Message, "all, skills or disclosure") {
					t.Errorf("the error does not say what to use: %q", e.Error.Message)
				}
				return
			}
			var names []string
			if strings.Contains(tc.query, "anthropic") {
				var tools []tooldef.AnthropicTool
				r.decode(t, &tools)
				for _, tool := range tools {
					names = append(names, tool.Name)
				}
			} else {
				names = toolNames(t, r.body)
			}
			if r.status != 200 || !slices.Equal(names, tc.want) {
				t.Errorf("tools %v, want %v (%d)", names, tc.want, r.status)
			}
		})
	}
	t.Run("a bad offer is refused at New", func(t *testing.T) {
		t.Parallel()
		_, rt := newTestServer(t, Options{})
		if _, err := New(rt, Options{Offer: "everything"}); err == nil || !strings.Contains(err.Error(), "everything") {
			t.Errorf("New took an unknown offer: %v", err)
		}
	})
}

func TestToolCall(t *testing.T) {
	t.Parallel()
	opts := keysOptions()
	env := newEnv(t, opts, "../skills")
	runner := []string{"Authorization", "Bearer " + roleKeys[access.RoleRunner]}
	call := func(t *testing.T, body string, header ...string) (reply, toolCallResponse) {
		t.Helper()
		r := post(t, env.ts.URL+"/v1/tools/call", body, append(slices.Clone(runner), header...)...)
		var out toolCallResponse
		if r.status == 200 {
			r.decode(t, &out)
		}
		return r, out
	}
	abs, _ := filepath.Abs("../skills")
	tests := []struct {
		name, body string
		isError    bool
		text       string // a part of the text
	}{
		{"list_skills", `{"name":"list_skills","arguments":{"query":"count words","limit":1}}`, false, `"id":"word-count"`},
		{"load_skill names no host path", `{"name":"load_skill","arguments":{"name":"word-count"}}`, false, "Base directory for this skill: skill://word-count/"},
		{"read_skill_resource", `{"name":"read_skill_resource","arguments":{"skill":"word-count","resource":"skill.json"}}`, false, `"id": "word-count"`},
		{"run_skill", `{"name":"run_skill","arguments":{"skill":"word-count","args":{"text":"a b a"}}}`, false, `"words":3`},
		{"a skill's tool", `{"name":"skill_word_count","arguments":{"text":"one two"}}`, false, `"words":2`},
		{"OpenAI's arguments, a JSON string", `{"name":"skill_word_count","arguments":"{\"text\":\"x y z\"}"}`, false, `"words":3`},
		{"no arguments", `{"name":"list_skills"}`, false, fmt.Sprintf(`"total":%d`, len(bundledIDs(t)))},
		{"unknown tool", `{"name":"skill_nope","arguments":{}}`, true, `error: not_found: unknown tool "skill_nope"`},
		{"bad arguments", `{"name":"skill_word_count","arguments":{"text":3}}`, true, "error: invalid_args:"},
		{"arguments not JSON", `{"name":"skill_word_count","arguments":"{text"}`, true, "error: invalid_args:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, out := call(t, tc.body)
			if r.status != 200 || out.IsError != tc.isError || !strings.Contains(out.Text, tc.text) || out.Result == nil {
				t.Fatalf("%s", r)
			}
			if strings.Contains(string(r.body), abs) {
				t.Errorf("a remote client was handed a host path: %s", r.body)
			}
		})
	}
	t.Run("runs are recorded as the HTTP face's, under the key", func(t *testing.T) {
		t.Parallel()
		r, out := call(t, `{"name":"run_skill","arguments":{"skill":"hello","args":{"name":"x"}}}`)
		if out.IsError || out.Result.RunID == "" {
			t.Fatalf("%s", r)
		}
		rec, ok := env.rt.RunRecord(access.Principal{Key: "ops", Role: access.RoleAdmin}, out.Result.RunID)
		if !ok || rec.Face != run.FaceHTTP || rec.Caller != "runner-client" {
			t.Errorf("record %v face %q caller %q, want http and runner-client", ok, rec.Face, rec.Caller)
		}
	})
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		code       string
	}{
		{"no name", `{"arguments":{}}`, nil, 400, "bad_request"},
		{"unknown field", `{"name":"list_skills","input":{}}`, nil, 400, "bad_request"},
		{"a viewer may not call", `{"name":"list_skills"}`, []string{"Authorization", "Bearer " + roleKeys[access.RoleViewer]}, 403, "forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := runner
			if tc.header != nil {
				h = tc.header
			}
			wantError(t, post(t, env.ts.URL+"/v1/tools/call", tc.body, h...), tc.status, tc.code)
		})
	}
}
