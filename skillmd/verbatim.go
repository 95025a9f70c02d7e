package skillmd

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/skillbox-dev/skillbox/internal/docbound"
)

// Frontmatter returns the frontmatter of the SKILL.md in data as the JSON object a strict YAML
// 1.2 reader makes of it: every field the author wrote, with its value as written. The MCP Skills
// extension hands it to clients, which parse the file they read with their own YAML library and
// compare the two field by field, so it must not depend on how Skillbox reads a SKILL.md.
//
// The rules are those of YAML 1.2's core schema, which the JavaScript and Python readers that
// clients use apply: only true/false are booleans, only decimal, 0o and 0x integers are numbers
// (017 is seventeen, 1_000 is text), timestamps stay text, "<<" is an ordinary key, and aliases
// stand for the value of their anchor. [Parse] reads with YAML 1.1's looser rules (yaml.v3's
// defaults); a value on which the two disagree is reported here, as it is where the two would
// differ.
//
// path names the file in errors only.
//
// # Errors
//
// An [*Error] (matching [ErrInvalid]) for a file a strict reader would not take, or whose
// frontmatter could not be carried as JSON: a byte order mark before the first "---", the
// problems [Parse] reports about the frontmatter's shape, a value JSON cannot hold (.inf, .nan,
// a number beyond float64), a key that is not a scalar or is null; and a name or description
// that is missing, not text or empty.
func Frontmatter(path string, data []byte) (map[string]any, error) {
	if bytes.HasPrefix(data, bom) {
		return nil, &Error{Path: path, Line: 1, Msg: "starts with a byte order mark, which strict readers take for text before the frontmatter",
			Hint: "save the file as UTF-8 without a byte order mark"}
	}
	front, _, found, warn, perr := split(path, data, true)
	switch {
	case perr != nil:
		return nil, perr
	case warn != nil:
		// What a lenient reader skips (no frontmatter, blank lines before it), a strict one
		// refuses: the published file must read the same to every client.
		return nil, warn
	case !found:
		return nil, &Error{Path: path, Line: 1, Msg: noFrontmatter, Hint: startHint}
	}
	if len(front) > MetaLimit {
		return nil, &Error{Path: path, Line: 1, Msg: fmt.Sprintf("the frontmatter is larger than %d KiB", MetaLimit>>10),
			Hint: "keep long text in the body, after the frontmatter"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(front, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, &Error{Path: path, Line: 2, Msg: "the frontmatter is empty", Hint: startHint}
	}
	node := root.Content[0]
	if node.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: node.Line + 1, Msg: "the frontmatter must be a mapping of fields, not " + nodeKind(node),
			Hint: `write one "key: value" per line`}
	}
	if err := checkTree(path, node); err != nil {
		return nil, err
	}
	if bounds := docbound.YAMLFields(node); len(bounds) > 0 {
		b := bounds[0]
		return nil, &Error{Path: path, Line: b.Line + 1, Field: b.Path, Msg: b.Msg(), Hint: b.Hint()}
	}
	v := &verbatim{path: path, active: map[*yaml.Node]bool{}}
	value, err := v.value(node)
	if err != nil {
		return nil, err
	}
	m := value.(map[string]any)
	for _, key := range []string{"name", "description"} {
		s, ok := m[key].(string)
		line := keyLine(node, key)
		switch {
		case m[key] == nil:
			return nil, &Error{Path: path, Line: line, Field: key, Msg: "is required", Hint: fmt.Sprintf("add %q to the frontmatter", key+": ...")}
		case !ok:
			return nil, &Error{Path: path, Line: line, Field: key, Msg: "must be text", Hint: fmt.Sprintf(`quote it: %s: "..."`, key)}
		case strings.TrimSpace(s) == "":
			return nil, &Error{Path: path, Line: line, Field: key, Msg: "is empty", Hint: fmt.Sprintf("write the %s after %q", key, key+":")}
		}
	}
	return m, nil
}

// keyLine is the line in the file of the top-level key, 0 when it is not there.
func keyLine(mapping *yaml.Node, key string) int {
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		if mapping.Content[i].Value == key {
			return mapping.Content[i].Line + 1
		}
	}
	return 0
}

