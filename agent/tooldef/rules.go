package tooldef

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/spec"
)

// Vendor names whose documentation a [Rule] comes from.
type Vendor string

// The vendors whose rules this package keeps.
const (
	VendorOpenAI    Vendor = "openai"
	VendorAnthropic Vendor = "anthropic"
	VendorMCP       Vendor = "mcp"
)

// Format is a tool list this package writes.
type Format string

// The formats: [OpenAI], [Anthropic], [MCP] and [WellKnown] (with the toolset's
// converters of the same shapes).
const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatMCP       Format = "mcp"
	FormatWellKnown Format = "well-known"
)

// Rule is one documented rule of a vendor that, broken by one tool, makes the vendor refuse the
// whole request (OpenAI, Anthropic: HTTP 400, no tool works), or makes a client that checks an
// MCP tools/list result against the protocol's schema refuse the whole list.
//
// The rules are data, written once ([VendorRules]): the format builders leave out a tool that
// breaks a rule of their format, `skillbox validate` reports every rule a skill's tool breaks,
// and the faces that hand out a list say what was left out ([LeftOut]).
type Rule struct {
	// Vendor is whose documentation states the rule.
	Vendor Vendor
	// ID names the rule among its vendor's: "tool-name", "description-length", ...
	ID string
	// Text states the rule.
	Text string
	// Source is where the vendor documents it; for a limit only its API states, the error the
	// API answers with.
	Source string
	// Formats are the lists that leave out a tool breaking the rule: the vendor's own, and, for
	// the name rules, the lists whose readers hand the tools on to a vendor (MCP clients built
	// on the OpenAI or Anthropic SDKs, agents registering /.well-known/skills.json entries as
	// functions), where one bad name fails the reader's every request.
	Formats []Format
	// Request is set for a rule about the whole list (how many tools), which leaves nothing out:
	// it is reported, and the caller chooses what to send.
	Request bool

	tool     func(d *toolDef) string // "" when d keeps the rule, else what breaks it
	bySchema bool                    // tool reads the schema only: its verdicts are cached
	list     func(n int) string      // for a Request rule: "" when n tools are accepted
}

// The limits the rules state.
const (
	// MaxOpenAIToolName and MaxAnthropicToolName are the documented name lengths. Anthropic's
	// API accepts up to 128 characters, but its documentation says 64: the documented bound is
	// kept, since it is what Anthropic may enforce without notice.
	MaxOpenAIToolName    = 64
	MaxAnthropicToolName = 64
	// MaxMCPToolName is the MCP specification's (2025-11-25) name length.
	MaxMCPToolName = 128
	// MaxOpenAIDescription is the length, in characters, of the longest function description
	// OpenAI accepts.
	MaxOpenAIDescription = 1024
	// MaxOpenAITools is how many tools one OpenAI request may hold.
	MaxOpenAITools = 128
)

// vendorNameChars and mcpNameChars report whether a name's characters are those OpenAI and
// Anthropic take (a-z, A-Z, 0-9, '_', '-'), and those MCP takes ('.' too).
func vendorNameChars(name string) bool { return nameChars(name, false) }
func mcpNameChars(name string) bool    { return nameChars(name, true) }

func nameChars(name string, dot bool) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', dot && c == '.':
		default:
			return false
		}
	}
	return true
}

