// Package pydeps vendors a Python skill's declared dependencies into the skill: the pinned
// requirements of its requirements.txt, resolved by pip from an index (or a directory of
// wheels), as pure-Python wheels only, unpacked into the skill's lib/ (which the sandboxed
// interpreter puts on sys.path). The files become part of the skill's tree, so its version
// digest covers them and validate and installs check them like the skill's own code; a
// manifest of what was vendored, with each wheel's sha256, is written beside them.
//
// Skillbox's interpreter loads no C extension but those built into it, so a requirement with no
// pure-Python wheel (py3-none-any) is refused, naming it.
package pydeps

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// RequirementsFile is the file of a skill that declares its dependencies.
const RequirementsFile = "requirements.txt"

// LibDir is where they are vendored, in the skill.
const LibDir = "lib"

// ManifestFile lists what was vendored (a Manifest), in LibDir.
const ManifestFile = "VENDORED.json"

// Bounds of what a vendoring reads and writes.
const (
	maxRequirementsBytes = 64 << 10
	maxRequirements      = 200
	// maxWheels bounds the wheels a resolution may bring, dependencies included.
	maxWheels = 200
	// maxWheelFiles and maxWheelBytes bound one wheel unpacked (a zip may claim anything).
	maxWheelFiles = 10000
	maxWheelBytes = 64 << 20
	// maxTotalBytes bounds all of them unpacked.
	maxTotalBytes = 256 << 20
)

// Requirement is one pinned line of requirements.txt.
type Requirement struct {
	Name, Version string
	Line          int
}

// Error is a problem with a skill's requirements or their vendoring: what, and where.
type Error struct {
	// File is the file it is in (requirements.txt), Line its line when it is one line's.
	File string
	Line int
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotPure is matched by the error of a requirement that has no pure-Python wheel.
var ErrNotPure = errors.New("no pure-Python wheel")

// pinned is one requirement pinned to one version, as pip writes it: name, optional extras,
// ==version, an optional environment marker.
var pinned = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,\s-]*\])?\s*==\s*([A-Za-z0-9._+!-]+)\s*(;.*)?$`)

// ReadRequirements reads the requirements of the skill at dir: every line pinned (name==version),
// with pip's per-requirement options (--hash) allowed; nil when the skill declares none.
func ReadRequirements(dir string) ([]Requirement, error) {
	data, err := os.ReadFile(filepath.Join(dir, RequirementsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequirementsBytes {
		return nil, &Error{File: RequirementsFile, Msg: fmt.Sprintf("is %d bytes, more than %d", len(data), maxRequirementsBytes)}
	}
	var out []Requirement
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "--hash") {
			continue
		}
		req, opts, _ := strings.Cut(line, " --")
		req = strings.TrimSpace(req)
		if strings.HasPrefix(req, "-") {
			problems = append(problems, fmt.Sprintf("%s:%d: %q: only requirements and their --hash options are read here; give the index with skillbox vendor --index-url or --find-links", RequirementsFile, n, line))
			continue
		}
		if opts != "" && !strings.HasPrefix(strings.TrimSpace(opts), "hash") {
			problems = append(problems, fmt.Sprintf("%s:%d: %q: only --hash may follow a requirement", RequirementsFile, n, line))
			continue
		}
		m := pinned.FindStringSubmatch(req)
		if m == nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %q is not pinned: write name==version (pip freeze prints them), so the skill's version names its code", RequirementsFile, n, req))
			continue
		}
		out = append(out, Requirement{Name: m[1], Version: m[3], Line: n})
	}
	if len(out) > maxRequirements {
		problems = append(problems, fmt.Sprintf("%s: %d requirements, more than %d", RequirementsFile, len(out), maxRequirements))
	}
	if len(problems) > 0 {
		return nil, &Error{File: RequirementsFile, Msg: "\n  " + strings.Join(problems, "\n  ")}
	}
	return out, nil
}

// Normalize is a distribution's name as PEP 503 compares names: lower case, runs of -, _ and .
// as one -.
func Normalize(name string) string {
	return strings.ToLower(normRun.ReplaceAllString(name, "-"))
}

var normRun = regexp.MustCompile(`[-_.]+`)

// Options say where pip resolves from and how.
type Options struct {
	// Python runs pip ("python3" on PATH when empty).
	Python string
	// IndexURL is the package index (pip's default, or PIP_INDEX_URL, when empty); FindLinks a
	// directory of wheels, used alone (--no-index) when IndexURL is empty.
	IndexURL, FindLinks string
	// Env is pip's environment (the process's when nil).
	Env []string
}

// ctxErr is ctx's error, if any, as an Error of the vendoring.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &Error{File: RequirementsFile, Msg: "vendoring stopped: " + err.Error(), Err: err}
	}
	return nil
}
