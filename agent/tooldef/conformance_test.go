package tooldef_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// The formats this package writes, checked against the meta-schemas of testdata/vendor: each
// restates one vendor's documented rules for what it accepts in a request (or, for MCP, in a
// tools/list result), and says where each rule comes from.
const (
	metaOpenAI    = "openai-tools.schema.json"
	metaAnthropic = "anthropic-tools.schema.json"
	metaMCP       = "mcp-tools.schema.json"
	metaWellKnown = "wellknown.schema.json"
)

const metaBase = "https://skillbox.test/vendor/"

// vendorSchemas compiles the meta-schemas of testdata/vendor, which may refer to each other.
func vendorSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names := []string{metaOpenAI, metaAnthropic, metaMCP, metaWellKnown}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "vendor", name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(metaBase+name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range append(names, metaOpenAI+"#/$defs/name", metaAnthropic+"#/$defs/name") {
		s, err := c.Compile(metaBase + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// conforms reports why v, as JSON, breaks the meta-schema, or nil.
func conforms(meta *jsonschema.Schema, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return meta.Validate(doc)
}

// strictRequiredEverywhere checks what strict mode needs and JSON Schema cannot say: every
// object schema's "required" names exactly its properties, at most 5 levels of nesting, at most
// 100 properties in all.
func strictRequiredEverywhere(schema json.RawMessage) error {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return err
	}
	total := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if depth > 5 {
			return fmt.Errorf("nested deeper than 5 levels")
		}
		if props, ok := m["properties"].(map[string]any); ok {
			total += len(props)
			var keys, req []string
			for k := range props {
				keys = append(keys, k)
			}
			list, _ := m["required"].([]any)
			for _, r := range list {
				name, _ := r.(string)
				req = append(req, name)
			}
			slices.Sort(keys)
			slices.Sort(req)
			if !slices.Equal(keys, req) {
				return fmt.Errorf("required %v does not list every property %v", req, keys)
			}
			for _, p := range props {
				if err := walk(p, depth+1); err != nil {
					return err
				}
			}
		}
		if err := walk(m["items"], depth+1); err != nil {
			return err
		}
		for _, key := range []string{"anyOf"} {
			list, _ := m[key].([]any)
			for _, b := range list {
				if err := walk(b, depth); err != nil {
					return err
				}
			}
		}
		defs, _ := m["$defs"].(map[string]any)
		for _, d := range defs {
			if err := walk(d, depth); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 1); err != nil {
		return err
	}
	if total > 100 {
		return fmt.Errorf("%d properties, more than 100", total)
	}
	return nil
}

// emitted is every list a catalog is offered as: the skills' tools and the toolset's, in each
// format.
type emitted struct {
	openai    []tooldef.OpenAITool
	anthropic []tooldef.AnthropicTool
	mcp       []tooldef.MCPTool
	wellKnown tooldef.WellKnownManifest
}

func emit(r toolset.Runner) emitted {
	ts := toolset.Tools(r)
	return emitted{
		openai:    append(tooldef.OpenAI(r), tooldef.OpenAIToolset(ts)...),
		anthropic: append(tooldef.Anthropic(r), tooldef.AnthropicToolset(ts)...),
		mcp:       append(tooldef.MCP(r), tooldef.MCPToolset(ts)...),
		wellKnown: tooldef.WellKnown(r, ""),
	}
}

// check validates every list of e against its vendor's meta-schema.
func (e emitted) check(t *testing.T, metas map[string]*jsonschema.Schema) {
	t.Helper()
	if err := conforms(metas[metaOpenAI], e.openai); err != nil {
		t.Errorf("openai: %v", err)
	}
	for _, tool := range e.openai {
		if tool.Function.Strict {
			if err := strictRequiredEverywhere(tool.Function.Parameters); err != nil {
				t.Errorf("openai: %s is strict but %v", tool.Function.Name, err)
			}
		}
	}
	if err := conforms(metas[metaAnthropic], e.anthropic); err != nil {
		t.Errorf("anthropic: %v", err)
	}
	if err := conforms(metas[metaMCP], map[string]any{"tools": e.mcp}); err != nil {
		t.Errorf("mcp: %v", err)
	}
	// MCP clients built on the OpenAI and Anthropic SDKs hand each tool on to those APIs.
	for _, tool := range e.mcp {
		for _, vendor := range []string{metaOpenAI, metaAnthropic} {
			if err := conforms(metas[vendor+"#/$defs/name"], tool.Name); err != nil {
				t.Errorf("mcp: %s: %v", tool.Name, err)
			}
		}
	}
	if err := conforms(metas[metaWellKnown], e.wellKnown); err != nil {
		t.Errorf("well-known: %v", err)
	}
}

// names returns the tool names of each format of e.
func (e emitted) names() map[string][]string {
	out := map[string][]string{}
	for _, t := range e.openai {
		out["openai"] = append(out["openai"], t.Function.Name)
	}
	for _, t := range e.anthropic {
		out["anthropic"] = append(out["anthropic"], t.Name)
	}
	for _, t := range e.mcp {
		out["mcp"] = append(out["mcp"], t.Name)
	}
	for _, t := range e.wellKnown.Tools {
		out["well-known"] = append(out["well-known"], t.Name)
	}
	return out
}

// TestFormatsConform: the tools of the bundled skills and of the test catalog, with the
// toolset, keep to every vendor's rules.
func TestFormatsConform(t *testing.T) {
	metas := vendorSchemas(t)
	t.Run("skills", func(t *testing.T) {
		rt := newRuntime(t, filepath.Join("..", "..", "skills"), nil)
		e := emit(rt)
		skills := bundledTools(t)
		withToolset := append(slices.Clone(skills), toolset.Names()...)
		want := map[string][]string{"openai": withToolset, "anthropic": withToolset, "mcp": withToolset, "well-known": skills}
		for format, names := range e.names() {
			if !slices.Equal(names, want[format]) {
				t.Errorf("%s lists %v: want every bundled skill, then the toolset: %v", format, names, want[format])
			}
		}
		if len(e.names()) != len(want) {
			t.Errorf("formats %v, want %d", e.names(), len(want))
		}
		e.check(t, metas)
	})
	t.Run("test testCatalog", func(t *testing.T) {
		emit(testCatalog(t)).check(t, metas)
	})
}

// hostileID is as long as an id may be (63): its tool name has 69 characters.
var hostileID = "h" + strings.Repeat("x", 62)

// hostile is a manifest each of whose skills some vendor refuses, and the formats that must
// still list it: a skill left out of one vendor's list stays in the others.
var hostile = []struct {
	id, manifest string
	keptIn       []string
}{
	{"good", `"parameters":{"q":{"type":"string","required":true}}`, []string{"openai", "anthropic", "mcp", "well-known"}},
	{"one-of", `"parameters":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`, []string{"mcp", "well-known"}},
	{"any-of", `"parameters":{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"required":["a"]},{"maxProperties":0}]}`, []string{"mcp", "well-known"}},
	{"all-of", `"parameters":{"type":"object","allOf":[{"properties":{"a":{"type":"string"}}}]}`, []string{"mcp", "well-known"}},
	{"top-enum", `"parameters":{"type":"object","enum":[{"a":"x"},{}]}`, []string{"anthropic", "mcp", "well-known"}},
	{"top-not", `"parameters":{"type":"object","not":{"required":["x"]}}`, []string{"anthropic", "mcp", "well-known"}},
	{"long-description", `"description":"` + strings.Repeat("d", 2000) + `"`, []string{"anthropic", "mcp", "well-known"}},
	{"no-items", `"parameters":{"tags":{"type":"array"}}`, []string{"anthropic", "mcp", "well-known"}},
	{"nested-no-items", `"parameters":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":["array","null"]}}}}}`, []string{"anthropic", "mcp", "well-known"}},
	{"true-property", `"parameters":{"type":"object","properties":{"x":true}}`, []string{"openai", "anthropic", "well-known"}},
	{hostileID, "", nil},
}

// hostileCatalog writes the hostile skills (modules: echo) and loads them.
func hostileCatalog(t *testing.T) *runtime.Runtime {
	t.Helper()
	dir := t.TempDir()
	for _, h := range hostile {
		m := `{"id":"` + h.id + `","name":"` + h.id + `"`
		if !strings.Contains(h.manifest, `"description"`) {
			m += `,"description":"hostile ` + h.id + `"`
		}
		if h.manifest != "" {
			m += "," + h.manifest
		}
		fixture(t, dir, h.id, map[string]string{"skill.json": m + "}"}, true)
	}
	rt := newRuntime(t, dir, nil)
	for _, h := range hostile {
		if s, err := rt.Skill(h.id); err != nil || !s.Status().Usable() {
			t.Fatalf("%s does not load: %v %v", h.id, err, s.Err())
		}
	}
	return rt
}

// TestHostileManifests: a manifest one vendor would refuse is left out of that vendor's list,
// and only of that one; every list still keeps to its vendor's rules.
func TestHostileManifests(t *testing.T) {
	metas := vendorSchemas(t)
	e := emit(hostileCatalog(t))
	e.check(t, metas)
	names := e.names()
	for _, h := range hostile {
		for _, format := range []string{"openai", "anthropic", "mcp", "well-known"} {
			want := slices.Contains(h.keptIn, format)
			if got := slices.Contains(names[format], tooldef.Name(h.id)); got != want {
				t.Errorf("%s: listed in %s %v, want %v", h.id, format, got, want)
			}
		}
	}
}

// TestHostileTools: tools a caller hands the toolset converters (its own, or a later toolset
// tool) are held to the same rules: one that a vendor refuses is left out of that vendor's list.
func TestHostileTools(t *testing.T) {
	metas := vendorSchemas(t)
	obj := json.RawMessage(`{"type":"object","properties":{}}`)
	tools := []tooldef.Tool{
		{Name: "fine", Description: "Fine", Parameters: obj},
		{Name: strings.Repeat("n", 80), Description: "An 80-character name", Parameters: obj},
		{Name: "has space", Description: "A space in the name", Parameters: obj},
		{Name: "dotted.name", Description: "A dot: MCP's rules allow it, OpenAI's and Anthropic's do not", Parameters: obj},
		{Name: "", Description: "No name", Parameters: obj},
		{Name: "string_root", Description: "Not an object schema", Parameters: json.RawMessage(`{"type":"string"}`)},
		{Name: "no_schema", Description: "No schema at all"},
		{Name: "one_of", Description: "oneOf at the top", Parameters: json.RawMessage(`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`)},
		{Name: "long_description", Description: strings.Repeat("é", 1025), Parameters: obj},
	}
	e := emitted{openai: tooldef.OpenAIToolset(tools), anthropic: tooldef.AnthropicToolset(tools), mcp: tooldef.MCPToolset(tools), wellKnown: tooldef.WellKnown(fakeCatalog{}, "")}
	e.check(t, metas)
	want := map[string][]string{
		"openai":    {"fine"},
		"anthropic": {"fine", "long_description"},
		"mcp":       {"fine", "one_of", "long_description"},
	}
	got := e.names()
	for format, w := range want {
		if !slices.Equal(got[format], w) {
			t.Errorf("%s lists %q, want %q", format, got[format], w)
		}
	}
}

// TestLeftOut: each tool a format leaves out is explained, with the vendor and the rule, and
// VendorBreaches (what `skillbox validate` reports) names every rule of every vendor a skill
// breaks.
func TestLeftOut(t *testing.T) {
	rt := hostileCatalog(t)
	left := map[tooldef.Format][]string{}
	for _, f := range []tooldef.Format{tooldef.FormatOpenAI, tooldef.FormatAnthropic, tooldef.FormatMCP, tooldef.FormatWellKnown} {
		for _, b := range tooldef.LeftOut(rt, f) {
			if b.Problem == "" || !slices.Contains(b.LeftOutOf, f) || b.Tool != tooldef.Name(b.Skill) {
				t.Errorf("%s: %+v", f, b)
			}
			left[f] = append(left[f], b.Skill+" "+string(b.Vendor)+"/"+b.Rule)
		}
	}
	want := map[tooldef.Format][]string{
		tooldef.FormatOpenAI: {"one-of openai/parameters-root", "any-of openai/parameters-root", "all-of openai/parameters-root",
			"top-enum openai/parameters-root", "top-not openai/parameters-root", "long-description openai/description-length",
			"no-items openai/array-items", "nested-no-items openai/array-items", hostileID + " openai/tool-name"},
		tooldef.FormatAnthropic: {"one-of anthropic/input-schema-root", "any-of anthropic/input-schema-root", "all-of anthropic/input-schema-root",
			hostileID + " anthropic/tool-name"},
		tooldef.FormatMCP:       {"true-property mcp/input-schema-properties", hostileID + " openai/tool-name"},
		tooldef.FormatWellKnown: {hostileID + " openai/tool-name"},
	}
	for f, w := range want {
		slices.Sort(w)
		slices.Sort(left[f])
		if !slices.Equal(left[f], w) {
			t.Errorf("%s left out %q, want %q", f, left[f], w)
		}
	}

	s, err := rt.Skill(hostileID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range tooldef.VendorBreaches(s) {
		got = append(got, string(b.Vendor)+"/"+b.Rule)
	}
	if w := []string{"openai/tool-name", "anthropic/tool-name"}; !slices.Equal(got, w) {
		t.Errorf("%s breaks %q, want %q", hostileID, got, w)
	}
	if b := tooldef.VendorBreaches(s); len(b) > 0 && !strings.Contains(b[0].String(), "has 69 characters, more than 64 (a skill id of at most 58 characters fits)") {
		t.Errorf("the breach does not say how to fix it: %s", b[0])
	}
	good, _ := rt.Skill("good")
	if b := tooldef.VendorBreaches(good); b != nil {
		t.Errorf("good breaks %v", b)
	}
}

// TestListBreaches: OpenAI refuses a request of more than 128 tools; the breach says what to do.
func TestListBreaches(t *testing.T) {
	if b := tooldef.ListBreaches(tooldef.FormatOpenAI, tooldef.MaxOpenAITools); b != nil {
		t.Errorf("128 tools: %v", b)
	}
	b := tooldef.ListBreaches(tooldef.FormatOpenAI, tooldef.MaxOpenAITools+1)
	if len(b) != 1 || b[0].Rule != "tool-count" || !strings.Contains(b[0].Problem, "disclosure toolset") {
		t.Errorf("129 tools: %v", b)
	}
	if b := tooldef.ListBreaches(tooldef.FormatAnthropic, 1000); b != nil {
		t.Errorf("anthropic has no tool-count rule: %v", b)
	}
}

// TestToolsetKeepsVendorRules: the toolset keeps every rule of every format (rules_test.go checks
// that every rule is documented).
func TestToolsetKeepsVendorRules(t *testing.T) {
	rt := newRuntime(t, t.TempDir(), nil)
	for _, f := range []tooldef.Format{tooldef.FormatOpenAI, tooldef.FormatAnthropic, tooldef.FormatMCP, tooldef.FormatWellKnown} {
		if b := tooldef.ToolsetLeftOut(toolset.Tools(rt), f); b != nil {
			t.Errorf("%s leaves toolset tools out: %v", f, b)
		}
	}
}

// TestHostileCatalog: a Catalog need not be a Runtime (runtime.NewSkill builds skills without a
// package, for a filtered or synthetic view), so the formats hold what it hands them to the
// same rules: an 80-character id, an id with characters no vendor takes, a schema whose root is
// not an object.
func TestHostileCatalog(t *testing.T) {
	metas := vendorSchemas(t)
	skill := func(id, params string) *runtime.Skill {
		return mustSkill(runtime.SkillSpec{ID: id, Kind: spec.Executable, Status: catalog.StatusActive,
			Manifest: &spec.Manifest{ID: id, Name: id, Description: "d", Parameters: json.RawMessage(params)}})
	}
	long := strings.Repeat("i", 80)
	c := fakeCatalog{
		skill("fine", ""),
		skill(long, ""),
		skill("Dotted.Id", ""),
		skill("string-root", `{"type":"string"}`),
	}
	e := emitted{openai: tooldef.OpenAI(c), anthropic: tooldef.Anthropic(c), mcp: tooldef.MCP(c), wellKnown: tooldef.WellKnown(c, "")}
	e.check(t, metas)
	for format, names := range e.names() {
		if !slices.Equal(names, []string{"skill_fine"}) {
			t.Errorf("%s lists %q, want only skill_fine", format, names)
		}
	}
}

// TestVendorRulesIsACopy: changing what VendorRules returns changes no list.
func TestVendorRulesIsACopy(t *testing.T) {
	for _, r := range tooldef.VendorRules() {
		for i := range r.Formats {
			r.Formats[i] = "nothing"
		}
	}
	if b := tooldef.LeftOut(fakeCatalog{mustSkill(runtime.SkillSpec{ID: strings.Repeat("x", 70), Kind: spec.Executable, Status: catalog.StatusActive,
		Manifest: &spec.Manifest{Description: "d"}})}, tooldef.FormatOpenAI); len(b) != 1 {
		t.Errorf("the rules were changed through VendorRules: %v", b)
	}
}
