package jsbundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/skillbox-dev/skillbox/internal/jsonpos"
)

// namespace is the esbuild namespace of the skill's files: paths in it are skill-relative, so
// esbuild's own resolver and file reader, which would follow "../" and symlinks anywhere, never
// run.
const namespace = "skill"

// stubNamespace holds the entry point esbuild builds for a skill (not a program): a stub that
// imports the entry as a namespace and exports its execute. The bundle's global then holds
// execute alone, and esbuild's own static check, in the same pass, reports an entry without that
// export as "import-is-undefined" at the stub (a named re-export would not do: esbuild takes a
// name missing from a TypeScript file for an erased type and says nothing).
const stubNamespace = "skill-entry"

// loaders maps the extensions a skill's files may have to esbuild's loaders.
var loaders = map[string]api.Loader{
	".js": api.LoaderJS, ".mjs": api.LoaderJS, ".cjs": api.LoaderJS,
	".ts": api.LoaderTS, ".mts": api.LoaderTS, ".cts": api.LoaderTS,
	".json": api.LoaderJSON,
}

// IsCode reports whether the file at p is code the bundler takes from a skill (a .js, .mjs, .cjs,
// .ts, .mts or .cts file: data such as .json is not), by its extension.
func IsCode(p string) bool {
	ld, ok := loaders[path.Ext(p)]
	return ok && ld != api.LoaderJSON
}

// tryExt are the suffixes tried, in order, for an import without one, as TypeScript and Node do.
var tryExt = []string{"", ".ts", ".js", ".mts", ".mjs", ".json", "/index.ts", "/index.js"}

// loader resolves and reads one bundle's files. esbuild calls it from several goroutines.
type loader struct {
	ctx  context.Context
	root *os.Root
	opts Options

	mu    sync.Mutex
	bytes int64
	sums  map[string]string // sha256 by skill-relative path, of every file read
	// probes holds the candidates resolution passed over, as "absent" or "dir": a file that
	// appears there changes what an import resolves to, so [Cache] checks them too.
	probes map[string]string
}

func (l *loader) probed(p, what string) {
	l.mu.Lock()
	l.probes[p] = what
	l.mu.Unlock()
}

func (l *loader) setup(b api.PluginBuild) {
	b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
		p, err := l.resolve(a)
		if err != nil {
			return api.OnResolveResult{Errors: []api.Message{toMessage(err)}}, nil
		}
		if a.Kind == api.ResolveEntryPoint && !l.opts.Program {
			return api.OnResolveResult{Path: p, Namespace: stubNamespace}, nil
		}
		return api.OnResolveResult{Path: p, Namespace: namespace}, nil
	})
	b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: stubNamespace}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
		stub := "import * as entry from " + strconv.Quote("./"+path.Base(a.Path)) + ";\nexport const execute = entry.execute;\n"
		return api.OnLoadResult{Contents: &stub, Loader: api.LoaderJS}, nil
	})
	b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: namespace}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
		src, ld, err := l.load(a.Path)
		if err != nil {
			return api.OnLoadResult{Errors: []api.Message{toMessage(err)}}, nil
		}
		return api.OnLoadResult{Contents: &src, Loader: ld}, nil
	})
}

// toMessage carries a *Error through esbuild, which adds the import's location.
func toMessage(err error) api.Message {
	return api.Message{Text: err.Error(), Detail: err}
}

// resolve maps an import to a skill-relative path of an existing regular file.
func (l *loader) resolve(a api.OnResolveArgs) (string, error) {
	if err := l.ctx.Err(); err != nil {
		return "", err
	}
	if a.Kind == api.ResolveEntryPoint {
		p, err := l.find(a.Path, a.Path, "")
		var e *Error
		if errors.As(err, &e) { // the entry is no import: name it as the file
			e.File, e.Import = a.Path, ""
		}
		return p, err
	}
	if a.Namespace == stubNamespace { // the stub's import of the entry, resolved above
		return a.Importer, nil
	}
	spec := a.Path
	refuse := func(kind error, msg string) (string, error) {
		return "", &Error{Kind: kind, File: a.Importer, Import: spec, Msg: msg, Hint: importHint}
	}
	switch {
	case strings.ContainsAny(spec, "\x00\\"):
		return refuse(ErrImport, `contains a NUL byte or "\"`)
	case strings.HasPrefix(spec, "/"):
		return refuse(ErrOutside, "is an absolute path")
	case spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"):
		p := path.Join(path.Dir(a.Importer), spec)
		if p == ".." || strings.HasPrefix(p, "../") {
			return refuse(ErrOutside, "leads out of the skill's directory")
		}
		return l.find(spec, p, a.Importer)
	case strings.Contains(spec, ":"):
		return refuse(ErrImport, "is a built-in module or a URL, which the sandbox does not have")
	}
	// A bare import names a package vendored in lib/.
	p := path.Clean("lib/" + spec)
	if !strings.HasPrefix(p, "lib/") || strings.Contains(spec, "..") {
		return refuse(ErrOutside, "leads out of lib/")
	}
	if f, err := l.find(spec, p, a.Importer); err == nil || !errors.Is(err, ErrNotFound) {
		return f, err
	}
	if f, ok, err := l.packageMain(spec, p, a.Importer); ok || err != nil {
		return f, err
	}
	return refuse(ErrImport, "is not a file of the skill nor a package in its lib/ directory")
}

