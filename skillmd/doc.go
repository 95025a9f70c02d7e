// Package skillmd reads the Agent Skills SKILL.md format: YAML frontmatter (name, description and
// optional fields) followed by Markdown instructions for a model. It also renders those
// instructions for a call ([Render]: the base-directory line and $ARGUMENTS substitution) and
// reads a skill's other files safely ([ReadResource], [ListResources]).
//
// A SKILL.md looks like this:
//
//	---
//	name: pdf-tools
//	description: Extracts text and tables from PDF files. Use it when the user gives you a PDF.
//	allowed-tools: Read, Bash(python3:*)
//	---
//
//	# PDF tools
//	...
//
// The package depends on nothing of Skillbox's, so a SKILL.md can be checked, listed and rendered
// without a runtime; the runtime and its faces (HTTP, MCP, agent helpers) use it for instruction
// skills.
//
// Progressive disclosure is the reason for two readers: [ReadMeta] reads at most the first 64 KiB
// of a file and keeps no body, which is what listing a thousand skills for a model needs;
// [Parse] keeps the body, which is what loading one skill needs.
package skillmd

// Doc is a parsed SKILL.md.
type Doc struct {
	// Name and Description are required and never empty; surrounding whitespace is dropped (a
	// YAML block scalar such as "description: >" ends in a newline).
	Name        string `json:"name"`
	Description string `json:"description"`
	// License and Compatibility are optional free text.
	License       string `json:"license,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
	// Metadata is the optional "metadata" mapping, as written.
	Metadata map[string]any `json:"metadata,omitempty"`
	// AllowedTools is the optional "allowed-tools" field: a YAML list, or one string of names
	// separated by spaces or commas, as Claude Code writes it ("Read, Grep, Bash(git add:*)").
	// It is parsed, never enforced.
	AllowedTools []string `json:"allowed-tools,omitempty"`
	// Extra holds every other frontmatter key (version, author, tags, ...), so nothing an author
	// wrote is lost. Values are JSON-safe: mappings have string keys, and .nan and .inf are
	// kept as the strings "NaN", "+Inf" and "-Inf".
	Extra map[string]any `json:"extra,omitempty"`
	// Body is the Markdown after the frontmatter, from its first non-blank line, otherwise
	// unchanged (CRLF line ends are kept). It is empty when the Doc came from [ParseMeta] or
	// [ReadMeta].
	Body string `json:"body,omitempty"`
}

// Clone returns a deep copy of d (nil for nil), for callers that hand a shared Doc out.
func (d *Doc) Clone() *Doc {
	if d == nil {
		return nil
	}
	c := *d
	c.AllowedTools = append([]string(nil), d.AllowedTools...)
	c.Metadata, _ = cloneValue(d.Metadata).(map[string]any)
	c.Extra, _ = cloneValue(d.Extra).(map[string]any)
	return &c
}

// cloneValue copies the JSON-safe values a frontmatter decodes to: maps and lists are copied,
// scalars are immutable.
func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			return t
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
