package skillmd

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/skillbox-dev/skillbox/internal/docbound"
	"gopkg.in/yaml.v3"
)

// decode checks the frontmatter's fields and fills a Doc from them, collecting every problem.
// para is the text the description falls back to: the start of the body (see parse). found is
// false for a file without frontmatter, whose only field is then that description.
func decode(path string, front []byte, found bool, para []byte) (*Doc, *Error) {
	f := &fields{path: path, m: map[string]any{}, lines: map[string]int{}, dropped: map[string]bool{}}
	if found {
		if err := f.read(front); err != nil {
			return nil, err
		}
	}
	d := &Doc{
		Name:                   f.name("name", found),
		Description:            f.description("description", found, para),
		License:                f.optional("license"),
		Compatibility:          f.optional("compatibility"),
		Metadata:               f.mapping("metadata"),
		AllowedTools:           f.tools("allowed-tools"),
		ArgumentHint:           f.hint("argument-hint"),
		DisableModelInvocation: f.boolean("disable-model-invocation"),
		Warnings:               f.warnings,
	}
	if len(f.m) > 0 {
		d.Extra = normalise(f.m).(map[string]any)
	}
	switch len(f.problems) {
	case 0:
		return d, nil
	case 1:
		return nil, f.problems[0]
	}
	return nil, &Error{Path: path, Msg: fmt.Sprintf("%d problems", len(f.problems)), Problems: f.problems}
}

