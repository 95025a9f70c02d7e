package toolset

import (
	"fmt"
	"strings"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
)

// Listing is an offer's tools in one vendor's format, as GET /v1/tools and `skillbox tools` hand
// them out, and the tools that format left out, with why.
type Listing struct {
	// Tools is the list, ready to paste into that vendor's API: []tooldef.OpenAITool,
	// []tooldef.AnthropicTool or []tooldef.MCPTool.
	Tools any
	// LeftOut are the skills' tools the vendor would refuse (and so left out), and the rules
	// about the whole request the list breaks (tooldef.LeftOut, tooldef.ListBreaches).
	LeftOut []tooldef.Breach
}

// ParseFormat reads a tool list format by name, case-insensitively; "" is OpenAI's.
func ParseFormat(s string) (tooldef.Format, error) {
	switch f := tooldef.Format(strings.ToLower(s)); f {
	case "":
		return tooldef.FormatOpenAI, nil
	case tooldef.FormatOpenAI, tooldef.FormatAnthropic, tooldef.FormatMCP:
		return f, nil
	}
	return "", fmt.Errorf("format %q: use %s, %s or %s", s, tooldef.FormatOpenAI, tooldef.FormatAnthropic, tooldef.FormatMCP)
}

// List returns the offer's tools over r in format f (one of ParseFormat's), and what it left out.
func (o Offer) List(r Runner, f tooldef.Format) Listing {
	var l Listing
	n := 0
	switch f {
	case tooldef.FormatAnthropic:
		list := o.Anthropic(r)
		l.Tools, n = list, len(list)
	case tooldef.FormatMCP:
		list := o.MCP(r)
		l.Tools, n = list, len(list)
	default:
		f = tooldef.FormatOpenAI
		list := o.OpenAI(r)
		l.Tools, n = list, len(list)
	}
	if o.SkillTools() {
		l.LeftOut = append(tooldef.LeftOut(skillToolCatalog(r), f), devaiLeftOut(r)...)
	}
	l.LeftOut = append(l.LeftOut, tooldef.ListBreaches(f, n)...)
	return l
}