var rules = []Rule{
	{
		Vendor:  VendorOpenAI,
		ID:      "tool-name",
		Text:    fmt.Sprintf("a function's name is 1 to %d of a-z, A-Z, 0-9, '_' and '-'", MaxOpenAIToolName),
		Source:  "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools (FunctionObject.name)",
		Formats: []Format{FormatOpenAI, FormatMCP, FormatWellKnown},
		tool: func(d *toolDef) string {
			return nameProblem(d.name, MaxOpenAIToolName, vendorNameChars, "a-z, A-Z, 0-9, '_' and '-'")
		},
	},
	{
		Vendor:  VendorOpenAI,
		ID:      "description-length",
		Text:    fmt.Sprintf("a function's description has at most %d characters", MaxOpenAIDescription),
		Source:  "the API's 400 string_above_max_length: Invalid 'tools[N].function.description': string too long",
		Formats: []Format{FormatOpenAI},
		tool: func(d *toolDef) string {
			if n := utf8.RuneCountInString(d.description); n > MaxOpenAIDescription {
				return fmt.Sprintf("the description has %d characters, more than %d: shorten it (the SKILL.md body is the place for detail)", n, MaxOpenAIDescription)
			}
			return ""
		},
	},
	{
		Vendor:   VendorOpenAI,
		ID:       "parameters-root",
		bySchema: true,
		Text:     `parameters is an object schema ("type": "object") with no oneOf, anyOf, allOf, enum or not at its top level`,
		Source:   "the API's 400 invalid_function_parameters: schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level",
		Formats:  []Format{FormatOpenAI},
		tool:     func(d *toolDef) string { return rootProblem(d, "oneOf", "anyOf", "allOf", "enum", "not") },
	},
	{
		Vendor:   VendorOpenAI,
		ID:       "array-items",
		bySchema: true,
		Text:     `every array schema in parameters has "items"`,
		Source:   "the API's 400 invalid_function_parameters: In context=(...), array schema missing items",
		Formats:  []Format{FormatOpenAI},
		tool:     arrayItemsProblem,
	},
	{
		Vendor:  VendorOpenAI,
		ID:      "tool-count",
		Text:    fmt.Sprintf("a request has at most %d tools", MaxOpenAITools),
		Source:  "the API's 400 array_above_max_length: Invalid 'tools': array too long",
		Formats: []Format{FormatOpenAI},
		Request: true,
		list: func(n int) string {
			if n > MaxOpenAITools {
				return fmt.Sprintf("the list has %d tools, more than the %d OpenAI takes in one request: send fewer, or offer the disclosure toolset alone (its run_skill runs every skill)", n, MaxOpenAITools)
			}
			return ""
		},
	},
	{
		Vendor:  VendorAnthropic,
		ID:      "tool-name",
		Text:    fmt.Sprintf("a tool's name matches ^[a-zA-Z0-9_-]{1,%d}$", MaxAnthropicToolName),
		Source:  "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools",
		Formats: []Format{FormatAnthropic, FormatMCP, FormatWellKnown},
		tool: func(d *toolDef) string {
			return nameProblem(d.name, MaxAnthropicToolName, vendorNameChars, "a-z, A-Z, 0-9, '_' and '-'")
		},
	},
	{
		Vendor:   VendorAnthropic,
		ID:       "input-schema-root",
		bySchema: true,
		Text:     `input_schema is an object schema ("type": "object") with no oneOf, allOf or anyOf at its top level`,
		Source:   "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools; the API's 400: input_schema does not support oneOf, allOf, or anyOf at the top level",
		Formats:  []Format{FormatAnthropic},
		tool:     func(d *toolDef) string { return rootProblem(d, "oneOf", "allOf", "anyOf") },
	},
	{
		Vendor:  VendorMCP,
		ID:      "tool-name",
		Text:    fmt.Sprintf("a tool's name is 1 to %d of A-Z, a-z, 0-9, '_', '-' and '.'", MaxMCPToolName),
		Source:  "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names",
		Formats: []Format{FormatMCP, FormatWellKnown},
		tool: func(d *toolDef) string {
			return nameProblem(d.name, MaxMCPToolName, mcpNameChars, "A-Z, a-z, 0-9, '_', '-' and '.'")
		},
	},
	{
		Vendor:   VendorMCP,
		ID:       "input-schema-type",
		bySchema: true,
		Text:     `inputSchema is an object schema ("type": "object")`,
		Source:   "https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-11-25/schema.json ($defs.Tool.properties.inputSchema)",
		// skills.json readers register each entry with some vendor, and every one of them
		// requires an object schema.
		Formats: []Format{FormatMCP, FormatWellKnown},
		tool: func(d *toolDef) string {
			root, problem := d.root()
			if problem != "" {
				return problem
			}
			if root["type"] != "object" {
				return fmt.Sprintf(`the argument schema's "type" is %s, not "object"`, jsonText(root["type"]))
			}
			return ""
		},
	},
	{
		Vendor:   VendorMCP,
		ID:       "input-schema-properties",
		bySchema: true,
		Text:     `inputSchema's "properties" are objects and its "required" lists strings`,
		Source:   "https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-11-25/schema.json ($defs.Tool.properties.inputSchema)",
		Formats:  []Format{FormatMCP},
		tool: func(d *toolDef) string {
			root, problem := d.root()
			if problem != "" {
				return "" // the type rule says so
			}
			return mcpPropertiesProblem(root)
		},
	},
}

// VendorRules returns every rule, a copy: OpenAI's, then Anthropic's, then MCP's.
func VendorRules() []Rule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].Formats = slices.Clone(out[i].Formats)
	}
	return out
}

// AppliesTo reports whether format f leaves out a tool that breaks r.
func (r Rule) AppliesTo(f Format) bool { return slices.Contains(r.Formats, f) }

