package server

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/syncbuf"
)

// TestToolsLeftOut: a skill one vendor would refuse is left out of that vendor's format only,
// never breaking the list for the other skills, and the response says so: Skillbox-Warning
// headers (the openai and anthropic bodies are bare arrays), "warnings" beside the mcp tools,
// and a log line.
func TestToolsLeftOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	longID := "l" + strings.Repeat("o", 62) // a 69-character tool name
	fixture(t, dir, "good", manifestJSON("good", `"parameters":{"q":{"type":"string"}}`), "echo", nil)
	fixture(t, dir, "one-of", manifestJSON("one-of", `"parameters":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`), "echo", nil)
	fixture(t, dir, longID, manifestJSON(longID, ""), "echo", nil)
	var logs syncbuf.Buffer
	e := newEnv(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, dir)

	names := func(body []byte, key string) []string {
		var list []map[string]any
		if key == "mcp" {
			var m struct{ Tools []map[string]any }
			_ = json.Unmarshal(body, &m)
			list = m.Tools
		} else {
			_ = json.Unmarshal(body, &list)
		}
		var out []string
		for _, tool := range list {
			if f, ok := tool["function"].(map[string]any); ok {
				tool = f
			}
			out = append(out, tool["name"].(string))
		}
		return out
	}
	tests := []struct {
		format   string
		want     []string
		warnings []string
	}{
		{"openai", []string{"skill_good"}, []string{"openai's rule tool-name", "openai's rule parameters-root"}},
		{"anthropic", []string{"skill_good"}, []string{"anthropic's rule tool-name", "anthropic's rule input-schema-root"}},
		{"mcp", []string{"skill_good", "skill_one_of"}, []string{"openai's rule tool-name"}},
	}
	for _, tc := range tests {
		r := get(t, e.ts.URL+"/v1/tools?tools=skills&format="+tc.format)
		if r.status != 200 {
			t.Fatalf("%s: %s", tc.format, r)
		}
		if got := names(r.body, tc.format); !slices.Equal(got, tc.want) {
			t.Errorf("%s lists %v, want %v", tc.format, got, tc.want)
		}
		headers := r.header.Values(warningHeader)
		if len(headers) != len(tc.warnings) {
			t.Errorf("%s: warnings %q, want %d", tc.format, headers, len(tc.warnings))
		}
		for i, w := range tc.warnings {
			if i < len(headers) && !strings.Contains(headers[i], w) {
				t.Errorf("%s: warning %q, want it to name %q", tc.format, headers[i], w)
			}
		}
	}
	r := get(t, e.ts.URL+"/.well-known/skills.json")
	if w := r.header.Values(warningHeader); len(w) != 1 || !strings.Contains(w[0], "openai's rule tool-name") || strings.Contains(string(r.body), longID) {
		t.Errorf("well-known: warnings %q, body %s", w, r.body)
	}
	var m struct {
		Warnings []struct{ Tool, Vendor, Rule, Problem string }
	}
	r = get(t, e.ts.URL+"/v1/tools?format=mcp")
	r.decode(t, &m)
	if len(m.Warnings) != 1 || m.Warnings[0].Tool != "skill_"+strings.ReplaceAll(longID, "-", "_") || m.Warnings[0].Vendor != "openai" || m.Warnings[0].Rule != "tool-name" || m.Warnings[0].Problem == "" {
		t.Errorf("mcp warnings %+v", m.Warnings)
	}
	if !strings.Contains(logs.String(), "tools left out of the list") {
		t.Errorf("no log line: %s", logs.String())
	}

	// With nothing left out the mcp body is MCP's tools/list result as it was: no "warnings".
	clean := t.TempDir()
	fixture(t, clean, "good", manifestJSON("good", ""), "echo", nil)
	r = get(t, newEnv(t, Options{}, clean).ts.URL+"/v1/tools?format=mcp")
	if strings.Contains(string(r.body), "warnings") || r.header.Get(warningHeader) != "" {
		t.Errorf("warnings with nothing left out: %s %v", r.body, r.header)
	}
}
