// Package jsonkind names the JSON type of a value in the words an error message to a model uses
// ("must be a JSON object, not an array"): the toolset's argument checks, the [RUN_MODULE]
// parser and the MCP stdio framing say it the same way.
package jsonkind

import (
	"bytes"
	"encoding/json"
)

// Of names the JSON type of raw, for messages: "an object", "an array", "a string", "a
// boolean", "null", "a number", or "nothing" when raw is empty. It looks at the first byte only:
// raw is known to be JSON, or the message says what was found where an object belongs.
func Of(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
