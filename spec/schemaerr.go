package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/skillbox-dev/skillbox/internal/nearest"
)

// paramType checks the type of one parameter of the map form, in plain words: the parameter,
// what is wrong and the types there are. The schema compiled from the parameters would refuse
// it too (see schemaProblems), in the metaschema's words; this check is the one that reports it.
func (c *Checker) paramType(field string, v any) {
	hint := "the types are " + strings.Join(paramTypes, ", ")
	switch t, ok := v.(string); {
	case v == nil:
		c.Add(field, hint, "is required")
	case !ok:
		c.Add(field, hint, "must be a string, not %s", TypeName(v))
	case !contains(paramTypes, t):
		near := typeAliases[strings.ToLower(t)]
		if near == "" {
			near = nearest.Name(t, paramTypes)
		}
		if near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, hint)
		}
		c.Add(field, hint, "%q is not a type", t)
	}
}

// typeAliases are other languages' names of the parameter types.
var typeAliases = map[string]string{"int": "integer", "long": "integer", "bool": "boolean", "str": "string", "text": "string",
	"float": "number", "double": "number", "decimal": "number", "list": "array", "dict": "object", "map": "object"}

// schemaWords is a validation error of a value against a schema in the schema's words, one
// finding per place ("at items.0: got number, want string"), without the validator's dump.
func schemaWords(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var words []string
	for _, leaf := range leaves(ve, nil) {
		w := leaf.ErrorKind.LocalizedString(schemaPrinter)
		if len(leaf.InstanceLocation) > 0 {
			w = "at " + strings.Join(leaf.InstanceLocation, ".") + ": " + w
		}
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return strings.Join(words, "; ")
}

// schemaPrinter words the metaschema's findings.
var schemaPrinter = message.NewPrinter(language.English)

// schemaProblems reports why the parameters' schema does not compile: one problem per place in
// the file the metaschema refused, in its own words, and none where a plain check of the
// parameters (paramType, ...) has already reported the same place: one mistake, one message.
// mapForm says the parameters were the map form, whose parameter "a" is the schema's
// "properties.a".
func (c *Checker) schemaProblems(err error, mapForm bool) {
	const hint = "fix the schema so it is valid JSON Schema (draft 2020-12)"
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		c.Add("parameters", hint, "%v", err)
		return
	}
	var fields []string
	msgs := map[string][]*jsonschema.ValidationError{}
	for _, leaf := range leaves(ve, nil) {
		loc := leaf.InstanceLocation
		if mapForm && len(loc) >= 2 && loc[0] == "properties" {
			loc = loc[1:]
		}
		field := strings.Join(append([]string{"parameters"}, loc...), ".")
		if c.reported(field) {
			continue
		}
		if _, seen := msgs[field]; !seen {
			fields = append(fields, field)
		}
		msgs[field] = append(msgs[field], leaf)
	}
	for _, field := range fields {
		var words []string
		for _, leaf := range msgs[field] {
			// Of the alternatives an anyOf tried, "got string, want array" is the one the
			// value was never meant to be: left out when another says what is wrong.
			if _, isType := leaf.ErrorKind.(*kind.Type); isType && len(msgs[field]) > 1 {
				continue
			}
			if w := leaf.ErrorKind.LocalizedString(schemaPrinter); !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
		c.Add(field, hint, "%s", strings.Join(words, "; "))
	}
}

// leaves are the findings of ve that have no finer cause, in order.
func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

// reported reports whether a problem already names field, or a field that holds it.
func (c *Checker) reported(field string) bool {
	for _, p := range c.Problems {
		if p.Path == c.Path && (p.Field == field || strings.HasPrefix(field, p.Field+".")) {
			return true
		}
	}
	return false
}
