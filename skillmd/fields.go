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
func decode(path string, front []byte) (*Doc, *Error) {
	var root yaml.Node
	if err := yaml.Unmarshal(front, &root); err != nil {
		return nil, yamlError(path, err)
	}
	f := &fields{path: path, m: map[string]any{}, lines: map[string]int{}, dropped: map[string]bool{}}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		node := root.Content[0]
		if node.Kind != yaml.MappingNode {
			return nil, &Error{Path: path, Line: node.Line + 1, Msg: "the frontmatter must be a mapping of fields, not " + nodeKind(node),
				Hint: `write one "key: value" per line`}
		}
		if err := checkTree(path, node); err != nil {
			return nil, err
		}
		// Bound the depth and size, aliases expanded, before the decoder expands them: a field
		// that crosses a bound is left out and reported.
		for _, b := range docbound.YAMLFields(node) {
			e := &Error{Path: path, Line: b.Line + 1, Field: b.Path, Msg: b.Msg(), Hint: b.Hint()}
			if b.Field == "" {
				return nil, e
			}
			f.problems = append(f.problems, e)
			f.dropped[b.Field] = true
		}
		if err := node.Decode(&f.m); err != nil {
			return nil, yamlError(path, err)
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			f.lines[node.Content[i].Value] = node.Content[i].Line + 1 // the file's line 1 is "---"
		}
	}
	d := &Doc{
		Name:          f.required("name"),
		Description:   f.required("description"),
		License:       f.optional("license"),
		Compatibility: f.optional("compatibility"),
		Metadata:      f.mapping("metadata"),
		AllowedTools:  f.tools("allowed-tools"),
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

// fields takes the known keys out of the frontmatter one by one; what is left is Extra.
type fields struct {
	path     string
	m        map[string]any
	lines    map[string]int
	problems []*Error
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

func (f *fields) required(key string) string {
	v, ok := f.take(key)
	if !ok {
		f.add(key, key, fmt.Sprintf("add %q to the frontmatter", key+": ..."), "is required")
		return ""
	}
	s, ok := v.(string)
	if v != nil && !ok {
		f.add(key, key, fmt.Sprintf(`quote it: %s: "..."`, key), "must be text, not %s", typeName(v))
		return ""
	}
	if s = strings.TrimSpace(s); s == "" {
		f.add(key, key, fmt.Sprintf("write the %s after %q", key, key+":"), "is empty")
	}
	return s
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
