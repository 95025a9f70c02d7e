package jsdeps

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/skillbox-dev/skillbox/internal/jsbundle"
)

// A package is often imported by a path inside it ("date-fns/locale", "lodash/fp",
// "@scope/pkg/sub"), which its package.json "exports" maps to a file of its own. The skill's
// bare imports resolve to lib/<import>.js, so each such import the skill's code makes of a
// declared dependency is bundled too, as one more module: lib/date-fns/locale.js beside
// lib/date-fns.js. Each bundle holds its own copy of what it uses of the package, so the two are
// separate instances (an object made by one is not an instanceof the other's class).

// maxScanFiles bounds the skill's files read to find its imports.
const maxScanFiles = 2000

// packageOf is the package a bare import names: its first segment, or two for a scoped one.
func packageOf(spec string) string {
	segs := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(segs) > 1 {
		return segs[0] + "/" + segs[1]
	}
	return segs[0]
}

// bare reports an import that names a package: neither relative, absolute nor a URL or
// built-in ("node:fs").
func bare(spec string) bool {
	return spec != "" && !strings.HasPrefix(spec, ".") && !strings.HasPrefix(spec, "/") && !strings.Contains(spec, ":")
}

// clean reports a bare import whose every segment is a name: no "", "." or ".." segment and no
// backslash, so its file stays inside lib/<package>/ (the sandbox's resolver refuses the others,
// saying why).
func clean(spec string) bool {
	if strings.ContainsAny(spec, "\\\x00") {
		return false
	}
	for seg := range strings.SplitSeq(spec, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// bundleFile is the file in lib/ that an import resolves to: the import with .js added, unless
// it ends in .js already.
func bundleFile(spec string) string {
	if path.Ext(spec) == ".js" {
		return spec
	}
	return spec + ".js"
}

// codeFiles lists the skill's code files, by slash path: not node_modules, lib/ (what
// vendoring writes) or hidden files.
func codeFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if rel == "node_modules" || rel == LibDir || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") || !jsbundle.IsCode(rel) {
			return nil
		}
		if len(files) == maxScanFiles {
			return &Error{File: rel, Msg: fmt.Sprintf("the skill has more than %d code files to read for its imports", maxScanFiles)}
		}
		files = append(files, rel)
		return nil
	})
	return files, err
}

// subpathImports returns, sorted, the imports the skill's code makes of a path inside one of
// deps ("pkg/sub"), found by esbuild's parser: each file is read once and nothing is followed.
func subpathImports(ctx context.Context, dir string, deps map[string]string) ([]string, error) {
	files, err := codeFiles(dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	found := map[string]bool{}
	collect := api.Plugin{Name: "imports", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if a.Kind == api.ResolveEntryPoint {
				return api.OnResolveResult{}, nil
			}
			if bare(a.Path) && clean(a.Path) {
				if p := packageOf(a.Path); p != a.Path && deps[p] != "" {
					mu.Lock()
					found[a.Path] = true
					mu.Unlock()
				}
			}
			return api.OnResolveResult{Path: a.Path, External: true}, nil
		})
	}}
	bctx, cerr := api.Context(api.BuildOptions{
		EntryPoints:   files,
		AbsWorkingDir: abs,
		Bundle:        true,
		Write:         false,
		Outdir:        "out",
		Platform:      api.PlatformNeutral,
		LogLevel:      api.LogLevelSilent,
		Plugins:       []api.Plugin{collect},
	})
	if cerr != nil {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("reading the skill's imports: %v", cerr), Err: cerr}
	}
	defer bctx.Dispose()
	stop := context.AfterFunc(ctx, bctx.Cancel)
	defer stop()
	res := bctx.Rebuild()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		file := PackageFile
		if e.Location != nil {
			file = fmt.Sprintf("%s:%d:%d", e.Location.File, e.Location.Line, e.Location.Column+1)
		}
		return nil, &Error{File: file, Msg: "cannot be read for its imports: " + e.Text}
	}
	out := slices.Sorted(maps.Keys(found))
	if len(out)+len(deps) > maxDependencies {
		return nil, &Error{File: PackageFile, Msg: fmt.Sprintf("the skill imports %d paths inside its dependencies, and with them more than %d modules to bundle", len(out), maxDependencies)}
	}
	return out, nil
}
