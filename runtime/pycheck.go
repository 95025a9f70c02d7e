package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/runtime/internal/engine"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// A check compiles a skill's Python files as the sandboxed interpreter would import them, so that
// a syntax error is the package's problem, placed at file:line:col, when it is validated or
// installed, not a failure of its first run (JavaScript and TypeScript get the same from their
// bundling). No code of the skill runs: the driver compiles the text it is handed and returns.

// maxCheckedPython bounds the files of one skill a check reads (compiles, or reads for what
// they read of ctx.env), in the order the skill's resources are listed; compiling each costs an
// instance of the interpreter (about a millisecond). Files past it are compiled by the runs that
// import them.
const maxCheckedPython = 200

// pythonCheckTimeout bounds the compilation of one file when the skill's grant has no deadline.
const pythonCheckTimeout = 10 * time.Second

// codeFiles lists s's files whose extension (lower-cased) is one of exts, at most
// maxCheckedPython: execute.py (.js, .ts) and the modules and programs among its resources,
// slash-separated and relative to its directory.
func codeFiles(s *registry.Skill, exts ...string) []string {
	files, err := skillmd.ListResources(s.Dir(), skillmd.DefaultResourceCount)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		if slices.Contains(exts, strings.ToLower(path.Ext(f))) && len(out) < maxCheckedPython {
			out = append(out, f)
		}
	}
	return out
}

// pythonCheck compiles s's Python files (codeFiles) in the interpreter its runs use, and adds a
// problem for each that does not compile. Its error is one the runtime made, not the skill (no
// room to admit the interpreter, ctx ended, the runtime closed): the caller reports it as a
// check that could not be done now.
func (rt *Runtime) pythonCheck(ctx context.Context, s *registry.Skill) error {
	files := codeFiles(s, ".py")
	if len(files) == 0 {
		return nil
	}
	grant := s.Grant()
	if grant == nil || s.Lang() != spec.LangPython {
		grant = s.ProgramGrant() // the files are programs, or modules they import
	}
	if grant == nil {
		return nil // a manifest that does not parse: its problems are reported already
	}
	en, err := rt.interps.Acquire(ctx, spec.LangPython, grant.Limits.MemoryMiB)
	if err != nil {
		return err
	}
	defer rt.interps.Release(en)
	max := rt.policy.Load().Modules.WithDefaults().MaxModuleBytes
	timeout := pythonCheckTimeout
	if grant.Limits.TimeoutMs > 0 {
		timeout = time.Duration(grant.Limits.TimeoutMs) * time.Millisecond
	}
	for _, rel := range files {
		path := filepath.Join(s.Dir(), filepath.FromSlash(rel))
		source, err := safefile.ReadFile(path, max)
		if err != nil {
			s.AddProblem(&spec.ManifestError{Path: path, Msg: err.Error()})
			continue
		}
		if err := rt.compilePython(ctx, en.Value(), s.Dir(), rel, source, grant.Limits.MemoryMiB, timeout); err != nil {
			var se *scripterr.Error
			if !errors.As(err, &se) || ctx.Err() != nil {
				return errors.Join(err, ctx.Err())
			}
			s.AddProblem(syntaxProblem(path, source, se))
		}
	}
	return nil
}

// compilePython compiles source, the file rel of the skill in dir, in an instance of its own,
// metered under memMiB and bounded by timeout. The code it makes is thrown away: a run compiles
// (or finds) its own.
func (rt *Runtime) compilePython(ctx context.Context, in *engine.Interp, dir, rel string, source []byte, memMiB int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	meter := engine.NewMemoryMeter(uint64(memMiB) << 20)
	defer meter.Release()
	_, err := in.Py.Code(ctx, dir, rel, source, maxCheckedCode, meter)
	return err
}

// maxCheckedCode bounds the marshalled code of one file a check compiles: past it, the file
// compiles, and what it makes is not wanted here.
const maxCheckedCode = 64 << 20

// syntaxProblem is the problem of the Python file at path, source, that did not compile: at its
// line:column when the interpreter placed it.
func syntaxProblem(path string, source []byte, se *scripterr.Error) *spec.ManifestError {
	name := se.Name
	if name == "" {
		name = se.Kind.String()
	}
	if se.Syntax == nil {
		return &spec.ManifestError{Path: path, Msg: fmt.Sprintf("does not compile: %s: %s", name, se.Message)}
	}
	at := path
	if se.Syntax.Line > 0 {
		at = fmt.Sprintf("%s:%d", path, se.Syntax.Line)
		if col := charColumn(source, se.Syntax.Line, se.Syntax.Column); col > 0 {
			at = fmt.Sprintf("%s:%d", at, col)
		}
	}
	return &spec.ManifestError{Path: at, Msg: fmt.Sprintf("%s: %s", name, se.Syntax.Msg)}
}

// charColumn turns CPython's column of a syntax error in source, 1-based in bytes of its line,
// into characters, as editors and the JavaScript checks count them. A place that is not in the
// source (0, past the line) is given back as it is.
func charColumn(source []byte, line, col int) int {
	if line < 1 || col < 1 {
		return col
	}
	for range line - 1 {
		i := bytes.IndexByte(source, '\n')
		if i < 0 {
			return col
		}
		source = source[i+1:]
	}
	if i := bytes.IndexByte(source, '\n'); i >= 0 {
		source = source[:i]
	}
	if col-1 > len(source) {
		return col
	}
	return utf8.RuneCount(source[:col-1]) + 1
}
