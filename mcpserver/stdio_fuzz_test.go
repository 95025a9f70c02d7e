package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParseLine: whatever line a client sends, it is a message or a refusal whose reply is one
// JSON-RPC error line, never a panic.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `42`, `[]`, `{"foo":1}`, "\xff\xfe",
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}`, `{"jsonrpc":"1.0"}`, ``, `null`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"x"} {"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, ref := parseLine(line)
		blank := len(bytes.Trim(line, " \t\r\n")) == 0
		if msg != nil && ref != nil || !blank && msg == nil && ref == nil {
			t.Fatalf("parseLine(%q) = %v, %v: want exactly one of a message and a refusal (neither for a blank line)", line, msg, ref)
		}
		if ref == nil {
			return
		}
		out := ref.reply(1)
		if bytes.Count(out, []byte("\n")) > 1 || !json.Valid(bytes.TrimSpace(out)) {
			t.Fatalf("reply %q to %q is not one JSON line", out, line)
		}
	})
}

// FuzzLineReader: lines of any content and length come out whole up to the bound, refused past
// it, without ever holding more than the bound.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint8(2))
	f.Add(bytes.Repeat([]byte("x"), 300), uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		bound := int(max) + 1
		lr := newLineReader(bytes.NewReader(data), func() int { return bound })
		for range len(data) + 2 {
			line, err := lr.next()
			if errors.Is(err, errLineTooLong) {
				continue
			}
			if err != nil {
				return
			}
			if len(line) > bound {
				t.Fatalf("a line of %d bytes past the bound %d", len(line), bound)
			}
		}
		t.Fatal("the reader did not end")
	})
}
