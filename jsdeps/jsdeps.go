// Package jsdeps vendors a JavaScript or TypeScript skill's declared dependencies into the
// skill: each package its package.json's "dependencies" pins, bundled by esbuild from the
// skill's node_modules (as npm installed it) into one module, lib/<name>.js, which the skill's
// bare imports resolve to; each path inside a dependency that the skill's code imports
// ("pkg/sub") is one more, lib/pkg/sub.js. They are written as CommonJS, so the skill's own
// bundling takes their named imports whichever form the package was written in (a CommonJS
// package's names are only known when it runs). The bundles become the skill's files, covered
// by its version digest and checked like its code; node_modules is only read. A package that needs what the
// sandbox has not (a Node.js built-in such as fs) is refused, naming it.
package jsdeps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// PackageFile declares the dependencies, in the skill.
const PackageFile = "package.json"

// LibDir is where the bundles go, and ManifestFile (in it) what lists them.
const (
	LibDir       = "lib"
	ManifestFile = "VENDORED-JS.json"
)

// Bounds of what a vendoring reads and writes.
const (
	maxPackageBytes = 256 << 10
	maxDependencies = 200
	maxBundleBytes  = 16 << 20
	maxTotalBytes   = 64 << 20
)

// Manifest is what a vendoring wrote: one bundle per dependency.
type Manifest struct {
	Bundles []Bundle `json:"bundles"`
}

// Bundle is one dependency, or a path inside one that the skill imports ("pkg/sub"), bundled:
// the import, the version node_modules had (the pinned one), and the file written, by its path
// in lib/.
type Bundle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	File    string `json:"file"`
}

// Error is a problem with the dependencies, naming the file it is in.
type Error struct {
	File string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.File + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// ErrBuiltin is matched by the error of a dependency that imports a Node.js built-in.
var ErrBuiltin = errors.New("imports a Node.js built-in")

// exact is a version pinned to one release (no range).
var exact = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?$`)

// name is an npm package name, scoped or not.
var name = regexp.MustCompile(`^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)

// ReadDependencies reads package.json's "dependencies" of the skill at dir: every one a valid
// name pinned to one version; nil when there is no package.json or it declares none.
func ReadDependencies(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, PackageFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) > maxPackageBytes {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("is %d bytes, more than %d", len(data), maxPackageBytes)}
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return nil, &Error{File: PackageFile, Msg: "is not valid JSON: " + err.Error(), Err: err}
	}
	if len(pj.Dependencies) > maxDependencies {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("%d dependencies, more than %d", len(pj.Dependencies), maxDependencies)}
	}
	var problems []string
	for _, n := range slices.Sorted(maps.Keys(pj.Dependencies)) {
		v := pj.Dependencies[n]
		switch {
		case !name.MatchString(n):
			problems = append(problems, fmt.Sprintf("dependencies.%s: is not an npm package name", n))
		case !exact.MatchString(v):
			problems = append(problems, fmt.Sprintf("dependencies.%s: %q is not one version: pin it (\"1.2.3\", as npm install --save-exact writes), so the skill's version names its code", n, v))
		}
	}
	if len(problems) > 0 {
		return nil, &Error{File: PackageFile, Msg: "\n  " + strings.Join(problems, "\n  ")}
	}
	return pj.Dependencies, nil
}

// Vendor bundles every dependency of the skill at dir from its node_modules into lib/,
// replacing what the last vendoring wrote, and writes the Manifest. Nothing is written unless
// every dependency bundles.
func Vendor(ctx context.Context, dir string) (*Manifest, error) {
	deps, err := ReadDependencies(dir)
	if err != nil {
		return nil, err
	}
	if len(deps) == 0 {
		return nil, &Error{File: PackageFile, Msg: `declares no dependency (write "dependencies": {"name": "1.2.3"})`}
	}
	m := &Manifest{}
	out := map[string][]byte{}
	var total int
	for _, n := range slices.Sorted(maps.Keys(deps)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := installed(dir, n, deps[n]); err != nil {
			return nil, err
		}
	}
	subs, err := subpathImports(ctx, dir, deps)
	if err != nil {
		return nil, err
	}
	for _, n := range slices.Concat(slices.Sorted(maps.Keys(deps)), subs) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pkg := packageOf(n)
		label := "dependencies." + pkg
		if n != pkg {
			label += " (imported as " + n + ")"
		}
		code, err := bundle(ctx, dir, n, label)
		if err != nil {
			return nil, err
		}
		if total += len(code); total > maxTotalBytes {
			return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("the bundles pass %d bytes", maxTotalBytes)}
		}
		file := bundleFile(n)
		out[file] = code
		m.Bundles = append(m.Bundles, Bundle{Name: n, Version: deps[pkg], File: file})
	}
	return m, write(dir, m, out)
}

