package tooldef

import (
	"bytes"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/spec"
)

// LeftOut returns why format f leaves tools of c out of its list: a [Breach] of one of f's
// rules for each skill left out (the first rule it breaks), in c's order. A face that hands out
// the list logs these, or returns them beside it, so that a missing tool is explained where it
// is missed; `skillbox validate` reports every rule a skill breaks ([VendorBreaches]).
func LeftOut[S catalog.Skill](c catalog.Catalog[S], f Format) []Breach {
	var out []Breach
	for _, t := range tools(c) {
		out = append(out, t.breaches(f, true)...)
	}
	return out
}

// ToolsetLeftOut is [LeftOut] for tools handed to the toolset converters ([OpenAIToolset],
// [AnthropicToolset], [MCPToolset]).
func ToolsetLeftOut(tools []Tool, f Format) []Breach {
	var out []Breach
	for _, d := range toolsetDefs(tools) {
		out = append(out, d.breaches(f, true)...)
	}
	return out
}

// ListBreaches returns the rules of format f about a whole request that a list of n tools
// breaks (OpenAI takes at most 128 tools). Nothing is left out for them: which tools to send
// is the caller's choice, and the breach says how to send fewer.
func ListBreaches(f Format, n int) []Breach {
	var out []Breach
	for _, r := range rules {
		if r.Request && r.AppliesTo(f) {
			if p := r.list(n); p != "" {
				out = append(out, Breach{Vendor: r.Vendor, Rule: r.ID, Problem: p})
			}
		}
	}
	return out
}

// VendorBreaches returns every rule, of every vendor, that the tool of skill s breaks, with the
// formats that leave it out; nil when s keeps them all, or has no tool (it is not executable, or
// is broken).
func VendorBreaches(s catalog.Skill) []Breach {
	if !catalog.Present(s) || s.Kind() != spec.Executable || s.Manifest() == nil || s.Schema() == nil {
		return nil
	}
	d := &toolDef{skill: s.ID(), name: Name(s.ID()), description: s.Description(), schema: bytes.Clone(s.Schema().JSON()), compiled: s.Schema()}
	return d.breaches("", false)
}
