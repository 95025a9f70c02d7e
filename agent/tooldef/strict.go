package tooldef

import (
	"bytes"
	"encoding/json"
	"strings"
)

// OpenAI's strict-mode limits, as first published: the strictest, so a schema within them is
// accepted by every model that has strict mode.
const (
	strictMaxProperties = 100
	strictMaxDepth      = 5
	strictMaxEnumValues = 500
)

// strictKeywords are the keywords strict mode accepts in any schema. Everything else ("default",
// "minLength", "format", "allOf", ...) is refused by OpenAI, or was at some time, so a schema
// using it is sent with strict false: a non-strict tool still works, a refused one fails the
// whole request.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "anyOf": true, "description": true, "title": true, "$ref": true,
}

var strictTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "object": true, "array": true, "null": true}

// StrictCompatible reports whether schema satisfies OpenAI's strict-mode rules, so that a tool
// may be sent with "strict": true: the root is an object schema; every object schema has
// "additionalProperties": false and lists all its properties in "required"; every schema has a
// type (or is an anyOf of such schemas, or a local $ref to one in the root's $defs); arrays
// have "items"; only the keywords strict mode accepts are used; and the schema stays within its
// limits (100 properties, 5 levels of nesting, 500 enum values).
//
// A manifest in the map form ({"name": {"type": ...}}) is strict-compatible when every
// parameter is required and uses only type, description, enum and items: an optional parameter
// (one with a default) is not, because strict mode has no optional properties.
func StrictCompatible(schema json.RawMessage) bool {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if dec.Decode(&root) != nil || root["type"] != "object" {
		return false
	}
	c := &strictCheck{}
	if defs, has := root["$defs"]; has {
		m, ok := defs.(map[string]any)
		if !ok {
			return false
		}
		for _, d := range m {
			if !c.schema(d, 1) {
				return false
			}
		}
		root = withoutKey(root, "$defs")
	}
	return c.schema(root, 1) && c.properties <= strictMaxProperties && c.enumValues <= strictMaxEnumValues
}

type strictCheck struct{ properties, enumValues int }

func (c *strictCheck) schema(v any, depth int) bool {
	m, ok := v.(map[string]any)
	if !ok || depth > strictMaxDepth {
		return false // boolean schemas are not accepted either
	}
	for k := range m {
		if !strictKeywords[k] {
			return false
		}
	}
	if ref, has := m["$ref"]; has {
		r, ok := ref.(string)
		return ok && strings.HasPrefix(r, "#/$defs/")
	}
	if branches, has := m["anyOf"]; has {
		list, ok := branches.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, b := range list {
			if !c.schema(b, depth) {
				return false
			}
		}
		if _, typed := m["type"]; !typed {
			return true
		}
	}
	types, ok := typeList(m["type"])
	if !ok {
		return false
	}
	if e, has := m["enum"]; has {
		list, ok := e.([]any)
		if !ok {
			return false
		}
		c.enumValues += len(list)
	}
	if types["object"] && !c.object(m, depth) {
		return false
	}
	if types["array"] {
		items, has := m["items"]
		if !has || !c.schema(items, depth+1) {
			return false
		}
	}
	return true
}

func (c *strictCheck) object(m map[string]any, depth int) bool {
	if m["additionalProperties"] != false {
		return false
	}
	props := map[string]any{}
	if p, has := m["properties"]; has {
		if props, _ = p.(map[string]any); props == nil {
			return false
		}
	}
	req, _ := m["required"].([]any)
	if _, has := m["required"]; has && req == nil {
		return false
	}
	if len(req) != len(props) {
		return false
	}
	seen := map[string]bool{}
	for _, r := range req {
		name, ok := r.(string)
		if _, known := props[name]; !ok || !known || seen[name] {
			return false
		}
		seen[name] = true
	}
	c.properties += len(props)
	for _, p := range props {
		if !c.schema(p, depth+1) {
			return false
		}
	}
	return true
}

// typeList reads "type": one type name or a list of them.
func typeList(v any) (map[string]bool, bool) {
	out := map[string]bool{}
	switch t := v.(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out[s] = true
		}
	default:
		return nil, false
	}
	for t := range out {
		if !strictTypes[t] {
			return nil, false
		}
	}
	return out, len(out) > 0
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
