package tooldef_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// longID is the longest id whose tool name is too long for OpenAI.
var longID = "a" + strings.Repeat("b", 58)

// testCatalog is a runtime over skills of every kind the tool formats treat differently.
func testCatalog(t *testing.T) *runtime.Runtime {
	t.Helper()
	dir := t.TempDir()
	skill := func(id, manifest string) {
		fixture(t, dir, id, map[string]string{"skill.json": manifest}, true)
	}
	// Optional parameter with a default: not strict. An object result: an MCP output schema.
	skill("word-count", `{"id":"word-count","name":"Word count","description":"Counts words","version":"1.0.0",
		"parameters":{"text":{"type":"string","required":true,"description":"The text"},
		              "top":{"type":"integer","default":5}},
		"result":{"type":"object"},"tags":["text","count"]}`)
	// Every parameter required, plain types: strict. A string result: no MCP output schema.
	skill("weather", `{"id":"weather","name":"Weather","description":"Weather for a city",
		"parameters":{"city":{"type":"string","required":true,"description":"City"}},
		"result":{"type":"string"},
		"permissions":{"network":["api.weather.example"]}}`)
	// A read-write mount granted: not read-only, not open-world. No parameters: strict.
	skill("notes", `{"id":"notes","name":"Notes","description":"Keeps notes",
		"permissions":{"files":[{"path":"/workspace","access":"read-write"}]}}`)
	// A network host the policy refuses: nothing granted, so read-only after all.
	skill("refused", `{"id":"refused","name":"Refused","description":"Asks for a host it does not get",
		"permissions":{"network":["evil.example"]}}`)
	skill(longID, `{"id":"`+longID+`","name":"Long","description":"A long id"}`)
	// Broken: left out of every list.
	skill("broken", `{"id":"broken","name":"Broken"}`)
	// Instructions only: never a tool.
	fixture(t, dir, "guide", map[string]string{"SKILL.md": "---\nname: guide\ndescription: How to write notes\n---\nBody\n"}, false)
	return newRuntime(t, dir, &policy.Policy{
		Network: []string{"api.weather.example"},
		Files:   []policy.Mount{{Path: "/workspace", HostPath: t.TempDir(), Access: spec.ReadWrite}},
	})
}

func hashOf(t *testing.T, c catalog.Catalog[*runtime.Skill], id string) string {
	for _, s := range c.Skills() {
		if s.ID() == id {
			return strings.TrimPrefix(s.Digest(), "sha256:")
		}
	}
	t.Fatalf("no skill %s", id)
	return ""
}

const (
	wordCountSchema = `{"additionalProperties":false,"properties":{"text":{"description":"The text","type":"string"},"top":{"default":5,"type":"integer"}},"required":["text"],"type":"object"}`
	weatherSchema   = `{"additionalProperties":false,"properties":{"city":{"description":"City","type":"string"}},"required":["city"],"type":"object"}`
	emptySchema     = `{"type":"object","properties":{},"additionalProperties":false}`
)

func TestOpenAITools(t *testing.T) {
	rt := testCatalog(t)
	sameJSON(t, tooldef.OpenAI(rt), `[
		{"type":"function","function":{"name":"skill_notes","description":"Keeps notes","parameters":`+emptySchema+`,"strict":true}},
		{"type":"function","function":{"name":"skill_refused","description":"Asks for a host it does not get","parameters":`+emptySchema+`,"strict":true}},
		{"type":"function","function":{"name":"skill_weather","description":"Weather for a city","parameters":`+weatherSchema+`,"strict":true}},
		{"type":"function","function":{"name":"skill_word_count","description":"Counts words","parameters":`+wordCountSchema+`,"strict":false}}
	]`)
}

// TestAnthropicTools: the long id's tool is left out, as from every list (its name has 65
// characters; Anthropic documents 64).
func TestAnthropicTools(t *testing.T) {
	rt := testCatalog(t)
	sameJSON(t, tooldef.Anthropic(rt), `[
		{"name":"skill_notes","description":"Keeps notes","input_schema":`+emptySchema+`},
		{"name":"skill_refused","description":"Asks for a host it does not get","input_schema":`+emptySchema+`},
		{"name":"skill_weather","description":"Weather for a city","input_schema":`+weatherSchema+`},
		{"name":"skill_word_count","description":"Counts words","input_schema":`+wordCountSchema+`}
	]`)
}

