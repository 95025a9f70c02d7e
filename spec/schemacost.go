package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/skillbox-dev/skillbox/internal/docbound"
)

// SchemaCostError is a schema that validating a value against could take too long: its
// references make the validator evaluate some subschemas many times over, or loop.
type SchemaCostError struct {
	Loop  string // the location of a subschema that refers to itself at the same value, if that is the problem
	Limit int    // docbound.MaxSchemaEvaluations
}

func (e *SchemaCostError) Error() string {
	if e.Loop != "" {
		return fmt.Sprintf("%s refers to itself without descending into the value: validating it would loop", e.Loop)
	}
	return fmt.Sprintf("validating one value could evaluate more than %d subschemas (a definition counts each time it is used, a recursive one once per level of the value)", e.Limit)
}

// Hint says how to fix it.
func (e *SchemaCostError) Hint() string {
	if e.Loop != "" {
		return "let each $ref cycle go through properties or items"
	}
	return "use each shared definition in fewer places and alternatives (allOf, anyOf, oneOf)"
}

// checkSchemaCost bounds the work of validating a value against s, which the schema's size does
// not bound: the validator evaluates a subschema once for every path of references and
// applicators that reaches it, and shared or recursive definitions multiply those paths.
//
// It counts them on the compiled graph. Edges that stay at the same value (allOf, anyOf, oneOf,
// not, if/then/else, $ref, dependentSchemas) and edges that go one level into it (properties,
// items, contains, ...) are told apart; for each level of the value down to
// docbound.MaxArgsDepth (deeper arguments are refused), the paths reaching each subschema are
// summed over the same-value edges in topological order, then carried one level down. The sum
// over every subschema and level is an upper bound on the evaluations at any one place in a
// value, and is refused above docbound.MaxSchemaEvaluations. $dynamicRef and $recursiveRef may
// resolve to any subschema with the same anchor, so all of those are counted. A cycle of
// same-value edges is refused (the validator reports it as an error when it reaches it).
//
// The work is O(MaxArgsDepth × edges); counts saturate at the bound.
func checkSchemaCost(root *jsonschema.Schema) error {
	g := newCostGraph(root)
	order, loop := g.topo()
	if loop >= 0 {
		loc := g.nodes[loop].Location
		if i := strings.IndexByte(loc, '#'); i >= 0 {
			loc = loc[i:] // "#/$defs/a", not the in-memory URL
		}
		return &SchemaCostError{Loop: loc, Limit: docbound.MaxSchemaEvaluations}
	}
	const limit = docbound.MaxSchemaEvaluations
	sat := func(a, b int) int { return min(a+b, limit+1) }
	enter := make([]int, len(g.nodes))
	enter[0] = 1
	total := 0
	for level := 0; level <= docbound.MaxArgsDepth; level++ {
		paths := enter
		for _, i := range order {
			for _, j := range g.same[i] {
				paths[j] = sat(paths[j], paths[i])
			}
		}
		next := make([]int, len(g.nodes))
		deeper := false
		for i, n := range paths {
			if n == 0 {
				continue
			}
			if total = sat(total, n); total > limit {
				return &SchemaCostError{Limit: limit}
			}
			for _, j := range g.child[i] {
				next[j] = sat(next[j], n)
				deeper = true
			}
		}
		if !deeper {
			break
		}
		enter = next
	}
	return nil
}

// costGraph is a compiled schema's subschemas (nodes[0] the root), with the edges that stay at
// the same value (same) and those that go one level into it (child).
type costGraph struct {
	index       map[*jsonschema.Schema]int
	nodes       []*jsonschema.Schema
	same, child [][]int
}