// installed checks that node_modules has name at version.
func installed(dir, name, version string) error {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"))
	if err != nil {
		return &Error{File: PackageFile, Msg: fmt.Sprintf("dependencies.%s: node_modules/%s/package.json cannot be read (%v): run npm ci (or npm install) in the skill first", name, name, err), Err: err}
	}
	var pj struct{ Version string }
	if err := json.Unmarshal(data, &pj); err != nil || pj.Version != version {
		return &Error{File: PackageFile, Msg: fmt.Sprintf("dependencies.%s: node_modules has %s@%s, and package.json pins %s: run npm ci", name, name, pj.Version, version)}
	}
	return nil
}

// unresolved is esbuild's word for an import it found no file for: a Node.js built-in, or a
// package node_modules has not.
var unresolved = regexp.MustCompile(`Could not resolve "([^"]+)"`)

// bundle is the import name (a dependency, or a path inside one) bundled by esbuild from dir's
// node_modules, as one module; label names it in errors.
func bundle(ctx context.Context, dir, name, label string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	bctx, cerr := api.Context(api.BuildOptions{
		EntryPoints:   []string{name},
		AbsWorkingDir: abs,
		Bundle:        true,
		Write:         false,
		Format:        api.FormatCommonJS, // the skill's own bundling takes named imports of it, from CommonJS and ES packages alike
		Platform:      api.PlatformNeutral,
		MainFields:    []string{"module", "main"},
		Conditions:    []string{"import", "default"},
		Target:        api.ES2023,
		LogLevel:      api.LogLevelSilent,
		Outfile:       "out.js",
	})
	if cerr != nil {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("%s: %v", label, cerr), Err: cerr}
	}
	defer bctx.Dispose()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			bctx.Cancel()
		case <-done:
		}
	}()
	res := bctx.Rebuild()
	if len(res.Errors) > 0 {
		msgs := make([]string, 0, len(res.Errors))
		var builtin error
		for _, e := range res.Errors {
			where := ""
			if e.Location != nil {
				where = fmt.Sprintf("%s:%d: ", e.Location.File, e.Location.Line)
			}
			text := e.Text
			if m := unresolved.FindStringSubmatch(e.Text); m != nil && !strings.HasPrefix(m[1], ".") {
				text = fmt.Sprintf("imports %q, which is neither a package in node_modules nor in the sandbox (it has no Node.js built-ins: fetch, files and the environment come through ctx)", m[1])
				builtin = ErrBuiltin
			}
			msgs = append(msgs, where+text)
		}
		return nil, &Error{File: PackageFile, Err: builtin, Msg: fmt.Sprintf("%s cannot be bundled:\n  %s", label, strings.Join(msgs, "\n  "))}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(res.OutputFiles) != 1 {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("%s: esbuild wrote %d files, not one", label, len(res.OutputFiles))}
	}
	code := res.OutputFiles[0].Contents
	if len(code) > maxBundleBytes {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("%s bundles to %d bytes, more than %d", label, len(code), maxBundleBytes)}
	}
	return code, nil
}

// write replaces what the last vendoring wrote in lib/ with out, and writes the manifest; a
// bundle would overwrite a file of the skill's own is refused before anything changes.
func write(dir string, m *Manifest, out map[string][]byte) error {
	lib := filepath.Join(dir, LibDir)
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(lib)
	if err != nil {
		return err
	}
	defer root.Close()
	var old Manifest
	if data, err := root.ReadFile(ManifestFile); err == nil {
		if err := json.Unmarshal(data, &old); err != nil {
			return &Error{File: path.Join(LibDir, ManifestFile), Msg: "is not what skillbox vendor wrote: remove it and the files it lists"}
		}
	}
	mine := map[string]bool{}
	for _, b := range old.Bundles {
		mine[b.File] = true
	}
	for _, b := range m.Bundles {
		if _, err := root.Lstat(b.File); err == nil && !mine[b.File] {
			return &Error{File: PackageFile, Msg: fmt.Sprintf("dependencies.%s would write lib/%s, which exists and skillbox vendor did not write: move it", b.Name, b.File)}
		}
	}
	for _, b := range old.Bundles {
		if err := root.Remove(b.File); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, b := range m.Bundles {
		if err := root.MkdirAll(path.Dir(b.File), 0o755); err != nil {
			return err
		}
		if err := root.WriteFile(b.File, out[b.File], 0o644); err != nil {
			return err
		}
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	return root.WriteFile(ManifestFile, append(data, '\n'), 0o644)
}
