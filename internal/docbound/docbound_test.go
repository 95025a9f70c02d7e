package docbound

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// nest wraps inner in n levels of open/close.
func nest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// list is "[v,v,...]" of n copies.
func list(v string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(v+",", n), ",") + "]"
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every crossing names the field, the path where it happened and the bound; the fields that
// cross are removed and the others kept.
func TestFields(t *testing.T) {
	items := `{"a":` + nest(`{"items":`, "{}", "}", 40) + `}`
	cases := []struct {
		name string
		doc  string
		want []Error // Field, Kind, Path
		kept []string
	}{
		{"within", `{"id":"x","p":` + nest("[", "1", "]", MaxDepth-1) + `}`, nil, []string{"id", "p"}},
		{"one level too deep", `{"id":"x","p":` + nest("[", "1", "]", MaxDepth) + `}`,
			[]Error{{Field: "p", Kind: Depth, Path: "p[0][0][0][0]...(25 more)...[0][0]"}}, []string{"id"}},
		{"scalars do not nest", `{"p":` + nest("[", `"deepest"`, "]", MaxDepth-1) + `}`, nil, []string{"p"}},
		{"path of a schema", `{"parameters":` + items + `,"name":"n"}`,
			[]Error{{Field: "parameters", Kind: Depth, Path: "parameters.a.items.items.items...(25 more)...items.items"}}, []string{"name"}},
		{"two fields", `{"a":` + nest("[", "", "]", 40) + `,"b":` + nest(`{"k":`, "1", "}", 40) + `,"c":1}`,
			[]Error{{Field: "a", Kind: Depth}, {Field: "b", Kind: Depth}}, []string{"c"}},
		{"odd keys quoted", `{"p":{"a b":` + nest("[", "", "]", 40) + `}}`,
			[]Error{{Field: "p", Kind: Depth, Path: `p["a b"][0][0][0]...(25 more)...[0][0]`}}, nil},
		{"long list", `{"p":{"enum":` + list("1", MaxValues) + `},"q":1}`,
			[]Error{{Field: "p", Kind: Values, Path: "p.enum"}}, []string{"q"}},
		{"values at the bound", `{"p":` + list("1", MaxValues-2) + `}`, nil, []string{"p"}},
		{"one value over", `{"p":` + list("1", MaxValues-1) + `}`, []Error{{Field: "p", Kind: Values, Path: "p"}}, nil},
		{"shared by fields", `{"a":` + list("1", MaxValues/2) + `,"b":` + list("1", MaxValues/2) + `}`,
			[]Error{{Field: "b", Kind: Values, Path: "b"}}, []string{"a"}},
		{"crossed in a nested list", `{"p":[` + list("1", MaxValues/2) + `,` + list("1", MaxValues/2) + `]}`,
			[]Error{{Field: "p", Kind: Values, Path: "p[1]"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := decodeJSON(t, tc.doc)
			errs := Fields(doc)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			for i, w := range tc.want {
				e := errs[i]
				if e.Field != w.Field || e.Kind != w.Kind || (w.Path != "" && e.Path != w.Path) {
					t.Errorf("error %d: %+v, want %+v", i, e, w)
				}
				if _, has := doc[e.Field]; has {
					t.Errorf("field %q was kept", e.Field)
				}
			}
			if len(doc) != len(tc.kept) {
				t.Errorf("kept %v, want %v", doc, tc.kept)
			}
			for _, k := range tc.kept {
				if _, has := doc[k]; !has {
					t.Errorf("%q was removed", k)
				}
			}
		})
	}
}

// An object of too many fields is refused as a whole, before its fields are looked at.
func TestFieldsWhole(t *testing.T) {
	doc := map[string]any{}
	for i := range 100_000 {
		doc[fmt.Sprint("k", i)] = 1
	}
	errs := Fields(doc)
	if len(errs) != 1 || errs[0].Field != "" || errs[0].Kind != Values || len(doc) != 0 {
		t.Fatalf("%v, %d fields left", errs, len(doc))
	}
	if !strings.Contains(errs[0].Error(), "more than 10,000 values") {
		t.Errorf("message %q", errs[0].Error())
	}
}

// yamlTop parses s and returns its top-level node.
func yamlTop(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(s), &root); err != nil {
		t.Fatal(err)
	}
	return root.Content[0]
}

// aliasBomb is a YAML mapping whose field "bomb" stands for 10^(levels+1) values, in a few lines.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("name: x\nl0: &l0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i < levels; i++ { // l1 .. l(levels-1), 10^(i+1) values each
		fmt.Fprintf(&b, "l%d: &l%d %s\n", i, i, list(fmt.Sprintf("*l%d", i-1), 10))
	}
	fmt.Fprintf(&b, "bomb: %s\n", list(fmt.Sprintf("*l%d", levels-1), 10))
	return b.String()
}

