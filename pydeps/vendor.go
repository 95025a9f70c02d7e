package pydeps

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Manifest is what a vendoring wrote (lib/VENDORED.json): the wheels, each with its sha256 and
// the files it put in lib/, so the next vendoring removes them first.
type Manifest struct {
	Requirements []string `json:"requirements"`
	Wheels       []Wheel  `json:"wheels"`
	// BuiltIn lists the requirements met by packages compiled into the interpreter (lxml,
	// Pillow), as name==version: not vendored.
	BuiltIn []string `json:"built_in,omitempty"`
}

// Wheel is one vendored wheel.
type Wheel struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	File    string   `json:"file"`
	SHA256  string   `json:"sha256"`
	Files   []string `json:"files"`
}

// wheelName is a wheel's file name (PEP 427): name-version(-build)?-python-abi-platform.whl.
var wheelName = regexp.MustCompile(`^([^-]+)-([^-]+)(?:-[0-9][^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$`)

// Vendor resolves the requirements of the skill at dir with pip and unpacks the pure-Python
// wheels into its lib/, replacing what an earlier vendoring put there, and writes the Manifest.
func Vendor(ctx context.Context, dir string, opts Options) (*Manifest, error) {
	reqs, err := ReadRequirements(dir)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, &Error{File: RequirementsFile, Msg: "declares no requirement (write one name==version a line)"}
	}
	tmp, err := os.MkdirTemp("", "skillbox-pip-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := download(ctx, dir, tmp, opts); err != nil {
		return nil, err
	}
	wheels, err := readWheels(tmp)
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	for _, r := range reqs {
		m.Requirements = append(m.Requirements, r.Name+"=="+r.Version)
	}
	// Every wheel is unpacked (and checked) aside first: a failure leaves lib/ as it was.
	stage := filepath.Join(tmp, "stage")
	var total int64
	for _, w := range wheels {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		if builtIn(w) {
			m.BuiltIn = append(m.BuiltIn, Normalize(w.Name)+"=="+w.Version)
			continue
		}
		files, n, err := unpack(filepath.Join(tmp, w.File), stage, maxTotalBytes-total)
		if err != nil {
			return nil, &Error{File: RequirementsFile, Msg: fmt.Sprintf("unpack %s: %v", w.File, err), Err: err}
		}
		total += n
		w.Files = files
		m.Wheels = append(m.Wheels, w)
	}
	lib := filepath.Join(dir, LibDir)
	old, err := readManifest(lib)
	if err != nil {
		return nil, err
	}
	if err := checkFree(lib, old, m); err != nil {
		return nil, err
	}
	if err := clean(lib, old); err != nil {
		return nil, err
	}
	if err := place(stage, lib, m); err != nil {
		return nil, err
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(lib, ManifestFile), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// download runs pip download into tmp: binary wheels only, for any platform and no ABI, so
// only pure-Python wheels (py3-none-any) match.
func download(ctx context.Context, dir, tmp string, opts Options) error {
	python := opts.Python
	if python == "" {
		python = "python3"
	}
	args := []string{"-m", "pip", "download", "--no-input", "--disable-pip-version-check", "--quiet",
		"--only-binary=:all:", "--platform", "any", "--implementation", "py", "--abi", "none", "--python-version", "3.11",
		"--dest", tmp, "--requirement", filepath.Join(dir, RequirementsFile)}
	// The interpreter's own packages, which pip may resolve but which are not vendored.
	provided := filepath.Join(tmp, "built-in")
	if err := os.Mkdir(provided, 0o700); err != nil {
		return err
	}
	if err := provide(provided); err != nil {
		return err
	}
	switch {
	case opts.IndexURL != "":
		args = append(args, "--index-url", opts.IndexURL)
		if opts.FindLinks != "" {
			args = append(args, "--find-links", opts.FindLinks)
		}
	case opts.FindLinks != "":
		args = append(args, "--no-index", "--find-links", opts.FindLinks)
	}
	args = append(args, "--find-links", provided)
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Env = opts.Env
	out := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if cerr := ctxErr(ctx); cerr != nil {
		return cerr
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return &Error{File: RequirementsFile, Msg: fmt.Sprintf("cannot run pip (%s -m pip): %v; install it (Debian: apt-get install python3-pip) or give --python", python, err), Err: err}
	}
	text := out.String()
	if m := noMatch.FindStringSubmatch(text); m != nil {
		if hint := builtInHint(m[1]); hint != "" {
			return &Error{File: RequirementsFile, Err: ErrNotPure, Msg: hint}
		}
		return &Error{File: RequirementsFile, Err: ErrNotPure, Msg: fmt.Sprintf("%s: %s has no pure-Python wheel (py3-none-any) there. "+
			"Skillbox's Python loads no C extension but those built into it (%s): use a pure-Python package instead, "+
			"or one the interpreter has (docs/scripts.md)", source(opts), m[1], strings.Join(builtInNames(), ", "))}
	}
	if strings.Contains(text, "DO NOT MATCH THE HASHES") {
		return &Error{File: RequirementsFile, Msg: "a wheel does not have the --hash its requirement gives: pip said\n" + lastLines(text, 12)}
	}
	return &Error{File: RequirementsFile, Msg: "pip could not resolve the requirements: it said\n" + lastLines(text, 12), Err: err}
}

// noMatch is pip's word for a requirement it found no acceptable distribution of.
var noMatch = regexp.MustCompile(`No matching distribution found for (\S+)`)

func source(opts Options) string {
	switch {
	case opts.IndexURL != "":
		return "the index " + opts.IndexURL
	case opts.FindLinks != "":
		return "the wheels in " + opts.FindLinks
	}
	return "pip's index"
}

// readWheels lists the wheels pip downloaded, refusing any that is not pure Python (pip should
// have found none) and any more than maxWheels.
func readWheels(tmp string) ([]Wheel, error) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var out []Wheel
	for _, e := range entries {
		if e.IsDir() {
			continue // the interpreter's packages, which pip was given (provide)
		}
		m := wheelName.FindStringSubmatch(e.Name())
		if m == nil || m[4] != "none" || m[5] != "any" {
			return nil, &Error{File: RequirementsFile, Err: ErrNotPure, Msg: fmt.Sprintf("pip brought %s, which is not a pure-Python wheel (py3-none-any)", e.Name())}
		}
		if len(out) == maxWheels {
			return nil, &Error{File: RequirementsFile, Msg: fmt.Sprintf("the requirements bring more than %d wheels", maxWheels)}
		}
		data, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		out = append(out, Wheel{Name: m[1], Version: m[2], File: e.Name(), SHA256: hex.EncodeToString(sum[:])})
	}
	return out, nil
}

