package docbound

import (
	"slices"
)

// Fields checks a decoded document (plain JSON values: map[string]any, []any and scalars) against
// MaxDepth and MaxValues, field by field. Every top-level field that crosses a bound is removed
// from doc and reported, so the caller can still check the others and report every problem at
// once; the values of a removed field do not count against the others.
//
// A top-level object that alone has MaxValues fields or more is emptied, and the one error has
// an empty Field: the document as a whole is refused.
//
// Each value is visited at most once, and the walk never goes deeper than MaxDepth+1.
func Fields(doc map[string]any) []*Error {
	if len(doc) >= MaxValues {
		clear(doc)
		return []*Error{{Kind: Values, Limit: MaxValues}}
	}
	var errs []*Error
	left := MaxValues - 1 // the top-level object is a value too
	for _, k := range (&walker{countValues: true}).keys(doc) {
		w := &walker{left: left, maxDepth: MaxDepth, countValues: true}
		if err := w.walk(doc[k], 2, path{}.key(k)); err != nil {
			err.Field = k
			errs = append(errs, err)
			delete(doc, k)
			continue
		}
		left = w.left
	}
	return errs
}

// Args checks a caller's arguments against MaxArgsDepth. Their size is bounded by their bytes,
// and validating a wide value costs no more than reading it.
//
// It runs on every call, over values of megabytes: the path is only built for a value that is
// too deep.
func Args(v any) *Error {
	if depth(v, MaxArgsDepth+1) <= MaxArgsDepth {
		return nil
	}
	w := &walker{maxDepth: MaxArgsDepth}
	return w.walk(v, 1, path{})
}

// depth returns how deeply v nests (a scalar is 0, the top-level object or list 1), or limit
// when that is deeper.
func depth(v any, limit int) int {
	if limit == 0 {
		return 0
	}
	d := 0
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if d = max(d, depth(e, limit-1)); d == limit-1 {
				break
			}
		}
	case []any:
		for _, e := range t {
			if d = max(d, depth(e, limit-1)); d == limit-1 {
				break
			}
		}
	default:
		return 0
	}
	return d + 1
}

// Schema checks a schema against MaxSchemaNodes, counting its objects and booleans: a subschema
// is one or the other. The schema is part of a document that [Fields] or [YAMLFields] checked,
// so its depth is bounded already.
func Schema(v any, field string) *Error {
	w := &walker{left: MaxSchemaNodes, maxDepth: MaxDepth, countSchema: true}
	err := w.walk(v, 1, path{}.key(field))
	if err != nil {
		err.Field = field
	}
	return err
}

// walker walks a value, counting down a budget.
type walker struct {
	left        int
	maxDepth    int
	countValues bool // every value counts against left (MaxValues)
	countSchema bool // objects and booleans count against left (MaxSchemaNodes)
}

// walk checks v at depth (the top-level value is depth 1) and path p.
func (w *walker) walk(v any, depth int, p path) *Error {
	switch t := v.(type) {
	case map[string]any:
		if err := w.container(depth, p, len(t), true); err != nil {
			return err
		}
		for _, k := range w.keys(t) {
			if err := w.walk(t[k], depth+1, p.key(k)); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if err := w.container(depth, p, len(t), false); err != nil {
			return err
		}
		for i, e := range t {
			if err := w.walk(e, depth+1, p.index(i)); err != nil {
				return err
			}
		}
		return nil
	case bool:
		if w.countSchema {
			return w.spend(p)
		}
	}
	if w.countValues {
		return w.spend(p)
	}
	return nil
}

// container checks an object or a list of n members at depth and p: its depth, itself and,
// before walking them, whether its members alone are more than the budget left (so an object of
// 100,000 keys is refused without sorting them).
func (w *walker) container(depth int, p path, n int, object bool) *Error {
	if depth > w.maxDepth {
		return &Error{Kind: Depth, Path: p.String(), Limit: w.maxDepth}
	}
	if w.countValues || w.countSchema && object {
		if err := w.spend(p); err != nil {
			return err
		}
	}
	if w.countValues && n > w.left {
		return w.over(p)
	}
	return nil
}

// spend counts the value at p. Crossing the bound is reported at the object or list p is in,
// which is what holds too many, or at p itself when it is a top-level field.
func (w *walker) spend(p path) *Error {
	if w.left--; w.left < 0 {
		if len(p) > 1 {
			p = p[:len(p)-1]
		}
		return w.over(p)
	}
	return nil
}

func (w *walker) over(p path) *Error {
	if w.countSchema {
		return &Error{Kind: SchemaNodes, Path: p.String(), Limit: MaxSchemaNodes}
	}
	return &Error{Kind: Values, Path: p.String(), Limit: MaxValues}
}

// keys returns m's keys, sorted when a budget is counted: which value crosses it, and so the
// path an error names, must not depend on Go's map order. Depth alone needs no order.
func (w *walker) keys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if w.countValues || w.countSchema {
		slices.Sort(keys)
	}
	return keys
}