func TestYAMLFields(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []Error // Field, Kind, Path, Line
		kept []string
	}{
		{"within", "a: 1\nb: " + nest("[", "1", "]", MaxDepth-1) + "\n", nil, []string{"a", "b"}},
		{"too deep", "a: 1\nb: " + nest("[", "1", "]", MaxDepth) + "\n",
			[]Error{{Field: "b", Kind: Depth, Path: "b[0][0][0][0]...(25 more)...[0][0]", Line: 2}}, []string{"a"}},
		{"block style", "a:\n  b:\n    c:\n" + strings.Repeat("  ", 3) + nest("[", "", "]", 40) + "\n",
			[]Error{{Field: "a", Kind: Depth, Line: 4}}, nil},
		{"alias bomb", aliasBomb(3),
			[]Error{{Field: "bomb", Kind: Values, Path: "bomb[7][8][8]", Line: 2}}, []string{"name", "l0", "l1", "l2"}},
		{"alias deepens", "a: &a " + nest("[", "", "]", 20) + "\nb: " + nest("[", "*a", "]", 20) + "\n",
			[]Error{{Field: "b", Kind: Depth, Line: 1}}, []string{"a"}},
		{"alias cycle", "a: &a [*a]\nb: 1\n", nil, []string{"a", "b"}},
		{"merge key", "base: &b {x: 1, y: 2}\nc: {<<: *b, z: 3}\n", nil, []string{"base", "c"}},
		{"complex key", "a: {? " + nest("[", "", "]", 40) + " : 1}\n", []Error{{Field: "a", Kind: Depth}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			top := yamlTop(t, tc.doc)
			errs := YAMLFields(top)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			for i, w := range tc.want {
				e := errs[i]
				if e.Field != w.Field || e.Kind != w.Kind || (w.Path != "" && e.Path != w.Path) || (w.Line != 0 && e.Line != w.Line) {
					t.Errorf("error %d: %+v, want %+v", i, e, w)
				}
			}
			var kept []string
			for i := 0; i < len(top.Content); i += 2 {
				kept = append(kept, top.Content[i].Value)
			}
			if strings.Join(kept, ",") != strings.Join(tc.kept, ",") {
				t.Errorf("kept %v, want %v", kept, tc.kept)
			}
		})
	}
}

// A document that is not a mapping is checked whole: an alias bomb in a list is refused before
// anything decodes it.
func TestYAMLFieldsNotAMapping(t *testing.T) {
	top := yamlTop(t, "- &a [x,x,x,x,x,x,x,x,x,x]\n- &b "+list("*a", 10)+"\n- &c "+list("*b", 10)+"\n- "+list("*c", 10)+"\n")
	errs := YAMLFields(top)
	if len(errs) != 1 || errs[0].Field != "" || errs[0].Kind != Values {
		t.Fatalf("%v", errs)
	}
}

func TestArgs(t *testing.T) {
	ok := map[string]any{"a": decodeJSON(t, `{"x":`+nest("[", "1", "]", MaxArgsDepth-2)+`}`)}
	if err := Args(ok); err != nil {
		t.Errorf("%d levels: %v", MaxArgsDepth, err)
	}
	deep := map[string]any{"a": decodeJSON(t, `{"x":`+nest("[", "1", "]", MaxArgsDepth-1)+`}`)}
	err := Args(deep)
	if err == nil || err.Kind != Depth || err.Limit != MaxArgsDepth || !strings.HasPrefix(err.Path, "a.x[0][0][0]...") {
		t.Fatalf("%d levels: %+v", MaxArgsDepth+1, err)
	}
	wide := map[string]any{"a": make([]any, 100_000)}
	if err := Args(wide); err != nil {
		t.Errorf("a wide value is not bounded here: %v", err)
	}
}

func TestSchema(t *testing.T) {
	props := func(n int) map[string]any {
		p := map[string]any{}
		for i := range n {
			p[fmt.Sprintf("p%04d", i)] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p, "additionalProperties": false}
	}
	// The schema, its properties object, false, and one object per property.
	if err := Schema(props(MaxSchemaNodes-3), "parameters"); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	err := Schema(props(MaxSchemaNodes-2), "parameters")
	if err == nil || err.Kind != SchemaNodes || err.Field != "parameters" || err.Path != "parameters.properties" {
		t.Fatalf("over the bound: %+v", err)
	}
	if !strings.Contains(err.Error(), "more than 2,000 objects and booleans") {
		t.Errorf("message %q", err.Error())
	}
	// Strings and numbers are not subschemas: a long enum is not counted here.
	enum := map[string]any{"enum": make([]any, 5*MaxSchemaNodes)}
	for i := range enum["enum"].([]any) {
		enum["enum"].([]any)[i] = "v"
	}
	if err := Schema(enum, "result"); err != nil {
		t.Errorf("enum: %v", err)
	}
	bools := map[string]any{"allOf": make([]any, MaxSchemaNodes)}
	for i := range bools["allOf"].([]any) {
		bools["allOf"].([]any)[i] = true
	}
	if err := Schema(bools, "result"); err == nil || err.Path != "result.allOf" {
		t.Errorf("boolean subschemas: %+v", err)
	}
}

func TestPath(t *testing.T) {
	cases := []struct {
		p    path
		want string
	}{
		{path{}.key("a"), "a"},
		{path{}.key("a").key("b").index(2), "a.b[2]"},
		{path{}.key("a.b"), `["a.b"]`},
		{path{}.key("x").key(strings.Repeat("k", 100)), `x["` + strings.Repeat("k", 40) + `..."]`},
		{path{}.key("a").index(0).index(1).index(2).index(3).index(4).index(5), "a[0][1][2][3][4][5]"},
		{path{}.key("a").index(0).index(1).index(2).index(3).index(4).index(5).index(6), "a[0][1][2][3][4][5][6]"},
		{path{}.key("a").index(0).index(1).index(2).index(3).index(4).index(5).index(6).index(7), "a[0][1][2][3]...(2 more)...[6][7]"},
	}
	for _, tc := range cases {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
