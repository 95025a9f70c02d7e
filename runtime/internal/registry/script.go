package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/internal/jsbundle"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

// A script skill's check reads its code where a compiled skill's reads its module: a JavaScript or
// TypeScript skill is bundled (its imports resolved, its types stripped, its syntax checked), a
// Python skill's execute.py is read and bounded. The verdict's hash is the sha256 of what runs
// (the bundle, or execute.py), so a run can tell that the code changed since its version was
// checked, as it tells for a module.

// errNoScript is a script skill whose code file is missing.
var errNoScript = errors.New("missing: the manifest's runtime runs this file")

// verifyScript fills v's hash and size from s's code and returns its problem. cachedOnly reads no
// file: a script's check is not remembered across processes, so it is then not done (ok false),
// and the skill stays unchecked until its first run or the background check.
func (s *Skill) verifyScript(v *Verdict, cachedOnly bool) (*spec.ManifestError, bool) {
	if cachedOnly {
		return nil, false
	}
	if s.cache != nil {
		s.cache.Reads.Add(1)
	}
	code, err := s.readScript(context.Background())
	if err != nil {
		return scriptProblem(s, err), true
	}
	h := sha256.Sum256([]byte(code))
	v.Hash, v.Size = hex.EncodeToString(h[:]), int64(len(code))
	if len(code) <= maxKeptScript {
		v.code = code
	}
	return nil, true
}

// readScript returns the code a run of s evaluates: the bundle of a JavaScript or TypeScript
// skill (through the runtime's bundle cache, so that a skill whose files did not change is not
// bundled again), or a Python skill's execute.py.
func (s *Skill) readScript(ctx context.Context) (string, error) {
	if _, err := os.Lstat(s.codePath()); err != nil {
		return "", err // a missing entry is said as such, not as an import the bundler could not find
	}
	switch s.lang {
	case spec.LangJavaScript, spec.LangTypeScript:
		b, err := s.Bundle(ctx, s.lang.CodeFile(), false)
		return b.Code, err
	case spec.LangPython:
		data, err := safefile.ReadFile(s.codePath(), s.modules.WithDefaults().MaxModuleBytes)
		return string(data), err
	}
	return "", fmt.Errorf("%q is not a script runtime", s.lang)
}

// bundle bundles the JavaScript or TypeScript file entry of s (a program when program is set:
// it need not export execute), through the runtime's bundle cache when s has one. A bundle is
// bounded by the policy's module limit: a script's code is held to what a module may weigh.
func (s *Skill) Bundle(ctx context.Context, entry string, program bool) (jsbundle.Bundle, error) {
	max := s.modules.WithDefaults().MaxModuleBytes
	opts := jsbundle.Options{MaxSourceBytes: max, MaxOutputBytes: max, Program: program}
	if c := s.cache.bundleCache(); c != nil {
		return c.Build(ctx, s.dir, entry, opts)
	}
	return jsbundle.Build(ctx, s.dir, entry, opts)
}

// script returns the code a run of s evaluates, checked to be the code s's version was checked
// with (the same sha256).
//
// # Errors
//
// ErrModuleChanged when the code changed since the check; the script's problem (a
// *ManifestError) when it no longer reads or bundles.
func (s *Skill) Script(ctx context.Context) (string, error) {
	if v := s.State(); v.code != "" {
		return v.code, nil // the code as checked: its sha256 is v.Hash
	}
	code, err := s.readScript(ctx)
	if err != nil {
		return "", scriptProblem(s, err)
	}
	h := sha256.Sum256([]byte(code))
	if got := hex.EncodeToString(h[:]); got != s.State().Hash {
		return "", fmt.Errorf("%w: %s has changed since this version was loaded; reload the skills and run it again", run.ErrModuleChanged, s.codePath())
	}
	return code, nil
}

// scriptProblem is the problem of a script that could not be read or bundled, naming the file
// (and the line, when known) where it is.
func scriptProblem(s *Skill, err error) *spec.ManifestError {
	return ScriptProblemAt(s, s.lang.CodeFile(), err)
}

// scriptProblemAt is scriptProblem for the script at entry, relative to s's directory.
func ScriptProblemAt(s *Skill, entry string, err error) *spec.ManifestError {
	codePath := filepath.Join(s.dir, filepath.FromSlash(entry))
	var be *jsbundle.Error
	switch {
	case errors.As(err, &be):
		path := codePath
		if be.File != "" {
			path = filepath.Join(s.dir, filepath.FromSlash(be.File))
		}
		if be.Line > 0 {
			path = fmt.Sprintf("%s:%d:%d", path, be.Line, be.Column+1)
		}
		msg := be.Msg
		if be.Import != "" {
			msg = fmt.Sprintf("import %q: %s", be.Import, msg)
		}
		return &spec.ManifestError{Path: path, Msg: msg, Hint: be.Hint}
	case errors.Is(err, fs.ErrNotExist):
		return &spec.ManifestError{Path: codePath, Msg: errNoScript.Error(),
			Hint: fmt.Sprintf("write %s, or set the manifest's runtime to the file the skill has", entry)}
	}
	return &spec.ManifestError{Path: codePath, Msg: err.Error()}
}

// bundleCache is the runtime's cache of JavaScript bundles (nil: none).
func (c *Checks) bundleCache() *jsbundle.Cache {
	if c == nil {
		return nil
	}
	return c.Bundles
}
