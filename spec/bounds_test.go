package spec_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// The documents below are the schema bombs that internal/docbound refuses. Each is small: the
// bound is on the work a document makes, which its bytes do not bound.

// deepManifest is the red team's manifest: about 14 kB of "items" nested 1,400 levels deep in the
// parameters schema, which took the old loader seconds to compile.
func deepManifest(levels int) string {
	return `{"id":"deep","name":"deep","description":"d","parameters":{"type":"object","properties":{"a":` +
		strings.Repeat(`{"items":`, levels) + `{}` + strings.Repeat(`}`, levels) + `}}}`
}

// deepManifestYAML is the same in YAML's flow style, without a description.
func deepManifestYAML(levels int) string {
	return "id: deep\nname: deep\nparameters: {type: object, properties: {a: " +
		strings.Repeat(`{items: `, levels) + `{}` + strings.Repeat(`}`, levels) + "}}\n"
}

// aliasBombYAML is a "billion laughs" that yaml.v3's own alias limit lets through: it allows 99%
// of a document's values to come from aliases while it holds under 400,000, so a plain list of
// 5,000 values comes first, then anchors of 10, 100 and 1,000 values, then 300 aliases that stand
// for 333,000 more. It is the value of field, in a document that starts with head; the plain
// values and the anchors are within the bounds, only the aliases' expansion is not.
func aliasBombYAML(head, field string) string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "%s:\n  pad: [%s]\n  l0: &l0 [%s]\n", field, strings.TrimSuffix(strings.Repeat("0,", 5_000), ","), strings.TrimSuffix(strings.Repeat("x,", 10), ","))
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	fmt.Fprintf(&b, "  bomb: [%s]\n", strings.TrimSuffix(strings.Repeat("*l2,", 300), ","))
	return b.String()
}

// problems returns the problems of a manifest ParseManifest refuses.
func problems(t *testing.T, name, data string) []*spec.ManifestError {
	t.Helper()
	_, err := spec.ParseManifest(name, []byte(data))
	var se *spec.SkillError
	if !errors.As(err, &se) {
		t.Fatalf("%s accepted (%v)", name, err)
	}
	return se.Problems
}

// Each bomb is refused with its bound, at the field and path where it crossed it, and the other
// problems of the file are still reported.
func TestManifestBombs(t *testing.T) {
	var wide strings.Builder // 100,000 sibling keys, within the 1 MiB a manifest may have
	wide.WriteString(`{"id":"wide","name":"wide","parameters":{"type":"object","properties":{`)
	for i := range 100_000 {
		if i > 0 {
			wide.WriteString(",")
		}
		fmt.Fprintf(&wide, `"%x":1`, i)
	}
	wide.WriteString(`}}}`)
	var spread strings.Builder // 100,000 keys in YAML mappings of 500: under yaml's 512 per mapping
	spread.WriteString("id: wide\nname: wide\nresult:\n")
	for i := range 200 {
		fmt.Fprintf(&spread, "  m%d: {", i)
		for j := range 500 {
			fmt.Fprintf(&spread, "k%d: 1, ", j)
		}
		spread.WriteString("}\n")
	}
	cases := []struct {
		name, file, data string
		field, msg       string // of the bound's problem ("" field: the file as a whole)
		others           int    // other problems reported beside it
	}{
		{"deep JSON", "skill.json", deepManifest(1400), "parameters.properties.a.items.items...(25 more)...items.items", "nests deeper than 32 levels", 0},
		{"deep YAML", "skill.yaml", deepManifestYAML(1400), "parameters.properties.a.items.items...(25 more)...items.items", "line 3: nests deeper than 32 levels", 1},
		{"wide JSON", "skill.json", wide.String(), "parameters.properties", "holds more than 10,000 values", 1},
		{"wide YAML", "skill.yaml", spread.String(), "result.m19", "holds more than 10,000 values", 1},
		{"alias bomb", "skill.yaml", aliasBombYAML("id: bomb\nname: bomb\ndescription: d\n", "result"), "result.bomb[3][3][8]", "line 6: the document holds more than 10,000 values", 0},
		{"top-level keys", "skill.json", `{` + keys(20_000) + `}`, "", "holds more than 10,000 values", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) > spec.MaxManifestBytes {
				t.Fatalf("%d bytes: larger than a manifest may be", len(tc.data))
			}
			ps := problems(t, tc.file, tc.data)
			var bound *spec.ManifestError
			for _, p := range ps {
				if strings.Contains(p.Msg, tc.msg) {
					bound = p
				}
			}
			if bound == nil || bound.Field != tc.field || bound.Path != tc.file || bound.Hint == "" {
				t.Fatalf("no problem %q at %q in %v", tc.msg, tc.field, ps)
			}
			if len(ps) != 1+tc.others {
				t.Errorf("%d problems, want %d: %v", len(ps), 1+tc.others, ps)
			}
		})
	}
}

// keys is n distinct JSON fields.
func keys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	return b.String()
}

