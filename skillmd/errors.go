package skillmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every error of this package matches one of them with errors.Is, except an I/O
// failure of the host itself (a disk error), which matches none.
var (
	// ErrInvalid: a SKILL.md that is not valid, or a resource path that is malformed.
	ErrInvalid = errors.New("skillmd: invalid")
	// ErrNotFound: the resource, or the skill directory, does not exist.
	ErrNotFound = errors.New("skillmd: not found")
	// ErrDenied: the resource exists but may not be read (outside the skill, hidden, a device).
	ErrDenied = errors.New("skillmd: denied")
	// ErrTooLarge: the resource is larger than the limit it was read with.
	ErrTooLarge = errors.New("skillmd: too large")
)

// Error is a problem in a SKILL.md: the file, the line when it is known, the frontmatter field,
// what is wrong and how to fix it. It matches [ErrInvalid].
//
// A file with several problems (no name and no description, say) gives one Error whose Problems
// holds each of them, so an author fixes them in one pass; its Msg then says how many there are.
// [Error.All] returns the problems of either form.
type Error struct {
	Path     string // the file, as given to the parser
	Line     int    // 1-based line in the file; 0 when unknown or the whole file
	Field    string // the frontmatter key ("allowed-tools[2]"); empty for the file as a whole
	Msg      string
	Hint     string
	Problems []*Error // when there are several; each has the same Path and no Problems
}

// Error formats e as "path:line: field: msg (hint)", then the problems, if any, after a colon and
// separated by semicolons.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	e.describe(&b)
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if p.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
		p.describe(&b)
	}
	return b.String()
}

func (e *Error) describe(b *strings.Builder) {
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
}

// Is reports whether target is [ErrInvalid].
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap exposes each of several problems to errors.As.
func (e *Error) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// All returns each problem: e.Problems when there are several, else e itself.
func (e *Error) All() []*Error {
	if len(e.Problems) > 0 {
		return e.Problems
	}
	return []*Error{e}
}

// ResourceError is why a skill's resource could not be read or listed. Its message names only the
// relative path asked for, never a host path, so it can be shown to the model that asked.
type ResourceError struct {
	Path string // the relative path asked for ("." for the skill directory)
	// Kind is the sentinel it matches: ErrNotFound, ErrDenied, ErrInvalid or ErrTooLarge; nil
	// for a failure of the host (an I/O error), which is in Err.
	Kind error
	Msg  string
	Err  error // the cause, when there is one (an *fs.PathError)
}

func (e *ResourceError) Error() string { return fmt.Sprintf("resource %q: %s", e.Path, e.Msg) }

// Is reports whether target is e's Kind.
func (e *ResourceError) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the cause, so errors.Is(err, fs.ErrNotExist) works too.
func (e *ResourceError) Unwrap() error { return e.Err }
