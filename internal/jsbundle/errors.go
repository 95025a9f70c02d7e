package jsbundle

import (
	"errors"
	"fmt"
)

// The kinds of [*Error]; match them with errors.Is.
var (
	// ErrOutside: an import, or a symlink, leads out of the skill's directory, or is absolute.
	ErrOutside = errors.New("outside the skill's directory")
	// ErrImport: an import a skill may not make (a Node built-in, a URL, a package not in lib/).
	ErrImport = errors.New("import not allowed")
	// ErrDenied: a hidden file, a file that is not a regular file, or of a kind that cannot be
	// bundled.
	ErrDenied = errors.New("file refused")
	// ErrNotFound: no file answers the import or the entry.
	ErrNotFound = errors.New("file not found")
	// ErrTooLarge: a bound was crossed (source bytes, files, output bytes).
	ErrTooLarge = errors.New("skill too large")
	// ErrSyntax: esbuild could not parse or transform a file.
	ErrSyntax = errors.New("syntax error")
	// ErrNoExecute: the entry does not export a function named execute.
	ErrNoExecute = errors.New("entry does not export execute")
)

// Error is a failure to bundle a skill. File is skill-relative ("lib/dates/index.js"): the file in
// which the problem is, which for a refused import, or a file that cannot be read, is the file
// that imports it (Msg names the file read); Line (1-based) and Column (0-based, bytes) locate it
// when esbuild knows where.
type Error struct {
	Kind   error
	File   string
	Line   int
	Column int
	// Import is the import specifier as written, for a refused or unresolved import.
	Import string
	Msg    string
	// Hint says how to fix it.
	Hint string
}

func (e *Error) Error() string {
	s := e.File
	if s != "" && e.Line > 0 {
		s = fmt.Sprintf("%s:%d:%d", s, e.Line, e.Column)
	}
	if s != "" {
		s += ": "
	}
	if e.Import != "" {
		s += fmt.Sprintf("import %q: ", e.Import)
	}
	s += e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the kind, so errors.Is(err, ErrOutside) matches.
func (e *Error) Unwrap() error { return e.Kind }

// importHint says what a skill may import; every refused import carries it.
const importHint = `a skill may import its own files by relative path ("./util.ts") and pure-JavaScript packages vendored in its lib/ directory ("name" is lib/name.js, lib/name/index.js or the "module"/"main" of lib/name/package.json); the sandbox has no Node built-ins, no network imports and no QuickJS std/os modules`
