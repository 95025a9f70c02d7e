package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/toolset"
)

func TestTools(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{Provider: "acme"})
	// Every bundled skill's tool, then the toolset.
	all := append(bundledTools(t), toolset.Names()...)
	tests := []struct {
		name, query string // given
		status      int    // expect
		check       func(t *testing.T, body []byte)
	}{
		{"default is openai", "", 200, func(t *testing.T, b []byte) {
			var tools []struct {
				Type     string `json:"type"`
				Function struct {
					Name       string          `json:"name"`
					Parameters json.RawMessage `json:"parameters"`
				} `json:"function"`
			}
			if err := json.Unmarshal(b, &tools); err != nil || len(tools) == 0 || tools[0].Type != "function" {
				t.Fatalf("%v %s", err, b)
			}
			if names := toolNames(t, b); !slices.Equal(names, all) {
				t.Errorf("tools %v, want %v", names, all)
			}
		}},
		{"openai", "?format=openai", 200, func(t *testing.T, b []byte) {
			if !strings.Contains(string(b), `"name":"skill_word_count"`) {
				t.Errorf("%s", b)
			}
		}},
		{"anthropic", "?format=anthropic", 200, func(t *testing.T, b []byte) {
			var tools []map[string]json.RawMessage
			if err := json.Unmarshal(b, &tools); err != nil {
				t.Fatalf("%v %s", err, b)
			}
			if names := rawNames(tools); !slices.Equal(names, all) {
				t.Errorf("tools %v, want %v", names, all)
			}
			for _, tool := range tools {
				if tool["name"] == nil || tool["description"] == nil || tool["input_schema"] == nil || tool["type"] != nil {
					t.Errorf("not Anthropic's shape: %v", tool)
				}
			}
		}},
		{"mcp", "?format=mcp", 200, func(t *testing.T, b []byte) {
			var list struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(b, &list); err != nil || len(list.Tools) == 0 || list.Tools[0]["inputSchema"] == nil {
				t.Fatalf("%v %s", err, b)
			}
			if names := rawNames(list.Tools); !slices.Equal(names, all) {
				t.Errorf("tools %v, want %v", names, all)
			}
		}},
		{"case-insensitive", "?format=MCP", 200, nil},
		{"unknown format", "?format=gemini", 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := get(t, ts.URL+"/v1/tools"+tc.query)
			if tc.status != 200 {
				wantError(t, r, tc.status, "bad_request")
				return
			}
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatal(r)
			}
			if tc.check != nil {
				tc.check(t, r.body)
			}
		})
	}
	t.Run("well-known", func(t *testing.T) {
		t.Parallel()
		r := get(t, ts.URL+"/.well-known/skills.json")
		var m struct {
			Version, Provider string
			Tools             []struct {
				Name           string          `json:"name"`
				ArgsSchema     json.RawMessage `json:"args_schema"`
				SkillVersionID string          `json:"skill_version_id"`
			}
		}
		r.decode(t, &m)
		if r.status != 200 || m.Provider != "acme" || m.Version == "" {
			t.Fatalf("%s", r)
		}
		var names []string
		for _, tool := range m.Tools {
			names = append(names, tool.Name)
		}
		if want := bundledTools(t); !slices.Equal(names, want) {
			t.Errorf("tools %v, want every bundled skill's: %v", names, want)
		}
		for _, tool := range m.Tools {
			if !strings.HasPrefix(tool.Name, "skill_") || !strings.Contains(tool.SkillVersionID, "@sha256:") || len(tool.ArgsSchema) == 0 {
				t.Errorf("tool %+v", tool)
			}
		}
	})
}

// rawNames lists the "name" member of each tool.
func rawNames(tools []map[string]json.RawMessage) []string {
	var names []string
	for _, tool := range tools {
		var name string
		_ = json.Unmarshal(tool["name"], &name)
		names = append(names, name)
	}
	return names
}

func TestSearch(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{})
	tests := []struct {
		name, body string // given
		status     int    // expect
		first      string // the best hit
		max        int
	}{
		{"finds word-count", `{"query":"count words"}`, 200, "word-count", 10},
		{"finds notes", `{"query":"markdown notes","limit":1}`, 200, "notes", 1},
		{"no match is an empty list", `{"query":"zzzyx"}`, 200, "", 0},
		{"empty query", `{"query":"  "}`, 400, "", 0},
		{"no body", ``, 400, "", 0},
		{"negative limit", `{"query":"a","limit":-1}`, 400, "", 0},
		{"limit over 100", `{"query":"a","limit":101}`, 400, "", 0},
		{"unknown field", `{"query":"a","top":3}`, 400, "", 0},
		{"malformed", `{"query":`, 400, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := post(t, ts.URL+"/v1/skills/search", tc.body)
			if tc.status != 200 {
				wantError(t, r, tc.status, "bad_request")
				return
			}
			var res struct {
				Results []struct {
					ID    string  `json:"id"`
					Score float64 `json:"score"`
				} `json:"results"`
			}
			r.decode(t, &res)
			if res.Results == nil {
				t.Fatalf("results is not a list: %s", r.body)
			}
			if len(res.Results) > tc.max || (tc.first != "" && (len(res.Results) == 0 || res.Results[0].ID != tc.first)) {
				t.Errorf("%s", r.body)
			}
		})
	}
	// The search route is not taken for a skill called "search".
	wantError(t, get(t, ts.URL+"/v1/skills/search"), 404, "")
}
