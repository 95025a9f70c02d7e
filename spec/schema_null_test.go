package spec_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestNullMeansOmitted: OpenAI's strict mode makes every property required and sends null for
// the optional ones a model leaves out; so do models in general. A null argument whose schema
// refuses null is read as omitted (so its default applies, or "is required" names it); one
// whose schema allows null keeps its null.
func TestNullMeansOmitted(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"a","name":"a","description":"d","parameters":{"type":"object",
		"properties":{
			"text":{"type":"string"},
			"top":{"type":"integer","default":5},
			"unit":{"$ref":"#/$defs/unit"},
			"note":{"type":["string","null"]},
			"tag":{"anyOf":[{"type":"string"},{"type":"null"}],"default":"x"},
			"any":{}},
		"required":["text"],"additionalProperties":false,
		"$defs":{"unit":{"type":"string","enum":["km","mi"],"default":"km"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.CompileSchema(m.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, want, fail string }{
		// Optional nulls are omitted: the defaults apply, the module never sees null.
		{args: `{"text":"a","top":null,"unit":null}`, want: `{"text":"a","top":5,"tag":"x"}`},
		// A required null is missing, said so.
		{args: `{"text":null}`, fail: `missing property 'text'`},
		// Schemas that allow null keep it, and keep it over a default.
		{args: `{"text":"a","note":null,"tag":null,"any":null}`, want: `{"text":"a","top":5,"note":null,"tag":null,"any":null}`},
		// Only null is dropped: a value of the wrong type is still an error.
		{args: `{"text":"a","top":"5"}`, fail: `argument "top": got string, want integer`},
		// An unknown argument stays unknown even when null: a typo is still named.
		{args: `{"text":"a","colour":null}`, fail: `additional properties 'colour' not allowed`},
		// Nested nulls are values, not omitted arguments.
		{args: `{"text":"a","any":{"x":null}}`, want: `{"text":"a","top":5,"tag":"x","any":{"x":null}}`},
	}
	for _, tc := range tests {
		out, err := s.Prepare([]byte(tc.args))
		if tc.fail != "" {
			if !errors.Is(err, run.ErrInvalidArgs) || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: got %v, want invalid_args containing %q", tc.args, err, tc.fail)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.args, err)
			continue
		}
		var got, want any
		_ = json.Unmarshal(out, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if !jsonEqual(got, want) {
			t.Errorf("%s: got %s, want %s", tc.args, out, tc.want)
		}
	}
}

// TestNullMeansOmittedMapForm: the map form's optional parameters (the common manifest) read a
// null as omitted too.
func TestNullMeansOmittedMapForm(t *testing.T) {
	m, err := spec.ParseManifest("skill.json", []byte(`{"id":"a","name":"a","description":"d","parameters":{
		"text":{"type":"string","required":true},
		"top":{"type":"integer","default":5},
		"name":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.CompileSchema(m.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Prepare([]byte(`{"text":"a","top":null,"name":null}`))
	if err != nil || string(out) != `{"text":"a","top":5}` {
		t.Fatalf("got %s, %v; want {\"text\":\"a\",\"top\":5}", out, err)
	}
}