// Breach is a tool that breaks a [Rule], or (Tool empty) a list that does.
type Breach struct {
	// Tool is the tool's name; Skill its skill's id, empty for a toolset tool.
	Tool  string `json:"tool,omitempty"`
	Skill string `json:"skill,omitempty"`
	// Vendor and Rule name the rule ([Rule.Vendor], [Rule.ID]).
	Vendor Vendor `json:"vendor"`
	Rule   string `json:"rule"`
	// Problem says what breaks it and how to fix it.
	Problem string `json:"problem"`
	// LeftOutOf are the formats that leave the tool out ([Rule.Formats]); none for a list.
	LeftOutOf []Format `json:"leftOutOf,omitempty"`
}

func (b Breach) String() string {
	subject := b.Tool
	if b.Skill != "" {
		subject = fmt.Sprintf("skill %q (tool %s)", b.Skill, b.Tool)
	}
	if subject == "" {
		subject = "the tool list"
	}
	s := fmt.Sprintf("%s breaks %s's rule %s: %s", subject, b.Vendor, b.Rule, b.Problem)
	if n := len(b.LeftOutOf); n > 0 {
		names := make([]string, n)
		for i, f := range b.LeftOutOf {
			names[i] = string(f)
		}
		list := names[0]
		if n > 1 {
			list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
		}
		s += fmt.Sprintf(" (left out of the tool lists for %s)", list)
	}
	return s
}

// toolDef is a tool as every format sees it, whatever shape it is written in. Its schema is
// parsed once, for all the rules.
type toolDef struct {
	skill, name, description string
	schema                   json.RawMessage
	// compiled is the skill's schema, by which the verdicts of the schema rules are cached; nil
	// for a toolset tool.
	compiled *spec.Schema

	parsed  bool
	rootV   map[string]any
	problem string
}

// root returns the schema's top-level object, or why there is none.
func (d *toolDef) root() (map[string]any, string) {
	if !d.parsed {
		d.parsed = true
		dec := json.NewDecoder(bytes.NewReader(d.schema))
		dec.UseNumber()
		var v any
		switch err := dec.Decode(&v); {
		case len(bytes.TrimSpace(d.schema)) == 0:
			d.problem = "the tool has no argument schema"
		case err != nil:
			d.problem = "the argument schema is not JSON: " + err.Error()
		default:
			if d.rootV, _ = v.(map[string]any); d.rootV == nil {
				d.problem = "the argument schema is not a JSON object"
			}
		}
	}
	return d.rootV, d.problem
}

// breaches returns the rules of format f that d breaks (every tool rule when f is ""), and
// stops at the first when first is set.
func (d *toolDef) breaches(f Format, first bool) []Breach {
	var out []Breach
	for i := range rules {
		r := &rules[i]
		if r.Request || (f != "" && !r.AppliesTo(f)) {
			continue
		}
		if p := d.check(i); p != "" {
			out = append(out, Breach{Tool: d.name, Skill: d.skill, Vendor: r.Vendor, Rule: r.ID, Problem: p, LeftOutOf: slices.Clone(r.Formats)})
			if first {
				break
			}
		}
	}
	return out
}

// schemaVerdicts caches, by schema, what the rules that read only the schema say of it: a list
// of a thousand skills would otherwise parse a thousand schemas on every request, and skills
// share few schemas (the runtime shares one *spec.Schema between equal ones). At most
// maxSchemaVerdicts are kept; when full, it starts over.
var schemaVerdicts = struct {
	sync.Mutex
	m map[*spec.Schema][]string
}{m: map[*spec.Schema][]string{}}

const maxSchemaVerdicts = 4096

// check returns what breaks rule i in d, or "".
func (d *toolDef) check(i int) string {
	if !rules[i].bySchema || d.compiled == nil {
		return rules[i].tool(d)
	}
	schemaVerdicts.Lock()
	v, ok := schemaVerdicts.m[d.compiled]
	schemaVerdicts.Unlock()
	if !ok {
		v = make([]string, len(rules))
		for j := range rules {
			if rules[j].bySchema {
				v[j] = rules[j].tool(d)
			}
		}
		schemaVerdicts.Lock()
		if len(schemaVerdicts.m) >= maxSchemaVerdicts {
			schemaVerdicts.m = map[*spec.Schema][]string{}
		}
		schemaVerdicts.m[d.compiled] = v
		schemaVerdicts.Unlock()
	}
	return v[i]
}

// keeps reports whether format f may list d: it breaks none of f's rules.
func (d *toolDef) keeps(f Format) bool { return len(d.breaches(f, true)) == 0 }

