package spec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// One bad parameter type is one problem, in plain words; the metaschema's findings are reported
// only where no plain check spoke, one line per place, without the metaschema's own dump.
func TestParameterTypeReportedOnce(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		want         []string
	}{
		{"map form", `{"a": {"type": "strng"}}`, []string{
			`skill.json: parameters.a.type: "strng" is not a type (did you mean "string"? the types are string, integer, number, boolean, array, object)`,
		}},
		{"map form, no type", `{"a": {"description": "x"}}`, []string{
			`skill.json: parameters.a.type: is required (the types are string, integer, number, boolean, array, object)`,
		}},
		{"map form, and a keyword only the metaschema checks", `{"a": {"type": "strng"}, "b": {"type": "string", "minLength": "x"}}`, []string{
			`skill.json: parameters.a.type: "strng" is not a type (did you mean "string"? the types are string, integer, number, boolean, array, object)`,
			`skill.json: parameters.b.minLength: got string, want integer (fix the schema so it is valid JSON Schema (draft 2020-12))`,
		}},
		{"schema form", `{"type": "object", "properties": {"a": {"type": "strng"}}}`, []string{
			`skill.json: parameters.properties.a.type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' (fix the schema so it is valid JSON Schema (draft 2020-12))`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.ParseManifest("skill.json", []byte(`{"id":"a","name":"a","description":"d","parameters":`+tc.params+`}`))
			var se *spec.SkillError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SkillError", err)
			}
			var got []string
			for _, p := range se.Problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
