package spec_test

import (
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/spec"
)

// compactAliasBomb stands for 10^5 values in four lines; yaml.v3's own alias limit would refuse
// it too, but only after decoding thousands.
const compactAliasBomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"

// measureDoc returns how deeply v nests (the top level is 1; scalars add none) and how many
// values it holds: an independent count of what docbound bounds.
func measureDoc(v any) (depth, values int) {
	values = 1
	switch t := v.(type) {
	case map[string]any:
		depth = 1
		for _, e := range t {
			d, n := measureDoc(e)
			depth, values = max(depth, d+1), values+n
		}
	case []any:
		depth = 1
		for _, e := range t {
			d, n := measureDoc(e)
			depth, values = max(depth, d+1), values+n
		}
	}
	return depth, values
}

// FuzzParseDoc: parseDoc never panics, and what it returns is within the bounds: the fields it
// reports as crossing one are left out, and what remains nests at most MaxDepth levels and holds
// at most MaxValues values. Seeded with small bombs (the fuzzer minimizes large inputs slowly);
// each input's time is bounded by the same bounds, see BenchmarkParseBombs.
//
//	go test -run '^$' -fuzz '^FuzzParseDoc$' -fuzztime 60s ./spec/
func FuzzParseDoc(f *testing.F) {
	f.Add([]byte(deepManifest(40)), false)
	f.Add([]byte(deepManifestYAML(40)), true)
	f.Add([]byte(deepManifest(30)), false)
	f.Add([]byte(compactAliasBomb), true)
	f.Add([]byte("a: &a [*a]\n"), true)
	f.Add([]byte("b: &b {x: 1}\nc: {<<: *b, y: [*b, *b]}\n"), true)
	f.Add([]byte(`{"a":{`+keys(20)+`},"b":[`+strings.Repeat(`[`, 40)+strings.Repeat(`]`, 40)+`]}`), false)
	f.Add([]byte("- &x [1, 2]\n- *x\n"), true)
	f.Add([]byte("? &k ["+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"]\n: 1\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, yamlSyntax bool) {
		d, bounds, err := spec.ParseDoc(data, yamlSyntax)
		if err != nil {
			return
		}
		for _, b := range bounds {
			if _, kept := d[b.Field]; kept || b.Field == "" {
				t.Fatalf("field %q crossed a bound (%v) but is in the doc", b.Field, b)
			}
		}
		if depth, values := measureDoc(d); depth > docbound.MaxDepth || values > docbound.MaxValues {
			t.Fatalf("accepted a doc of depth %d and %d values", depth, values)
		}
	})
}
