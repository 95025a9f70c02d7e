package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/internal/jsonpos"
	"github.com/skillbox-dev/skillbox/internal/nearest"
	"gopkg.in/yaml.v3"
)

// Doc is a manifest or policy file decoded into plain JSON values (map[string]any, []any, string,
// json.Number, bool, nil), whatever its syntax. Checking a generic document, rather than decoding
// into a struct, is what lets every problem be reported at once.
type Doc = map[string]any

// ParseDoc decodes JSON or YAML (by yamlSyntax) into a doc, and bounds its depth and size
// (internal/docbound) before anything else walks it: each top-level field that crosses a bound is
// left out of the doc and returned in bounds, so the caller reports it with the rest of the
// file's problems. An error means the file as a whole is refused.
func ParseDoc(data []byte, yamlSyntax bool) (d Doc, bounds []*docbound.Error, err error) {
	if yamlSyntax {
		// Parse to a tree first and check it: yaml.v3 compares every key of a mapping with every
		// other when it decodes, so a small file of repeated keys would take minutes, and it
		// expands aliases when it decodes, so a small file can stand for a huge one. Neither
		// check follows aliases further than the bounds allow.
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, nil, err
		}
		if err := checkYAMLTree(&root); err != nil {
			return nil, nil, err
		}
		if len(root.Content) > 0 {
			bounds = docbound.YAMLFields(root.Content[0])
			if whole(bounds) {
				return nil, nil, bounds[0]
			}
		}
		var v any
		if err := root.Decode(&v); err != nil {
			return nil, nil, err
		}
		if v == nil {
			return nil, nil, fmt.Errorf("the file is empty")
		}
		// Round-trip through JSON so YAML's ints and floats become json.Numbers like JSON's.
		js, err := json.Marshal(v)
		if err != nil {
			return nil, nil, fmt.Errorf("only string keys are allowed: %w", err)
		}
		data = js
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, nil, fmt.Errorf("the file is empty")
		}
		return nil, nil, jsonpos.Locate(data, err) // a *jsonpos.Error: see checker.syntax
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("unexpected data after the top-level value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("the top level must be an object, not %s", TypeName(v))
	}
	// The one place every manifest and policy is bounded; for YAML the tree was checked above
	// and this finds nothing more.
	more := docbound.Fields(m)
	if whole(more) {
		return nil, nil, more[0]
	}
	return m, append(bounds, more...), nil
}

// Syntax reports a JSON syntax error of the file (parseDoc's *jsonpos.Error) at its line and
// column, "skill.json:7:3: invalid character '}' after object key", and reports whether err was
// one.
func (c *Checker) Syntax(err error) bool {
	var pe *jsonpos.Error
	if !errors.As(err, &pe) {
		return false
	}
	c.Problems = append(c.Problems, &ManifestError{Path: c.Path, Line: pe.Line, Column: pe.Column, Msg: pe.Msg, Hint: pe.Hint})
	return true
}

// whole reports whether bounds refuse the document as a whole rather than some of its fields.
func whole(bounds []*docbound.Error) bool {
	return len(bounds) == 1 && bounds[0].Field == ""
}

// lined is b's message, after its line in a YAML file.
func lined(b *docbound.Error) string {
	if b.Line > 0 {
		return fmt.Sprintf("line %d: %s", b.Line, b.Msg())
	}
	return b.Msg()
}

// AddBounds reports each field that crossed a bound, and marks it so that no other problem is
// reported under it (it was left out of the doc, and so would look missing).
func (c *Checker) AddBounds(bounds []*docbound.Error) {
	for _, b := range bounds {
		c.Problems = append(c.Problems, &ManifestError{Path: c.Path, Field: b.Path, Msg: lined(b), Hint: b.Hint()})
		if c.dropped == nil {
			c.dropped = map[string]bool{}
		}
		c.dropped[b.Field] = true
	}
}

// maxYAMLKeys bounds one mapping of a YAML manifest or policy (which bounds yaml.v3's pairwise
// key comparisons); a manifest has a few dozen.
const maxYAMLKeys = 512