// A schema is bounded by its objects and booleans, which the compiler's cost grows with the
// square of; a long enum is not a subschema and passes.
func TestSchemaNodeBound(t *testing.T) {
	props := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
		}
		return `{"type":"object","properties":{` + b.String() + `}}`
	}
	if _, err := spec.ParseManifest("skill.json", []byte(simple("a", `"parameters":`+props(docbound.MaxSchemaNodes-2)))); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	for _, field := range []string{"parameters", "result"} {
		ps := problems(t, "skill.json", simple("a", `"`+field+`":`+props(docbound.MaxSchemaNodes-1)))
		if len(ps) != 1 || ps[0].Field != field+".properties" || !strings.Contains(ps[0].Msg, "more than 2,000 objects and booleans") {
			t.Errorf("%s: %v", field, ps)
		}
	}
}

// A caller's arguments nest at most MaxArgsDepth levels, whatever the schema accepts: deeper,
// the validator's errors cost the square of the depth.
func TestDeepArgs(t *testing.T) {
	open := func(n int) string {
		return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	schemas := map[string]string{
		"any":       `{"type":"object"}`,
		"recursive": `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}}}`,
	}
	for name, raw := range schemas {
		s, err := spec.CompileSchema([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prepare([]byte(open(docbound.MaxArgsDepth - 1))); err != nil {
			t.Errorf("%s: %d levels: %v", name, docbound.MaxArgsDepth, err)
		}
		for _, n := range []int{docbound.MaxArgsDepth, 2_000} {
			_, err := s.Prepare([]byte(open(n)))
			var re *run.Error
			if !errors.As(err, &re) || re.Kind != run.KindInvalidArgs ||
				!strings.Contains(re.Message, `argument "a[0][0][0][0]...(`) || !strings.Contains(re.Message, "nests deeper than 64 levels; send flatter arguments") {
				t.Errorf("%s: %d levels: %v", name, n+1, err)
			}
		}
	}
}

// Rich schemas, the bundled skills and every manifest and policy in the repository still load.
func TestLegitimateDocumentsLoad(t *testing.T) {
	enum := func(n int) string {
		var vs []string
		for i := range n {
			vs = append(vs, fmt.Sprintf(`"v%d"`, i))
		}
		return "[" + strings.Join(vs, ",") + "]"
	}
	// Six levels of nullable objects (anyOf), each with a list of objects and an enum of 300.
	level := func(inner string) string {
		return `{"anyOf":[{"type":"null"},{"type":"object","additionalProperties":false,"required":["name"],"properties":{
			"name":{"type":"string","minLength":1},"kind":{"enum":` + enum(300) + `},
			"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"number"}}}},
			"child":` + inner + `}}]}`
	}
	rich := `{"type":"string"}`
	for range 6 {
		rich = level(rich)
	}
	manifests := map[string]string{
		"rich":     simple("rich", `"parameters":{"type":"object","properties":{"root":`+rich+`,"tz":{"enum":`+enum(600)+`}},"$defs":{"x":{"type":"integer"}}},"result":`+rich),
		"map form": simple("map", `"parameters":{"country":{"type":"string","enum":`+enum(250)+`,"default":"v1"},"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}}}}}`),
	}
	files, _ := filepath.Glob("../skills/*/skill.*")
	more, _ := filepath.Glob("../testdata/*/*/skill.*") // none today; any added later is checked
	files = append(files, more...)
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		manifests[f] = string(data)
	}
	for name, data := range manifests {
		file := "skill.json"
		if strings.HasSuffix(name, ".yaml") {
			file = "skill.yaml"
		}
		if _, err := spec.ParseManifest(file, []byte(data)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	policies, _ := filepath.Glob("../examples/*.yaml")
	for _, f := range policies {
		if _, err := policy.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// BenchmarkParseBombs is the time ParseManifest takes on each bomb, and as a ratio ("x-floor")
// to a legitimate manifest (word-count's) parsed in the same run.
//
//	go test -run '^$' -bench ParseBombs ./spec/
func BenchmarkParseBombs(b *testing.B) {
	floorData, err := os.ReadFile("../skills/word-count/skill.json")
	if err != nil {
		b.Fatal(err)
	}
	wide := `{"id":"wide","name":"wide","description":"d","parameters":{"type":"object","properties":{"a":{"enum":[` +
		strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") + `]}}}}`
	cases := []struct{ name, file, data string }{
		{"deep-1400", "skill.json", deepManifest(1400)},
		{"deep-1400-yaml", "skill.yaml", deepManifestYAML(1400)},
		{"alias-bomb", "skill.yaml", aliasBombYAML("id: bomb\nname: bomb\ndescription: d\n", "result")},
		{"wide-enum", "skill.json", wide},
	}
	parse := func(file string, data []byte) func() {
		return func() { _, _ = spec.ParseManifest(file, data) }
	}
	floor := parse("skill.json", floorData)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			bomb := parse(tc.file, []byte(tc.data))
			bomb()
			b.ResetTimer()
			ns := measure(b.N, bomb)
			b.StopTimer()
			floorNs := measure(max(b.N, 100), floor)
			b.ReportMetric(floorNs, "floor-ns/op")
			b.ReportMetric(ns/floorNs, "x-floor")
		})
	}
}
