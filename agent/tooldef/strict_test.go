package tooldef_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
)

func TestStrictCompatible(t *testing.T) {
	many := func(n int) string {
		props, req := make([]string, n), make([]string, n)
		for i := range props {
			props[i] = fmt.Sprintf(`"p%d":{"type":"string"}`, i)
			req[i] = fmt.Sprintf(`"p%d"`, i)
		}
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `],"additionalProperties":false}`
	}
	nested := func(levels int) string {
		s := `{"type":"string"}`
		for i := 0; i < levels; i++ {
			s = `{"type":"object","properties":{"x":` + s + `},"required":["x"],"additionalProperties":false}`
		}
		return s
	}
	tests := []struct {
		name   string
		schema string
		want   bool
	}{
		{"no properties", `{"type":"object","properties":{},"additionalProperties":false}`, true},
		{"no properties keyword", `{"type":"object","additionalProperties":false}`, true},
		{"all required", `{"type":"object","properties":{"a":{"type":"string","description":"d"},"b":{"type":"integer","enum":[1,2]}},"required":["b","a"],"additionalProperties":false}`, true},
		{"nullable instead of optional", `{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`, true},
		{"nested object and array", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}},"required":["a"],"additionalProperties":false}`, true},
		{"anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a"],"additionalProperties":false}`, true},
		{"$defs and $ref", `{"type":"object","$defs":{"p":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"],"additionalProperties":false}},"properties":{"a":{"$ref":"#/$defs/p"}},"required":["a"],"additionalProperties":false}`, true},
		{"100 properties", many(100), true},
		{"5 levels", nested(4), true},

		{"not JSON", `{`, false},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, false},
		{"root anyOf", `{"anyOf":[{"type":"object","additionalProperties":false}]}`, false},
		{"optional property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false},
		{"required names an unknown property", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false}`, false},
		{"required repeats a property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","a"],"additionalProperties":false}`, false},
		{"required not a list", `{"type":"object","properties":{},"required":"a","additionalProperties":false}`, false},
		{"additionalProperties missing", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"additionalProperties true", `{"type":"object","properties":{},"additionalProperties":true}`, false},
		{"nested object open", `{"type":"object","properties":{"a":{"type":"object","properties":{}}},"required":["a"],"additionalProperties":false}`, false},
		{"a default", `{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"],"additionalProperties":false}`, false},
		{"minLength", `{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`, false},
		{"format", `{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"required":["a"],"additionalProperties":false}`, false},
		{"allOf", `{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}},"required":["a"],"additionalProperties":false}`, false},
		{"$schema", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{},"additionalProperties":false}`, false},
		{"untyped property", `{"type":"object","properties":{"a":{}},"required":["a"],"additionalProperties":false}`, false},
		{"boolean schema", `{"type":"object","properties":{"a":true},"required":["a"],"additionalProperties":false}`, false},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"date"}},"required":["a"],"additionalProperties":false}`, false},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}},"required":["a"],"additionalProperties":false}`, false},
		{"remote $ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}},"required":["a"],"additionalProperties":false}`, false},
		{"bad $defs", `{"type":"object","$defs":{"p":{"type":"object"}},"properties":{},"additionalProperties":false}`, false},
		{"101 properties", many(101), false},
		{"6 levels", nested(6), false},
		{"501 enum values", `{"type":"object","properties":{"a":{"type":"integer","enum":[` + strings.TrimSuffix(strings.Repeat("1,", 501), ",") + `]}},"required":["a"],"additionalProperties":false}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tooldef.StrictCompatible(json.RawMessage(tc.schema)); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