// checkYAMLTree refuses oversized mappings and finds duplicate keys with a map, before yaml.v3
// would, quadratically.
func checkYAMLTree(n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return nil
	case yaml.MappingNode:
		if len(n.Content)/2 > maxYAMLKeys {
			return fmt.Errorf("line %d: a mapping of more than %d keys", n.Line, maxYAMLKeys)
		}
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			id := fmt.Sprint(k.Kind, ":", k.Value)
			if at, dup := seen[id]; dup {
				return fmt.Errorf("line %d: key %q already defined at line %d", k.Line, k.Value, at)
			}
			seen[id] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := checkYAMLTree(c); err != nil {
			return err
		}
	}
	return nil
}

// checker walks a doc and collects problems instead of stopping at the first.
type Checker struct {
	Path     string
	Problems []*ManifestError
	Schema   *Schema // the compiled parameters schema, kept so a load compiles it once
	// dropped holds the top-level fields that crossed a bound of internal/docbound: they are
	// reported once, for the bound, and not again as missing.
	dropped map[string]bool
}

func (c *Checker) Add(field, hint, format string, args ...any) {
	top := field
	if i := strings.IndexAny(field, ".["); i >= 0 {
		top = field[:i]
	}
	if c.dropped[top] {
		return
	}
	c.Problems = append(c.Problems, &ManifestError{Path: c.Path, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Known reports every key of obj not in allowed, with the nearest allowed name as a hint.
func (c *Checker) Known(obj Doc, parent string, allowed ...string) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if contains(allowed, k) {
			continue
		}
		hint := "allowed fields: " + strings.Join(allowed, ", ")
		if near := nearest.Name(k, allowed); near != "" {
			hint = fmt.Sprintf("did you mean %q?", near)
		}
		c.Add(join(parent, k), hint, "unknown field")
	}
}

func (c *Checker) Str(obj Doc, parent, key string, required bool) string {
	v, ok := obj[key]
	if !ok || v == nil {
		if required {
			c.Add(join(parent, key), "", "is required")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		c.Add(join(parent, key), "", "must be a string, not %s", TypeName(v))
		return ""
	}
	if required && strings.TrimSpace(s) == "" {
		c.Add(join(parent, key), "", "must not be empty")
	}
	return s
}

// Bool reads an optional boolean, false when absent.
func (c *Checker) Bool(obj Doc, parent, key string) bool {
	v, ok := obj[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		c.Add(join(parent, key), "write true or false", "must be a boolean, not %s", TypeName(v))
	}
	return b
}

func (c *Checker) StrList(obj Doc, parent, key string) []string {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		c.Add(join(parent, key), `write it as a list: ["a", "b"]`, "must be a list of strings, not %s", TypeName(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			c.Add(fmt.Sprintf("%s[%d]", join(parent, key), i), "", "must be a string, not %s", TypeName(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (c *Checker) Object(obj Doc, parent, key string) Doc {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.Add(join(parent, key), "", "must be an object, not %s", TypeName(v))
		return nil
	}
	return m
}

func (c *Checker) List(obj Doc, parent, key string) []any {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		c.Add(join(parent, key), "", "must be a list, not %s", TypeName(v))
		return nil
	}
	return arr
}

// Int reads a non-negative whole number no larger than max.
func (c *Checker) Int(obj Doc, parent, key string, max int64) int64 {
	v, ok := obj[key]
	if !ok || v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	if !ok {
		c.Add(join(parent, key), "", "must be a number, not %s", TypeName(v))
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		c.Add(join(parent, key), "", "must be a whole number, not %s", n)
		return 0
	}
	if i <= 0 || i > max {
		c.Add(join(parent, key), "leave it out for the default", "must be between 1 and %d, not %d", max, i)
		return 0
	}
	return i
}

// Limits reads a limits object (manifest or policy).
func (c *Checker) Limits(obj Doc, parent string) Limits {
	var l Limits
	if obj == nil {
		return l
	}
	names := []string{}
	for _, f := range l.Fields() {
		names = append(names, f.Name)
	}
	c.Known(obj, parent, names...)
	for _, f := range l.Fields() {
		max := int64(math.MaxInt32)
		switch f.Name {
		case "memoryMiB":
			max = MaxMemoryMiB
		case "timeoutMs":
			max = 24 * 3600 * 1000
		}
		*f.Value = c.Int(obj, parent, f.Name, max)
	}
	return l
}

func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64, int:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