func readManifest(lib string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(lib, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &Error{File: path.Join(LibDir, ManifestFile), Msg: fmt.Sprintf("is not what skillbox vendor wrote (%v): remove it and the files it lists", err)}
	}
	return &m, nil
}

// clean removes what the earlier vendoring old put in lib, and the directories it leaves empty.
func clean(lib string, old *Manifest) error {
	root, err := os.OpenRoot(lib)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer root.Close()
	var dirs []string
	for _, w := range old.Wheels {
		for _, f := range w.Files {
			if !validPath(f) {
				continue
			}
			if err := root.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			for d := path.Dir(f); d != "."; d = path.Dir(d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range slices.Compact(dirs) {
		_ = root.Remove(d) // only when empty
	}
	return nil
}

// checkFree refuses a vendoring that would write over a file of lib/ an earlier vendoring
// (old) did not write: the skill's own.
func checkFree(lib string, old, m *Manifest) error {
	mine := map[string]bool{}
	for _, w := range old.Wheels {
		for _, f := range w.Files {
			mine[f] = true
		}
	}
	for _, w := range m.Wheels {
		for _, f := range w.Files {
			if _, err := os.Lstat(filepath.Join(lib, filepath.FromSlash(f))); err == nil && !mine[f] {
				return &Error{File: RequirementsFile, Msg: fmt.Sprintf("%s brings lib/%s, which exists and skillbox vendor did not write: move it, or drop the requirement", w.File, f)}
			}
		}
	}
	return nil
}

// place copies the staged files of m into lib.
func place(stage, lib string, m *Manifest) error {
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(lib)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, w := range m.Wheels {
		for _, f := range w.Files {
			data, err := os.ReadFile(filepath.Join(stage, filepath.FromSlash(f)))
			if err != nil {
				return err
			}
			if err := root.MkdirAll(path.Dir(f), 0o755); err != nil {
				return err
			}
			if err := root.WriteFile(f, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// unpack writes a wheel's files into lib, within budget bytes: what its .data/purelib and
// platlib hold goes to lib too, scripts and headers are left out. It answers the files written
// and their bytes.
func unpack(wheel, lib string, budget int64) ([]string, int64, error) {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return nil, 0, err
	}
	defer zr.Close()
	if len(zr.File) > maxWheelFiles {
		return nil, 0, fmt.Errorf("%d files, more than %d", len(zr.File), maxWheelFiles)
	}
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return nil, 0, err
	}
	root, err := os.OpenRoot(lib)
	if err != nil {
		return nil, 0, err
	}
	defer root.Close()
	var files []string
	var total int64
	for _, f := range zr.File {
		name := f.Name
		if strings.HasSuffix(name, "/") {
			continue
		}
		if top, rest, ok := strings.Cut(name, "/"); ok && strings.HasSuffix(top, ".data") {
			kind, inner, _ := strings.Cut(rest, "/")
			if kind != "purelib" && kind != "platlib" {
				continue
			}
			name = inner
		}
		if !validPath(name) {
			return nil, 0, fmt.Errorf("%q is not a clean relative path", f.Name)
		}
		if f.UncompressedSize64 > maxWheelBytes || total+int64(f.UncompressedSize64) > min(budget, maxWheelBytes) {
			return nil, 0, fmt.Errorf("unpacks to more than %d bytes", min(budget, maxWheelBytes))
		}
		if _, err := root.Stat(name); err == nil {
			return nil, 0, fmt.Errorf("%s is brought by two wheels", name)
		}
		n, err := writeEntry(root, f, name, min(budget, maxWheelBytes)-total)
		if err != nil {
			return nil, 0, err
		}
		total += n
		files = append(files, name)
	}
	return files, total, nil
}

// writeEntry writes one zip entry at name in root, reading at most limit bytes of it whatever
// its header claims.
func writeEntry(root *os.Root, f *zip.File, name string, limit int64) (int64, error) {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return 0, err
	}
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("%s unpacks to more than it said", f.Name)
	}
	return n, err
}

// validPath reports whether p is a clean, relative, slash-separated path inside its root.
func validPath(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../") &&
		!strings.Contains(p, "\\") && !strings.ContainsRune(p, 0)
}

// tailBuffer keeps the last max bytes written to it: pip's output, bounded.
type tailBuffer struct {
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if extra := t.buf.Len() - t.max; extra > 0 {
		t.buf.Next(extra)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return t.buf.String() }

// lastLines is the last n lines of s, indented.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
