package spec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// FuzzPrepareArgs: a caller's arguments, whatever they are, come out as a JSON object that passes
// the schema, or are refused as invalid_args — never a panic or another kind.
func FuzzPrepareArgs(f *testing.F) {
	schema, err := spec.CompileSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":50},` +
		`"n":{"type":"integer","default":3},"tags":{"type":"array","items":{"type":"string"}}},"required":["text"],"additionalProperties":false}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"text":"a"}`, `{"text":"a","n":"x"}`, `[]`, ``, `null`, `{"text":"a","extra":1}`,
		`{"text":` + string(bytes.Repeat([]byte("["), 100)), `{"text":"\ud800"}`, `{"text":"a"} {}`, `{"text":"a","n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		out, err := schema.Prepare(args)
		if err != nil {
			var re *run.Error
			if !errors.As(err, &re) || re.Kind != run.KindInvalidArgs {
				t.Fatalf("Prepare(%q): %v, want invalid_args", args, err)
			}
			return
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // 1e400 is valid JSON, if no float64
		if dec.Decode(&obj) != nil {
			t.Fatalf("Prepare(%q) = %q, not a JSON object", args, out)
		}
		if _, err := schema.Prepare(out); err != nil {
			t.Fatalf("Prepare of its own output %q: %v", out, err)
		}
	})
}
