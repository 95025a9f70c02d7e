package docbound

import (
	"gopkg.in/yaml.v3"
)

// YAMLFields is [Fields] for a YAML document, checked on its parse tree before it is decoded:
// decoding is where aliases are expanded, and yaml.v3 lets a small file expand to a few hundred
// thousand values before its own alias limit stops it. top is the document's top-level node (the
// first Content of the DocumentNode that yaml.Unmarshal gives).
//
// The values an alias stands for count, at the alias's depth, each time it is used, as a decoder
// copies them; an alias that contains itself is not followed (yaml.v3 refuses it when decoding).
// A merge key ("<<: *base") counts its mapping one level deeper than the decoder puts its keys.
// Keys that are not plain scalars count as values. Errors carry the node's line.
//
// Every top-level field that crosses a bound is removed from top's Content and reported. A top
// that is not a mapping is checked whole; when it, or the number of top-level fields, crosses a
// bound, the one error has an empty Field, and the document must be refused as a whole.
//
// The walk visits at most MaxValues+1 values per top-level field (aliases expanded) and never
// goes deeper than MaxDepth+1 (plus one level per alias followed, which does not count).
func YAMLFields(top *yaml.Node) []*Error {
	if top.Kind != yaml.MappingNode {
		w := &yamlWalker{left: MaxValues, active: map[*yaml.Node]bool{}}
		if err := w.walk(top, 1, path{}, top); err != nil {
			return []*Error{err}
		}
		return nil
	}
	if len(top.Content)/2 >= MaxValues {
		return []*Error{{Kind: Values, Line: top.Line, Limit: MaxValues}}
	}
	var errs []*Error
	left := MaxValues - 1 // the top-level mapping is a value too
	kept := top.Content[:0:0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		w := &yamlWalker{left: left, active: map[*yaml.Node]bool{}}
		p := path{}.key(k.Value)
		err := w.walk(v, 2, p, v)
		if err == nil && k.Kind != yaml.ScalarNode {
			err = w.walk(k, 2, p, k)
		}
		if err != nil {
			err.Field = k.Value
			errs = append(errs, err)
			continue
		}
		left = w.left
		kept = append(kept, k, v)
	}
	if len(errs) > 0 {
		top.Content = kept
	}
	return errs
}

type yamlWalker struct {
	left   int
	active map[*yaml.Node]bool // the aliases being followed
}

// walk checks n at depth and path p; parent is the node n is in, where a crossing of MaxValues
// is reported (n itself for a top-level field).
func (w *yamlWalker) walk(n *yaml.Node, depth int, p path, parent *yaml.Node) *Error {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || w.active[n] {
			return nil
		}
		w.active[n] = true
		defer delete(w.active, n)
		return w.walk(n.Alias, depth, p, parent)
	}
	members := len(n.Content)
	switch n.Kind {
	case yaml.MappingNode:
		members /= 2
		fallthrough
	case yaml.SequenceNode:
		if depth > MaxDepth {
			return &Error{Kind: Depth, Path: p.String(), Line: n.Line, Limit: MaxDepth}
		}
	}
	if w.left--; w.left < 0 {
		if len(p) > 1 {
			return &Error{Kind: Values, Path: p[:len(p)-1].String(), Line: parent.Line, Limit: MaxValues}
		}
		return &Error{Kind: Values, Path: p.String(), Line: n.Line, Limit: MaxValues}
	}
	if members > w.left {
		return &Error{Kind: Values, Path: p.String(), Line: n.Line, Limit: MaxValues}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := p.key(k.Value)
			if k.Kind != yaml.ScalarNode {
				if err := w.walk(k, depth+1, kp, n); err != nil {
					return err
				}
			}
			if err := w.walk(v, depth+1, kp, n); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := w.walk(c, depth+1, p.index(i), n); err != nil {
				return err
			}
		}
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := w.walk(c, depth, p, parent); err != nil {
				return err
			}
		}
	}
	return nil
}
