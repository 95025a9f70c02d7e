package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/pydeps"
)

var cmdVendor = &command{
	summary: "vendor a Python skill's pinned requirements.txt into its lib/, as pure-Python wheels resolved by pip",
	usage:   "<DIR> [--index-url URL] [--find-links DIR] [--python PY]",
	long: `Resolve the requirements of the skill at DIR (its requirements.txt: one name==version a line, with
--hash options if you like) with pip, from the index (--index-url, or pip's own configuration) or a
directory of wheels (--find-links alone: no index), and unpack them into DIR/lib, which the sandboxed
interpreter imports from. Only pure-Python wheels (py3-none-any) are taken: a requirement that has
none is refused, named. lib/VENDORED.json lists each wheel with its sha256 and files, and the next
vendor replaces them. The files are the skill's from then on: its version digest covers them, and
validate and installs check them as its own code.`,
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
		m, err := pydeps.Vendor(ctx, pos[0], pydeps.Options{Python: e.python, IndexURL: e.indexURL, FindLinks: e.findLinks})
		if err != nil {
			return e.fail(exitFailed, "%s: %v", pos[0], err)
		}
		if e.json {
			if err := writeJSON(e.stdout, m); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
			return exitOK
		}
		names := make([]string, len(m.Wheels))
		files := 0
		for i, w := range m.Wheels {
			names[i] = w.Name + " " + w.Version
			files += len(w.Files)
		}
		fmt.Fprintf(e.stdout, "vendored %d %s (%d files) into %s/%s: %s\n", len(m.Wheels), plural(len(m.Wheels), "wheel", "wheels"), files, pos[0], pydeps.LibDir, strings.Join(names, ", "))
		return exitOK
	},
}