// verbatim turns a YAML tree into JSON values under YAML 1.2's core schema. docbound has bounded
// the tree (aliases expanded) before it is walked; active guards against an alias inside its own
// anchor, which yaml.v3 parses but no reader can expand.
type verbatim struct {
	path   string
	active map[*yaml.Node]bool
}

func (v *verbatim) fail(n *yaml.Node, msg, hint string) error {
	return &Error{Path: v.path, Line: n.Line + 1, Msg: msg, Hint: hint}
}

func (v *verbatim) value(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		if v.active[n.Alias] {
			return nil, v.fail(n, "an alias refers to a value that contains it", "remove the alias")
		}
		v.active[n.Alias] = true
		defer delete(v.active, n.Alias)
		return v.value(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			x, err := v.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := v.key(n.Content[i])
			if err != nil {
				return nil, err
			}
			x, err := v.value(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case yaml.ScalarNode:
		return v.scalar(n)
	}
	return nil, v.fail(n, "a YAML node of an unknown kind", "")
}

// key is a mapping key as the JSON object's member name: text as it is, a number or boolean as
// JavaScript writes it.
func (v *verbatim) key(n *yaml.Node) (string, error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return "", v.fail(n, "a key that is a list or a mapping", "use text keys")
	}
	x, err := v.scalar(n)
	if err != nil {
		return "", err
	}
	switch t := x.(type) {
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	}
	return "", v.fail(n, "a null key", "use text keys")
}

// The plain scalars of YAML 1.2's core schema that are not text.
var (
	coreNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	coreBool  = regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^[-+]?\.(?:inf|Inf|INF)$`)
	coreNaN   = regexp.MustCompile(`^\.(?:nan|NaN|NAN)$`)
)

// scalar resolves one scalar: a quoted or block scalar is text, a plain one is resolved by the
// core schema, and an explicit tag of a core type must agree with the core schema (any other tag
// leaves the text, as readers that do not know it do).
func (v *verbatim) scalar(n *yaml.Node) (any, error) {
	const textStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		want, core := map[string]string{"!!null": "null", "!!bool": "bool", "!!int": "int", "!!float": "float"}[n.Tag]
		if !core {
			return n.Value, nil // !!str, and tags a strict reader does not know
		}
		x, err := v.plain(n, n.Value)
		if err != nil {
			return nil, err
		}
		if got := coreType(x); got != want && !(want == "float" && got == "int") {
			return nil, v.fail(n, fmt.Sprintf("%q is tagged %s, which it is not under YAML 1.2", n.Value, n.Tag), "remove the tag")
		}
		return x, nil
	case n.Style&textStyles != 0:
		return n.Value, nil
	}
	return v.plain(n, n.Value)
}

// coreType names the core-schema type of a resolved scalar.
func coreType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	}
	return "str"
}

// plain resolves a plain scalar by the core schema.
func (v *verbatim) plain(n *yaml.Node, s string) (any, error) {
	switch {
	case coreNull.MatchString(s):
		return nil, nil
	case coreBool.MatchString(s):
		return s[0] == 't' || s[0] == 'T', nil
	case coreInt.MatchString(s):
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return v.float(n, s)
	case coreOct.MatchString(s), coreHex.MatchString(s):
		base, digits := 8, s[2:]
		if s[1] == 'x' {
			base = 16
		}
		if u, err := strconv.ParseUint(digits, base, 63); err == nil {
			return int64(u), nil
		}
		return nil, v.fail(n, fmt.Sprintf("the number %s is too large for JSON to carry exactly", s), "quote it")
	case coreFloat.MatchString(s):
		return v.float(n, s)
	case coreInf.MatchString(s), coreNaN.MatchString(s):
		return nil, v.fail(n, fmt.Sprintf("%s has no JSON equivalent", s), "quote it")
	}
	if !utf8.ValidString(s) {
		return nil, v.fail(n, "text that is not UTF-8", "")
	}
	return s, nil
}

func (v *verbatim) float(n *yaml.Node, s string) (any, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, v.fail(n, fmt.Sprintf("the number %s is beyond what JSON can carry", s), "quote it")
	}
	return f, nil
}
