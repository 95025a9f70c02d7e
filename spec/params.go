package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/skillbox-dev/skillbox/internal/docbound"
)

// paramFields are the keys of one parameter in the map form ({"name": {"type": ...}}). They
// are JSON Schema keywords plus "required", so the conversion is mostly a copy.
var paramFields = []string{"type", "description", "required", "default", "enum", "minimum", "maximum",
	"minLength", "maxLength", "pattern", "format", "items", "properties", "minItems", "maxItems", "examples"}

var paramTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

// parameters normalises the manifest's "parameters" to one JSON Schema object and checks it
// compiles. Two forms are accepted:
//
//   - the map form, {"prompt": {"type": "string", "required": true}}, which becomes an object
//     schema that refuses unknown arguments (a typo in an argument name is an error, not ignored);
//   - a full JSON Schema object, recognised by a string "type" at its top level, taken as it is.
//
// Missing parameters mean "no arguments".
func (c *Checker) parameters(v any) json.RawMessage {
	empty := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	if v == nil {
		return empty
	}
	p, ok := v.(map[string]any)
	if !ok {
		c.Add("parameters", `write {"name": {"type": "string"}} or a JSON Schema object`, "must be an object, not %s", TypeName(v))
		return empty
	}
	// The compiler's cost is quadratic in the subschemas: count them before it runs.
	if b := docbound.Schema(p, "parameters"); b != nil {
		c.AddBounds([]*docbound.Error{b})
		return empty
	}
	var schema map[string]any
	t, isSchema := p["type"].(string)
	if isSchema {
		if t != "object" {
			c.Add("parameters.type", "arguments are always a JSON object", `must be "object", not %q`, t)
			return empty
		}
		schema = p
	} else {
		schema = c.paramMap(p)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		c.Add("parameters", "", "cannot encode: %v", err)
		return empty
	}
	compiled, err := CompileSchema(raw)
	var ce *SchemaCostError
	if errors.As(err, &ce) {
		c.Add("parameters", ce.Hint(), "%v", err)
		return empty
	}
	if err != nil {
		c.schemaProblems(err, !isSchema)
		return empty
	}
	c.Schema = compiled
	return raw
}

// Parameters normalises and checks v as a manifest's "parameters" (see parameters), for another
// file that declares arguments the same way (a module's module.json); the compiled schema is
// c.Schema.
func (c *Checker) Parameters(v any) json.RawMessage { return c.parameters(v) }

func (c *Checker) paramMap(p map[string]any) map[string]any {
	props := map[string]any{}
	required := []string{}
	names := make([]string, 0, len(p))
	for name := range p {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		field := "parameters." + name
		spec, ok := p[name].(map[string]any)
		if !ok {
			c.Add(field, `write {"type": "string", "description": "..."}`, "must be an object, not %s", TypeName(p[name]))
			continue
		}
		c.Known(spec, field, paramFields...)
		c.paramType(field+".type", spec["type"])
		prop := map[string]any{}
		for k, v := range spec {
			if k != "required" {
				prop[k] = v
			}
		}
		switch r := spec["required"].(type) {
		case nil:
		case bool:
			if r {
				required = append(required, name)
			}
		default:
			c.Add(field+".required", "use true or false", "must be a boolean, not %s", TypeName(r))
		}
		if _, has := spec["default"]; has && contains(required, name) {
			c.Add(field+".default", "drop one: a required argument never uses its default", "a required parameter cannot have a default")
		}
		if d, has := spec["default"]; has {
			if raw, err := json.Marshal(prop); err == nil {
				s, err := CompileSchema(raw)
				var ce *SchemaCostError
				switch {
				case errors.As(err, &ce):
					c.Add(field, ce.Hint(), "%v", err)
				case err == nil:
					if err := s.compiled.Validate(d); err != nil {
						c.Add(field+".default", "make the default satisfy the parameter's own type and constraints", "the default %s does not match: %s", mustJSON(d), schemaWords(err))
					}
				}
			}
		}
		props[name] = prop
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