func nameProblem(name string, max int, chars func(string) bool, allowed string) string {
	switch {
	case name == "":
		return "the name is empty"
	case len(name) > max && strings.HasPrefix(name, ToolPrefix):
		return fmt.Sprintf("the name %q has %d characters, more than %d (a skill id of at most %d characters fits)", name, len(name), max, max-len(ToolPrefix))
	case len(name) > max:
		return fmt.Sprintf("the name %q has %d characters, more than %d", name, len(name), max)
	case !chars(name):
		return fmt.Sprintf("the name %q has characters other than %s", name, allowed)
	}
	return ""
}

// rootProblem checks the schema is an object schema without the keywords banned at its top.
func rootProblem(d *toolDef, banned ...string) string {
	root, problem := d.root()
	if problem != "" {
		return problem
	}
	if root["type"] != "object" {
		return fmt.Sprintf(`the argument schema's "type" is %s, not "object"`, jsonText(root["type"]))
	}
	var found []string
	for _, k := range banned {
		if _, has := root[k]; has {
			found = append(found, k)
		}
	}
	if len(found) > 0 {
		return fmt.Sprintf("the argument schema has %v at its top level: move the alternatives into the properties, or split the skill", found)
	}
	return ""
}

// maxSchemaWalk bounds how deeply arrayItemsProblem follows a schema: a manifest's schema nests
// at most docbound.MaxDepth levels, and a caller's tool deeper than twice that is refused rather
// than walked.
const maxSchemaWalk = 2 * docbound.MaxDepth

// arrayItemsProblem finds an array schema without "items", anywhere in the schema.
func arrayItemsProblem(d *toolDef) string {
	root, problem := d.root()
	if problem != "" {
		return "" // the root rule says so
	}
	where, found := arrayWithoutItems(root, "", 0)
	if !found {
		return ""
	}
	if where == "" {
		where = "/"
	}
	return fmt.Sprintf(`the array schema at %s has no "items": say what the array holds ("items": {"type": "string"}, or {} for anything)`, where)
}

// Keywords whose value is a subschema, a map of them, or a list of them.
var (
	subschemaKeys     = []string{"items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
	subschemaMapKeys  = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	subschemaListKeys = []string{"prefixItems", "anyOf", "oneOf", "allOf"}
)

func arrayWithoutItems(v any, at string, depth int) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	if depth > maxSchemaWalk {
		return at + " (nested too deeply to check)", true
	}
	if hasType(m["type"], "array") {
		if _, has := m["items"]; !has {
			return at, true
		}
	}
	for _, k := range subschemaKeys {
		if w, found := arrayWithoutItems(m[k], at+"/"+k, depth+1); found {
			return w, true
		}
	}
	for _, k := range subschemaMapKeys {
		sub, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(sub) {
			if w, found := arrayWithoutItems(sub[name], at+"/"+k+"/"+name, depth+1); found {
				return w, true
			}
		}
	}
	for _, k := range subschemaListKeys {
		list, _ := m[k].([]any)
		for i, s := range list {
			if w, found := arrayWithoutItems(s, fmt.Sprintf("%s/%s/%d", at, k, i), depth+1); found {
				return w, true
			}
		}
	}
	return "", false
}

// mcpObjectSchemaProblem checks what the MCP schema requires of an inputSchema or outputSchema.
func mcpObjectSchemaProblem(root map[string]any) string {
	if root["type"] != "object" {
		return fmt.Sprintf(`the schema's "type" is %s, not "object"`, jsonText(root["type"]))
	}
	return mcpPropertiesProblem(root)
}

// mcpPropertiesProblem checks an object schema's "properties" and "required" as MCP's schema
// does: a client that checks tools/list against it refuses the whole list otherwise.
func mcpPropertiesProblem(root map[string]any) string {
	if p, has := root["properties"]; has {
		props, ok := p.(map[string]any)
		if !ok {
			return `the schema's "properties" is not an object`
		}
		for _, name := range sortedKeys(props) {
			if _, ok := props[name].(map[string]any); !ok {
				return fmt.Sprintf(`the schema of property %q is %s, not an object: write {} for "anything"`, name, jsonText(props[name]))
			}
		}
	}
	if r, has := root["required"]; has {
		list, ok := r.([]any)
		if !ok {
			return `the schema's "required" is not a list`
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				return `the schema's "required" lists something other than names`
			}
		}
	}
	return ""
}

func hasType(t any, name string) bool {
	switch v := t.(type) {
	case string:
		return v == name
	case []any:
		return slices.Contains(v, any(name))
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func jsonText(v any) string {
	if v == nil {
		return "missing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