func newCostGraph(root *jsonschema.Schema) *costGraph {
	g := &costGraph{index: map[*jsonschema.Schema]int{}}
	g.id(root)
	var dynamic, recursive []int // nodes with a $dynamicRef anchor or a $recursiveRef
	for i := 0; i < len(g.nodes); i++ {
		s := g.nodes[i]
		g.edges(i, s)
		if s.DynamicRef != nil && s.DynamicRef.Anchor != "" {
			dynamic = append(dynamic, i)
		}
		if s.RecursiveRef != nil {
			recursive = append(recursive, i)
		}
	}
	// Every subschema a dynamic reference could resolve to is one the graph holds already: it
	// is in a resource the validator entered on its way.
	for _, i := range dynamic {
		for j, t := range g.nodes {
			if t.DynamicAnchor == g.nodes[i].DynamicRef.Anchor && t != g.nodes[i].DynamicRef.Ref {
				g.same[i] = append(g.same[i], j)
			}
		}
	}
	for _, i := range recursive {
		for j, t := range g.nodes {
			if t.RecursiveAnchor && t != g.nodes[i].RecursiveRef {
				g.same[i] = append(g.same[i], j)
			}
		}
	}
	return g
}

// id returns s's index, adding it to the graph if it is new.
func (g *costGraph) id(s *jsonschema.Schema) int {
	if i, ok := g.index[s]; ok {
		return i
	}
	g.index[s] = len(g.nodes)
	g.nodes = append(g.nodes, s)
	g.same = append(g.same, nil)
	g.child = append(g.child, nil)
	return len(g.nodes) - 1
}

// edges records the keywords of s (node i) that apply subschemas: every applicator of
// jsonschema v6's Schema, drafts 4 to 2020-12.
func (g *costGraph) edges(i int, s *jsonschema.Schema) {
	same := func(ts ...*jsonschema.Schema) {
		for _, t := range ts {
			if t != nil {
				j := g.id(t)
				g.same[i] = append(g.same[i], j)
			}
		}
	}
	child := func(ts ...*jsonschema.Schema) {
		for _, t := range ts {
			if t != nil {
				j := g.id(t)
				g.child[i] = append(g.child[i], j)
			}
		}
	}
	same(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	if s.DynamicRef != nil {
		same(s.DynamicRef.Ref)
	}
	same(s.AllOf...)
	same(s.AnyOf...)
	same(s.OneOf...)
	for _, k := range sortedKeys(s.DependentSchemas) {
		same(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if t, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			same(t)
		}
	}
	for _, k := range sortedKeys(s.Properties) {
		child(s.Properties[k])
	}
	for _, t := range s.PatternProperties {
		child(t)
	}
	child(s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	child(s.PrefixItems...)
	for _, v := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch t := v.(type) {
		case *jsonschema.Schema:
			child(t)
		case []*jsonschema.Schema:
			child(t...)
		}
	}
}

// topo orders the nodes so that every same-value edge goes forward, or returns a node on a
// cycle of them.
func (g *costGraph) topo() (order []int, loop int) {
	in := make([]int, len(g.nodes))
	for _, out := range g.same {
		for _, j := range out {
			in[j]++
		}
	}
	for i, n := range in {
		if n == 0 {
			order = append(order, i)
		}
	}
	for k := 0; k < len(order); k++ {
		for _, j := range g.same[order[k]] {
			if in[j]--; in[j] == 0 {
				order = append(order, j)
			}
		}
	}
	if len(order) == len(g.nodes) {
		return order, -1
	}
	// What is left is on a cycle or after one: going back from any of it through what is left
	// reaches a cycle within len(nodes) steps.
	pred := make([]int, len(g.nodes))
	for i, out := range g.same {
		for _, j := range out {
			if in[j] > 0 && in[i] > 0 {
				pred[j] = i
			}
		}
	}
	loop = -1
	for i, n := range in {
		if n > 0 {
			loop = i
			break
		}
	}
	for range g.nodes {
		loop = pred[loop]
	}
	return nil, loop
}

// sortedKeys returns m's keys in order, so the graph, and so the error, does not depend on Go's
// map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
