package spec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

// chainedDefs is n definitions, each applying the next twice (allOf): 1.5 kB at n = 22, whose
// validation evaluates the last one 2^22 times, seconds for every run of the skill.
func chainedDefs(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object"}`, n))
	return `{"type":"object","allOf":[{"$ref":"#/$defs/d0"}],"$defs":{` + strings.Join(defs, ",") + `}}`
}

func TestSchemaCost(t *testing.T) {
	cases := []struct {
		name, schema string
		loop         string // the loop reported, or "" for the count, when refused
		refused      bool
	}{
		{"chained definitions", chainedDefs(22), "", true},
		{"a few chained definitions", chainedDefs(8), "", false},
		{"branching recursion", `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[
			{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"array","items":{"$ref":"#/$defs/n"}}]}}}`, "", true},
		{"a reference loop", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}}}`, "#/$defs/", true},
		{"a tree", `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","required":["name"],
			"properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`, "", false},
		{"a dynamic tree", `{"type":"object","properties":{"t":{"$ref":"#/$defs/tree"}},"$defs":{"tree":{"$dynamicAnchor":"node","type":"object",
			"properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}}}`, "", false},
		{"a definition used often", `{"type":"object","properties":{"a":{"$ref":"#/$defs/addr"},"b":{"$ref":"#/$defs/addr"},
			"c":{"type":"array","items":{"$ref":"#/$defs/addr"}},"d":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/addr"}]}},
			"$defs":{"addr":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"},
			"geo":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}}}}}}}`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spec.CompileSchema([]byte(tc.schema))
			var ce *spec.SchemaCostError
			if errors.As(err, &ce) != tc.refused {
				t.Fatalf("refused %v: %v", !tc.refused, err)
			}
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !strings.HasPrefix(ce.Loop, tc.loop) || (tc.loop == "") != (ce.Loop == "") || ce.Hint() == "" {
				t.Errorf("%+v: %v", ce, err)
			}
		})
	}
}

// The manifest reports a costly schema as a problem of the field that holds it: parameters,
// result, or a parameter of the map form (whose default would be validated against it).
func TestManifestSchemaCost(t *testing.T) {
	bomb := chainedDefs(22)
	cases := []struct{ name, extra, field string }{
		{"parameters", `"parameters":` + bomb, "parameters"},
		{"result", `"result":` + bomb, "result"},
		{"a parameter's default", `"parameters":{"p":` + strings.Replace(bomb, `{"type":"object",`, `{"type":"object","default":{},`, 1) + `}`, "parameters.p"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := problems(t, "skill.json", simple("a", tc.extra))
			found := false
			for _, p := range ps {
				if p.Field == tc.field && strings.Contains(p.Msg, "could evaluate more than 10000 subschemas") && p.Hint != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("%v", ps)
			}
		})
	}
}