// TestMCPTools: the long id's tool is left out (MCP allows 128 characters, but MCP clients hand
// their tools on to OpenAI and Anthropic, which take 64).
func TestMCPTools(t *testing.T) {
	rt := testCatalog(t)
	sameJSON(t, tooldef.MCP(rt), `[
		{"name":"skill_notes","title":"Notes","description":"Keeps notes","inputSchema":`+emptySchema+`,
		 "annotations":{"title":"Notes","readOnlyHint":false,"openWorldHint":false}},
		{"name":"skill_refused","title":"Refused","description":"Asks for a host it does not get","inputSchema":`+emptySchema+`,
		 "annotations":{"title":"Refused","readOnlyHint":true,"openWorldHint":false}},
		{"name":"skill_weather","title":"Weather","description":"Weather for a city","inputSchema":`+weatherSchema+`,
		 "annotations":{"title":"Weather","readOnlyHint":false,"openWorldHint":true}},
		{"name":"skill_word_count","title":"Word count","description":"Counts words","inputSchema":`+wordCountSchema+`,
		 "outputSchema":{"type":"object"},
		 "annotations":{"title":"Word count","readOnlyHint":true,"openWorldHint":false}}
	]`)
}

func TestWellKnown(t *testing.T) {
	rt := testCatalog(t)
	m := tooldef.WellKnown(rt, "")
	m.Tools = m.Tools[len(m.Tools)-2:] // weather and word-count
	sameJSON(t, m, `{"version":"2025-10-01","provider":"skillbox","tools":[
		{"name":"skill_weather","title":"Weather","description":"Weather for a city","args_schema":`+weatherSchema+`,
		 "skill_version_id":"weather@sha256:`+hashOf(t, rt, "weather")+`","visibility":"org","tags":[]},
		{"name":"skill_word_count","title":"Word count","description":"Counts words","args_schema":`+wordCountSchema+`,
		 "skill_version_id":"word-count@sha256:`+hashOf(t, rt, "word-count")+`","visibility":"org","tags":["text","count"]}
	]}`)
	if got := tooldef.WellKnown(rt, "acme").Provider; got != "acme" {
		t.Errorf("provider %q", got)
	}
	sameJSON(t, tooldef.WellKnown(fakeCatalog{}, "p"), `{"version":"2025-10-01","provider":"p","tools":[]}`)
}

// TestEmptyCatalog: no skills give empty lists, which marshal as [], never null: a provider
// refuses "tools": null.
func TestEmptyCatalog(t *testing.T) {
	for name, v := range map[string]any{"openai": tooldef.OpenAI(fakeCatalog{}), "anthropic": tooldef.Anthropic(fakeCatalog{}), "mcp": tooldef.MCP(fakeCatalog{})} {
		if b, _ := json.Marshal(v); string(b) != "[]" {
			t.Errorf("%s: %s", name, b)
		}
	}
}

// TestToolsCopySchemas: a caller changing a tool's schema does not change the skill's.
func TestToolsCopySchemas(t *testing.T) {
	rt := testCatalog(t)
	tools := tooldef.Anthropic(rt)
	for i := range tools[0].InputSchema {
		tools[0].InputSchema[i] = ' '
	}
	if again := tooldef.Anthropic(rt); !json.Valid(again[0].InputSchema) {
		t.Fatalf("the skill's schema was changed: %q", again[0].InputSchema)
	}
}

// TestToolNamesRoundTrip: every tool of the catalog maps back to its skill, and is a valid name
// for every provider.
func TestToolNamesRoundTrip(t *testing.T) {
	rt := testCatalog(t)
	for _, tool := range tooldef.Anthropic(rt) {
		id, ok := tooldef.SkillID(tool.Name)
		if !ok {
			t.Fatalf("%s does not map back", tool.Name)
		}
		if _, err := rt.Skill(id); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
}