// read parses the frontmatter into f. Frontmatter that YAML refuses is repaired when a lenient
// reader would read it (see repair), with a warning per repaired key; else its error stands.
func (f *fields) read(front []byte) *Error {
	var root yaml.Node
	if err := yaml.Unmarshal(front, &root); err != nil {
		if !repairable(err) {
			return yamlError(f.path, err)
		}
		fixed, keys := repair(front)
		if keys == nil || yaml.Unmarshal(fixed, &root) != nil {
			return yamlError(f.path, err)
		}
		front = fixed
		for _, k := range keys {
			msg := `holds an unquoted ": ", which YAML does not allow in a plain value; it was read as text to the end of the value`
			if k.brackets {
				msg = "is bracketed words, which YAML reads as a list followed by more text; it was read as text"
			}
			f.warnings = append(f.warnings, &Error{Path: f.path, Line: k.line + 1, Field: k.key, Msg: msg,
				Hint: fmt.Sprintf(`quote it: %s: "..."`, k.key)})
		}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	node := root.Content[0]
	if node.Kind != yaml.MappingNode {
		return &Error{Path: f.path, Line: node.Line + 1, Msg: "the frontmatter must be a mapping of fields, not " + nodeKind(node),
			Hint: `write one "key: value" per line`}
	}
	if err := checkTree(f.path, node); err != nil {
		return err
	}
	// Bound the depth and size, aliases expanded, before the decoder expands them: a field
	// that crosses a bound is left out and reported.
	for _, b := range docbound.YAMLFields(node) {
		e := &Error{Path: f.path, Line: b.Line + 1, Field: b.Path, Msg: b.Msg(), Hint: b.Hint()}
		if b.Field == "" {
			return e
		}
		f.problems = append(f.problems, e)
		f.dropped[b.Field] = true
	}
	if err := node.Decode(&f.m); err != nil {
		return yamlError(f.path, err)
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		f.lines[node.Content[i].Value] = node.Content[i].Line + 1 // the file's line 1 is "---"
	}
	return nil
}

// fields takes the known keys out of the frontmatter one by one; what is left is Extra.
type fields struct {
	path     string
	m        map[string]any
	lines    map[string]int
	problems []*Error
	warnings []*Error        // what was repaired: the Doc's Warnings
	dropped  map[string]bool // keys left out for crossing a bound, and reported already
}

func (f *fields) add(key, field, hint, format string, args ...any) {
	if f.dropped[key] {
		return
	}
	f.problems = append(f.problems, &Error{Path: f.path, Line: f.lines[key], Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (f *fields) take(key string) (any, bool) {
	v, ok := f.m[key]
	delete(f.m, key)
	return v, ok
}

// presence says how a text field was written.
type presence int

const (
	absent  presence = iota // not there, or null ("name:"), or left out for crossing a bound
	empty                   // blank text
	present                 // text
	wrong                   // not text: a problem already
)

// text takes key's value as trimmed text, and how it was written.
func (f *fields) text(key string) (string, presence) {
	v, _ := f.take(key)
	if v == nil {
		return "", absent
	}
	s, ok := v.(string)
	if !ok {
		f.add(key, key, fmt.Sprintf(`quote it: %s: "..."`, key), "must be text, not %s", typeName(v))
		return "", wrong
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", empty
	}
	return s, present
}

// warn records what was repaired in key.
func (f *fields) warn(key, hint, format string, args ...any) {
	if f.dropped[key] {
		return
	}
	f.warnings = append(f.warnings, &Error{Path: f.path, Line: f.lines[key], Field: key, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// name reads the name. A missing or empty one is repaired (the caller names the skill after its
// directory, as Claude Code does), with a warning.
func (f *fields) name(key string, found bool) string {
	s, p := f.text(key)
	if found && (p == absent || p == empty) {
		f.warn(key, `add "name: <the directory's name>" to the frontmatter`, "is missing, so the skill is named after its directory (%s)", RuleNameRequired)
	}
	return s
}

// description reads the description. A missing or empty one is repaired with the first
// paragraph of para (as Claude Code does), with a warning; without one either, it is a problem:
// nothing would tell a model what the skill is for.
func (f *fields) description(key string, found bool, para []byte) string {
	s, p := f.text(key)
	if p == present || p == wrong || f.dropped[key] {
		return s
	}
	if d := firstParagraph(para, MaxDescription); d != "" {
		if found {
			f.warn(key, `add "description: ..." to the frontmatter: what the skill does and when to use it`,
				"is missing, so the first paragraph of the text is used (%s)", RuleDescriptionRequired)
		}
		return d
	}
	switch {
	case !found:
		f.problems = append(f.problems, &Error{Path: f.path, Line: 1, Msg: "has no frontmatter, and no paragraph of text that could describe the skill", Hint: startHint})
	case p == empty:
		f.add(key, key, fmt.Sprintf("write the %s after %q", key, key+":"), "is empty")
	default:
		f.add(key, key, fmt.Sprintf("add %q to the frontmatter", key+": ..."), "is required")
	}
	return ""
}

// hint reads argument-hint: text, or the list YAML makes of "argument-hint: [issue]", written
// back as the author wrote it ("[issue]").
func (f *fields) hint(key string) string {
	v, _ := f.take(key)
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(t)
	case []any:
		items := make([]string, 0, len(t))
		for _, item := range t {
			switch item.(type) {
			case []any, map[string]any, map[any]any:
				f.add(key, key, `quote it: argument-hint: "[issue] [branch]"`, "must be text, not a nested list or mapping")
				return ""
			}
			items = append(items, fmt.Sprint(item))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(t)
	}
	f.add(key, key, `quote it: argument-hint: "[issue] [branch]"`, "must be text, not %s", typeName(v))
	return ""
}

// boolean reads an optional true or false.
func (f *fields) boolean(key string) bool {
	v, _ := f.take(key)
	b, ok := v.(bool)
	if v != nil && !ok {
		f.add(key, key, fmt.Sprintf("write %s: true, or leave it out", key), "must be true or false, not %s", typeName(v))
	}
	return b
}

func (f *fields) optional(key string) string {
	v, _ := f.take(key)
	s, ok := v.(string)
	if v != nil && !ok {
		f.add(key, key, fmt.Sprintf(`quote it: %s: "..."`, key), "must be text, not %s", typeName(v))
	}
	return strings.TrimSpace(s)
}

func (f *fields) mapping(key string) map[string]any {
	v, _ := f.take(key)
	if v == nil {
		return nil
	}
	m, ok := normalise(v).(map[string]any)
	if !ok {
		f.add(key, key, `write "key: value" lines indented under it`, "must be a mapping, not %s", typeName(v))
	}
	return m
}

// tools reads allowed-tools: a YAML list of names, or one string of names.
func (f *fields) tools(key string) []string {
	v, _ := f.take(key)
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return splitTools(t)
	case []any:
		out := make([]string, 0, len(t))
		for i, item := range t {
			field := fmt.Sprintf("%s[%d]", key, i)
			s, ok := item.(string)
			switch s = strings.TrimSpace(s); {
			case !ok:
				f.add(key, field, "write a tool name such as Read or Bash(git status:*)", "must be a tool name, not %s", typeName(item))
			case s == "":
				f.add(key, field, "remove the empty item", "is empty")
			default:
				out = append(out, s)
			}
		}
		return out
	}
	f.add(key, key, "write a list of tool names, or one line of names separated by spaces or commas", "must be a list of tool names, not %s", typeName(v))
	return nil
}

// splitTools splits "Read, Grep Bash(git add:*)" at commas and spaces outside parentheses:
// Claude Code's tool patterns may contain spaces.
func splitTools(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// normalise makes a decoded YAML value JSON-safe: mappings with non-text keys get text keys, and
// non-finite numbers become text. encoding/json refuses both.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalise(x)
		}
		return t
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = normalise(x)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = normalise(x)
		}
		return t
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Sprint(t)
		}
	}
	return v
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "empty"
	case string:
		return "text"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a mapping"
	case time.Time:
		return "a date"
	}
	return fmt.Sprintf("%T", v)
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	}
	return "an alias"
}
