// Package docbound bounds the shape of the documents Skillbox parses from skill packages and
// policies (skill.json or skill.yaml, the policy file, SKILL.md frontmatter) and of the arguments
// callers send: how deeply they nest and how many values they hold.
//
// A byte cap does not bound the work done on a document. The JSON Schema compiler
// (santhosh-tekuri/jsonschema v6) resolves the JSON pointer of every subschema from the root and
// looks each new subschema up in a list, so it is quadratic both in a schema's depth and in its
// number of subschemas: a 14 kB manifest nesting "items" 1,400 levels deep took seconds to load,
// and 5,000 sibling subschemas take most of a second. Validating an instance nested thousands of
// levels deep builds error locations quadratic in its depth (10,000 levels: gigabytes). YAML
// aliases make a small file decode into a large value. So every document is checked right after
// it is parsed, before anything else walks it or compiles it, against the bounds below, which
// live here so that every parser applies the same ones.
package docbound

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	// MaxDepth bounds how deeply a document nests objects and lists; the top-level object is
	// level 1. A manifest spends three levels reaching a parameter (the file, "parameters",
	// "properties"), and a schema spends two per nested object ("properties" and the name), one
	// per list ("items") and two per alternative ("anyOf" and its index). 32 levels leave room
	// for a dozen nested objects, or six nullable ones written with anyOf: more than any tool's
	// arguments need (OpenAI's strict function calling allows 5 levels of nesting; see
	// agent/strict.go). At this depth the schema compiler's cost from depth is a millisecond.
	MaxDepth = 32

	// MaxValues bounds the values (objects, lists, strings, numbers, booleans and nulls; not
	// keys) of one document, counting the values a YAML alias stands for each time it is used.
	// The bundled manifests hold under 60; a rich schema of 100 properties with enum lists of a
	// few hundred values holds a few thousand.
	MaxValues = 10_000

	// MaxSchemaNodes bounds the objects and booleans of one schema (a manifest's "parameters" or
	// "result"): each may be a subschema, and the compiler's cost is quadratic in those. 2,000
	// compile in about 35 ms at worst (any shape within MaxDepth; 10,000 take most of a second);
	// 100 properties with a few keywords each need a few hundred.
	MaxSchemaNodes = 2_000

	// MaxSchemaEvaluations bounds the subschemas that validating one value against a schema
	// may evaluate, counted on the compiled schema with its references followed: a definition
	// counts each time it is used (allOf: [{$ref: d}, {$ref: d}] evaluates d twice, so 22
	// chained definitions make 4 million evaluations, seconds per run, from 1.5 kB), and a
	// recursive reference once per level of the value, down to MaxArgsDepth. A schema without
	// shared definitions evaluates at most its own subschemas (MaxSchemaNodes); a recursive
	// tree schema a few per level.
	MaxSchemaEvaluations = 10_000

	// MaxArgsDepth bounds how deeply a caller's arguments nest. Validation builds each error's
	// instance location from its whole path, so its cost grows with the square of the depth
	// (1,000 levels: 23 MB; 10,000: 2.3 GB and seconds). Arguments that satisfy a schema within
	// MaxDepth nest far less than 64 levels; only a schema that accepts anything, or a
	// recursive one, lets them go deeper.
	MaxArgsDepth = 64
)

// Kind is the bound an [Error] crossed.
type Kind int

const (
	Depth       Kind = iota + 1 // MaxDepth or MaxArgsDepth
	Values                      // MaxValues
	SchemaNodes                 // MaxSchemaNodes
)

// Error is a document that crosses a bound: where, which bound and its value.
type Error struct {
	Kind Kind
	// Field is the top-level field that holds the crossing, and that [Fields] or [YAMLFields]
	// removed; empty when it is the document as a whole.
	Field string
	// Path is where the bound was crossed, as a dotted path ("parameters.properties.a.items"),
	// shortened in the middle when it is long: for Depth, the first object or list too deep;
	// for Values and SchemaNodes, the object or list whose values ran past the bound.
	Path  string
	Line  int // the line in the YAML text given, for YAML; 0 for JSON
	Limit int
}

// Msg says what is wrong, without the path.
func (e *Error) Msg() string {
	switch e.Kind {
	case Depth:
		return fmt.Sprintf("nests deeper than %d levels", e.Limit)
	case Values:
		return fmt.Sprintf("the document holds more than %s values (a YAML alias counts as the values it stands for)", count(e.Limit))
	}
	return fmt.Sprintf("the schema has more than %s objects and booleans (each may be a subschema to compile)", count(e.Limit))
}

// Hint says how to fix it.
func (e *Error) Hint() string {
	switch e.Kind {
	case Depth:
		return "flatten it: fewer nested objects and lists"
	case Values:
		return "split it: keep large data in files of its own"
	}
	return "split the schema or simplify it: fewer properties and alternatives"
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg())
	return b.String()
}

// count writes n with thousands separators, as the messages name the bounds.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Path shortening: a path deeper than keepHead+keepTail segments keeps its first keepHead and last
// keepTail, and says how many it leaves out; a key longer than maxKey bytes is cut.
const (
	keepHead = 5
	keepTail = 2
	maxKey   = 40
)

// path is the segments of a path: ".key" or "[i]" each, the first without its dot.
type path []string

func (p path) key(k string) path {
	if len(k) > maxKey {
		k = k[:maxKey] + "..."
	}
	if !plainKey(k) {
		return append(p, "["+strconv.Quote(k)+"]")
	}
	if len(p) == 0 {
		return append(p, k)
	}
	return append(p, "."+k)
}

func (p path) index(i int) path { return append(p, "["+strconv.Itoa(i)+"]") }

func (p path) String() string {
	if len(p) <= keepHead+keepTail+1 {
		return strings.TrimPrefix(strings.Join(p, ""), ".")
	}
	head := strings.Join(p[:keepHead], "")
	tail := strings.Join(p[len(p)-keepTail:], "")
	return fmt.Sprintf("%s...(%d more)...%s", strings.TrimPrefix(head, "."), len(p)-keepHead-keepTail, strings.TrimPrefix(tail, "."))
}

// plainKey reports whether k can be written after a dot: letters, digits, '_', '-' and '$'.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		switch {
		case r == '_', r == '-', r == '$', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}
