// Package jsonpos places a JSON syntax error at its line and column, so that a message about a
// file a person wrote (skill.json, scripts/skillbox.json, a package.json) points at the place to
// fix instead of at a byte offset, or at nothing.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Error is a JSON syntax error placed in its document.
type Error struct {
	// Line and Column are 1-based; Column counts characters, not bytes.
	Line, Column int
	// Msg is what is wrong there, naming the offending character when there is one
	// ("invalid character '}' after object key").
	Msg string
	// Hint is how to fix it, when the place tells (a trailing comma); empty otherwise.
	Hint string
	// Err is the decoder's error.
	Err error
}

// Error is "line:column: msg", to follow a file's name: "skill.json:7:3: invalid character ...".
func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

func (e *Error) Unwrap() error { return e.Err }

// Locate returns err as an *Error when it is a syntax error of decoding data with encoding/json (a
// *json.SyntaxError, or the end of data reached inside a value); any other err as it is.
func Locate(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// The decoder stopped after reading the offending byte.
		off := int(min(max(se.Offset-1, 0), int64(len(data))))
		line, col := position(data, off)
		return &Error{Line: line, Column: col, Msg: se.Error(), Hint: hint(data, off, se.Error()), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, len(data))
		return &Error{Line: line, Column: col, Msg: "the file ends inside a value", Hint: "close every { with } and every [ with ]", Err: err}
	}
	return err
}

// position is the 1-based line and column (in characters) of the byte at off.
func position(data []byte, off int) (line, col int) {
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

// hint says how to fix the error at off, of message msg, when the text around it tells: a comma
// missing between two items, or one before a closing bracket, which JSON refuses and people write.
func hint(data []byte, off int, msg string) string {
	if strings.HasSuffix(msg, "after object key:value pair") || strings.HasSuffix(msg, "after array element") {
		return "a comma is missing before it"
	}
	if off >= len(data) || (data[off] != '}' && data[off] != ']') {
		return ""
	}
	if prev := bytes.TrimRight(data[:off], " \t\r\n"); len(prev) > 0 && prev[len(prev)-1] == ',' {
		return "remove the comma before it: JSON allows none after the last item"
	}
	return ""
}