// find returns the first of p's candidates (p, p.ts, p.js, p/index.ts, ...) that is a file.
func (l *loader) find(spec, p, importer string) (string, error) {
	if hidden(p) {
		return "", &Error{Kind: ErrDenied, File: importer, Import: spec, Msg: "names a hidden file, which is not part of a skill", Hint: "rename it without the leading dot"}
	}
	cands := make([]string, 0, len(tryExt)+1)
	for _, ext := range tryExt {
		cands = append(cands, path.Clean(p+ext)) // "." + "/index.ts" is "index.ts", one file to esbuild
	}
	if strings.HasSuffix(p, ".js") { // TypeScript's convention: "./util.js" is util.ts
		cands = append(cands, strings.TrimSuffix(p, ".js")+".ts")
	}
	for _, c := range cands {
		st, err := l.root.Stat(c)
		switch {
		case err == nil && st.IsDir():
			l.probed(c, "dir")
			continue
		case err == nil && !st.Mode().IsRegular():
			return "", &Error{Kind: ErrDenied, File: importer, Import: spec, Msg: c + " is " + kindOf(st.Mode()) + ", not a regular file"}
		case err == nil:
			return c, nil
		case escapes(err):
			return "", &Error{Kind: ErrOutside, File: importer, Import: spec, Msg: c + " is a symlink that leads out of the skill's directory", Hint: "copy the file into the skill instead of linking to it"}
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			l.probed(c, "absent")
			continue
		default:
			return "", &Error{Kind: ErrDenied, File: importer, Import: spec, Msg: c + ": " + bareReason(err)}
		}
	}
	return "", &Error{Kind: ErrNotFound, File: importer, Import: spec, Msg: "no such file in the skill (tried " + p + " with .ts, .js and /index)"}
}

// maxPackageJSON bounds a vendored package's package.json.
const maxPackageJSON = 64 << 10

// packageMain resolves a bare import through lib/<name>/package.json's "module" or "main". ok is
// false when there is no package.json.
func (l *loader) packageMain(spec, dir, importer string) (string, bool, error) {
	data, err := l.read(dir + "/package.json")
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	if len(data) > maxPackageJSON {
		return "", true, &Error{Kind: ErrTooLarge, File: dir + "/package.json", Import: spec, Msg: fmt.Sprintf("is more than the %d bytes allowed for a package.json", maxPackageJSON)}
	}
	var pj struct{ Module, Main string }
	if err := json.Unmarshal([]byte(data), &pj); err != nil {
		return "", true, &Error{Kind: ErrSyntax, File: dir + "/package.json", Import: spec, Msg: "is not valid JSON: " + jsonpos.Locate([]byte(data), err).Error()}
	}
	main := pj.Module
	if main == "" {
		main = pj.Main
	}
	if main == "" {
		main = "index"
	}
	p := path.Join(dir, main)
	if !strings.HasPrefix(p, dir+"/") {
		return "", true, &Error{Kind: ErrOutside, File: dir + "/package.json", Import: spec, Msg: "its main " + main + " leads out of the package", Hint: importHint}
	}
	f, err := l.find(spec, p, importer)
	return f, true, err
}

// load reads a resolved file and picks its loader.
func (l *loader) load(p string) (string, api.Loader, error) {
	ld, ok := loaders[path.Ext(p)]
	if !ok {
		return "", 0, &Error{Kind: ErrDenied, File: p, Msg: p + " cannot be bundled: a skill's code is .js, .mjs, .cjs, .ts, .mts, .cts or .json"}
	}
	src, err := l.read(p)
	return src, ld, err
}

// hidden reports a path with a segment that starts with a dot.
func hidden(p string) bool {
	for s := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(s, ".") && s != "." {
			return true
		}
	}
	return false
}

// cleanEntry checks the entry path a caller gives.
func cleanEntry(entry string) (string, error) {
	bad := func(msg string) (string, error) {
		return "", &Error{Kind: ErrNotFound, File: entry, Msg: msg, Hint: `name the entry relative to the skill's directory, e.g. "execute.ts"`}
	}
	switch {
	case entry == "" || strings.ContainsAny(entry, "\x00\\"):
		return bad("is not a valid entry path")
	case strings.HasPrefix(entry, "/"):
		return bad("is absolute")
	}
	p := path.Clean(entry)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return bad("is not inside the skill's directory")
	}
	return p, nil
}

// escapes recognises os.Root's refusal of a path (a symlink) that leads out of the root: the
// error is not exported, so by its text, as the host functions do.
func escapes(err error) bool {
	return strings.Contains(err.Error(), "escapes from parent")
}

// bareReason is err's reason without the host path, which a skill's author need not see.
func bareReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// kindOf names a file's type for an error message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "of type " + m.Type().String()
}

func newLoader(ctx context.Context, root *os.Root, opts Options) *loader {
	return &loader{ctx: ctx, root: root, opts: opts, sums: map[string]string{}, probes: map[string]string{}}
}
