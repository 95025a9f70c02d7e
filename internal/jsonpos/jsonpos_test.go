package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want, hint string
	}{
		{"after a key", "{\n  \"a\": 1,\n  \"b\" }\n", "3:7: invalid character '}' after object key", ""},
		{"trailing comma", "{\n  \"a\": 1,\n}", "3:1: invalid character '}' looking for beginning of object key string",
			"remove the comma before it: JSON allows none after the last item"},
		{"trailing comma in a list", "{\"a\": [1, 2, ]}", "1:14: invalid character ']' looking for beginning of value",
			"remove the comma before it: JSON allows none after the last item"},
		{"columns count characters", "\n\n  {\"é\": 1 2}", "3:11: invalid character '2' after object key:value pair", "a comma is missing before it"},
		{"cut short", "{\"a\": [1,\n2", "2:2: the file ends inside a value", "close every { with } and every [ with ]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			err := Locate([]byte(tc.doc), json.NewDecoder(bytes.NewReader([]byte(tc.doc))).Decode(&v))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if pe.Error() != tc.want || pe.Hint != tc.hint {
				t.Errorf("got %v (hint %q), want %s (hint %q)", err, pe.Hint, tc.want, tc.hint)
			}
		})
	}
	other := errors.New("not a syntax error")
	if err := Locate(nil, other); err != other {
		t.Errorf("another error came back as %v", err)
	}
}
