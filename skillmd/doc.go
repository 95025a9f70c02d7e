// Package skillmd reads the Agent Skills SKILL.md format: YAML frontmatter (name, description and
// optional fields) followed by Markdown instructions for a model. It also renders those
// instructions for a call ([Render]: the base-directory line, and $ARGUMENTS, $ARGUMENTS[N], $N
// and ${CLAUDE_SKILL_DIR} replaced as Claude Code replaces them) and reads a skill's other files
// safely ([ReadResource], [ListResources]).
//
// It reads what Claude Code reads: a file without frontmatter, without a name or a description,
// or with an unquoted ": " in a value loads, with warnings ([Doc.Warnings]) that cite the Agent
// Skills rule it breaks; [Check] reports the format's other rules. Only what no reader can use is
// an error.
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
	// Name is the frontmatter's name, or "" when the file has none (or an empty one): the caller
	// names the skill after its directory then, as Claude Code does, and Warnings says so.
	// Description is never empty: the frontmatter's, else the body's first paragraph (see
	// [Parse]). Surrounding whitespace is dropped from both (a YAML block scalar such as
	// "description: >" ends in a newline).
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
	// ArgumentHint is Claude Code's optional "argument-hint": what arguments the skill expects,
	// such as "[issue-number] [priority]", shown where arguments are asked for.
	ArgumentHint string `json:"argument-hint,omitempty"`
	// DisableModelInvocation is Claude Code's optional "disable-model-invocation": true keeps the
	// skill from a model (it is not listed to one, and a model cannot load or run it); a user
	// still invokes it (an MCP prompt, the CLI, the HTTP API).
	DisableModelInvocation bool `json:"disable-model-invocation,omitempty"`
	// Extra holds every other frontmatter key (version, author, tags, ...), so nothing an author
	// wrote is lost. Values are JSON-safe: mappings have string keys, and .nan and .inf are
	// kept as the strings "NaN", "+Inf" and "-Inf".
	Extra map[string]any `json:"extra,omitempty"`
	// Body is the Markdown after the frontmatter, from its first non-blank line, otherwise
	// unchanged (CRLF line ends are kept). It is empty when the Doc came from [ParseMeta] or
	// [ReadMeta].
	Body string `json:"body,omitempty"`
	// Warnings are what the reader had to repair to load the file (no frontmatter, no name, no
	// description, an unquoted ": " in a value), each naming the rule it breaks. nil when there
	// was nothing to repair. [Check] gives the format's other rules.
	Warnings []*Error `json:"-"`
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
	if d.Warnings != nil {
		c.Warnings = make([]*Error, len(d.Warnings))
		for i, w := range d.Warnings {
			cw := *w
			c.Warnings[i] = &cw
		}
	}
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
