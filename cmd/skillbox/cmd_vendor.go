package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/jsdeps"
	"github.com/skillbox-dev/skillbox/pydeps"
)

var cmdVendor = &command{
	summary: "vendor a skill's pinned dependencies into its lib/: requirements.txt's pure-Python wheels (pip), package.json's packages (esbuild)",
	usage:   "<DIR> [--index-url URL] [--find-links DIR] [--python PY]",
	long: `Resolve the requirements of the skill at DIR (its requirements.txt: one name==version a line, with
--hash options if you like) with pip, from the index (--index-url, or pip's own configuration) or a
directory of wheels (--find-links alone: no index), and unpack them into DIR/lib, which the sandboxed
interpreter imports from. Only pure-Python wheels (py3-none-any) are taken: a requirement that has
none is refused, named. lib/VENDORED.json lists each wheel with its sha256 and files, and the next
vendor replaces them. The files are the skill's from then on: its version digest covers them, and
validate and installs check them as its own code.

A JavaScript or TypeScript skill's package.json "dependencies" (each pinned to one version) are
bundled by esbuild from the skill's node_modules, as npm installed them, into one module each,
lib/<name>.js, which the skill's bare imports ("import x from 'name'") resolve to, and each path
inside one that the skill's code imports ('name/sub') into lib/name/sub.js; node_modules is only
read. A package that imports a Node.js built-in is refused, named.`,
	example: `  skillbox vendor skills/docx --find-links ./wheels
  skillbox vendor skills/pdf --index-url https://pypi.internal/simple`,
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.indexURL, "index-url", "", "the package index pip resolves from (default: pip's own configuration)")
		fs.StringVar(&e.findLinks, "find-links", "", "a directory of wheels; alone, pip reads no index")
		fs.StringVar(&e.python, "python", "python3", "the Python that runs pip")
	},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 1 {
			return e.fail(exitUsage, "vendor takes the skill's directory, e.g. skillbox vendor skills/docx")
		}
		dir := pos[0]
		_, pyErr := os.Stat(filepath.Join(dir, pydeps.RequirementsFile))
		_, jsErr := os.Stat(filepath.Join(dir, jsdeps.PackageFile))
		if pyErr != nil && jsErr != nil {
			return e.fail(exitFailed, "%s has neither a %s nor a %s: nothing to vendor", dir, pydeps.RequirementsFile, jsdeps.PackageFile)
		}
		out := vendored{}
		if pyErr == nil {
			m, err := pydeps.Vendor(ctx, dir, pydeps.Options{Python: e.python, IndexURL: e.indexURL, FindLinks: e.findLinks})
			if err != nil {
				return e.fail(exitFailed, "%s: %v", dir, err)
			}
			out.Python = m
		}
		if jsErr == nil {
			m, err := jsdeps.Vendor(ctx, dir)
			if err != nil {
				return e.fail(exitFailed, "%s: %v", dir, err)
			}
			out.JavaScript = m
		}
		if e.json {
			if err := writeJSON(e.stdout, out); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return exitOK
		}
		if m := out.Python; m != nil {
			names := make([]string, len(m.Wheels))
			files := 0
			for i, w := range m.Wheels {
				names[i] = w.Name + " " + w.Version
				files += len(w.Files)
			}
			fmt.Fprintf(e.stdout, "vendored %d %s (%d files) into %s/%s: %s\n", len(m.Wheels), plural(len(m.Wheels), "wheel", "wheels"), files, dir, pydeps.LibDir, strings.Join(names, ", "))
			if len(m.BuiltIn) > 0 {
				fmt.Fprintf(e.stdout, "built into Skillbox's Python, not vendored: %s\n", strings.Join(m.BuiltIn, ", "))
			}
		}
		if m := out.JavaScript; m != nil {
			names := make([]string, len(m.Bundles))
			for i, b := range m.Bundles {
				names[i] = b.Name + " " + b.Version
			}
			fmt.Fprintf(e.stdout, "bundled %d %s into %s/%s: %s\n", len(m.Bundles), plural(len(m.Bundles), "module", "modules"), dir, jsdeps.LibDir, strings.Join(names, ", "))
		}
		return exitOK
	},
}

// vendored is what skillbox vendor --json prints: each ecosystem's manifest, when the skill
// declares dependencies in it.
type vendored struct {
	Python     *pydeps.Manifest `json:"python,omitempty"`
	JavaScript *jsdeps.Manifest `json:"javascript,omitempty"`
}
