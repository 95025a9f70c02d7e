// Package jsbundle turns a JavaScript or TypeScript script skill into one self-contained script
// for the sandbox's QuickJS interpreter: an IIFE that assigns the entry's exports to the global
// __skill, with TypeScript types stripped, bundled in-process by esbuild.
//
// The skill's files come from an untrusted author, so esbuild never touches the file system
// itself: every import is resolved here against the skill's directory and read through an
// [os.Root] at it. An import may name the skill's own files or a package vendored in its lib/
// directory, nothing else; symlinks that lead out, hidden files, FIFOs and devices are refused;
// the bytes read, the number of files and the output are bounded.
package jsbundle

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// GlobalName is the global the bundle assigns the entry's exports to: the driver calls
// __skill.execute(args, ctx).
const GlobalName = "__skill"

// The bounds a zero [Options] field means.
const (
	DefaultMaxSourceBytes = 8 << 20
	DefaultMaxFiles       = 512
	DefaultMaxOutputBytes = 16 << 20
)

// Options bound a bundle. The zero value is the safe default.
type Options struct {
	// MaxSourceBytes bounds the bytes read from the skill, all files together (0:
	// [DefaultMaxSourceBytes]).
	MaxSourceBytes int64
	// MaxFiles bounds the files read (0: [DefaultMaxFiles]).
	MaxFiles int
	// MaxOutputBytes bounds the bundle (0: [DefaultMaxOutputBytes]).
	MaxOutputBytes int64
	// Program bundles a program (a SKILL.md script run with argv) rather than a skill's entry:
	// it need not export execute.
	Program bool
}

func (o Options) withDefaults() Options {
	if o.MaxSourceBytes <= 0 {
		o.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	return o
}

// Bundle is a bundled skill.
type Bundle struct {
	// Code is the IIFE, to be evaluated as a plain script.
	Code string
	// Files are the skill-relative paths of the files it was built from, sorted.
	Files []string
	// sums and probes are the loader's, for [Cache].
	sums, probes map[string]string
}

// Build bundles the skill at skillDir from entry, a skill-relative path ("execute.ts",
// "scripts/report.js").
//
// # Errors
//
// A [*Error] whose Kind is one of [ErrOutside], [ErrImport], [ErrDenied], [ErrNotFound],
// [ErrTooLarge], [ErrSyntax], [ErrNoExecute]; or ctx's error, wrapped, when ctx ends first.
func Build(ctx context.Context, skillDir, entry string, opts Options) (Bundle, error) {
	root, rel, err := open(ctx, skillDir, entry)
	if err != nil {
		return Bundle{}, err
	}
	defer root.Close()
	return build(ctx, root, rel, opts.withDefaults())
}

// open checks the context and the entry, and opens the skill's directory.
func open(ctx context.Context, skillDir, entry string) (*os.Root, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("bundle %s: %w", entry, err)
	}
	rel, err := cleanEntry(entry)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(skillDir)
	if err != nil {
		return nil, "", &Error{Kind: ErrNotFound, Msg: "the skill's directory cannot be opened: " + bareReason(err)}
	}
	return root, rel, nil
}

func build(ctx context.Context, root *os.Root, rel string, opts Options) (Bundle, error) {
	l := newLoader(ctx, root, opts)
	res, err := l.build(rel)
	if err != nil {
		return Bundle{}, err
	}
	files := make([]string, 0, len(l.sums))
	for f := range l.sums {
		files = append(files, f)
	}
	slices.Sort(files)
	return Bundle{Code: res, Files: files, sums: l.sums, probes: l.probes}, nil
}

// build runs esbuild on the entry, stopping it when l.ctx ends.
func (l *loader) build(entry string) (string, error) {
	bctx, cerr := api.Context(api.BuildOptions{
		EntryPoints: []string{entry},
		Bundle:      true,
		Write:       false,
		Format:      api.FormatIIFE,
		GlobalName:  GlobalName,
		Platform:    api.PlatformNeutral,
		Target:      api.ES2023,
		Sourcemap:   api.SourceMapNone,
		LogLevel:    api.LogLevelSilent,
		TsconfigRaw: "{}",
		Plugins:     []api.Plugin{{Name: "skill", Setup: l.setup}},
	})
	if cerr != nil {
		return "", fmt.Errorf("bundle %s: %w", entry, cerr)
	}
	defer bctx.Dispose()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-l.ctx.Done():
			bctx.Cancel()
		case <-done:
		}
	}()
	res := bctx.Rebuild()
	if err := l.ctx.Err(); err != nil {
		return "", fmt.Errorf("bundle %s: %w", entry, err)
	}
	if len(res.Errors) > 0 {
		return "", fromMessage(entry, res.Errors[0])
	}
	for _, w := range res.Warnings {
		if atStub(w) {
			return "", fromMessage(entry, w)
		}
	}
	if len(res.OutputFiles) != 1 {
		return "", fmt.Errorf("bundle %s: esbuild wrote %d files, want 1", entry, len(res.OutputFiles))
	}
	code := res.OutputFiles[0].Contents
	if int64(len(code)) > l.opts.MaxOutputBytes {
		return "", &Error{Kind: ErrTooLarge, File: entry, Msg: fmt.Sprintf("the bundle is %d bytes, more than the %d allowed", len(code), l.opts.MaxOutputBytes), Hint: "vendor less code in lib/ or split the skill"}
	}
	return string(code), nil
}

// atStub reports a message about the stub entry: its one import of execute failed.
func atStub(m api.Message) bool {
	return m.Location != nil && strings.HasPrefix(m.Location.File, stubNamespace+":")
}

// fromMessage turns an esbuild error into a *Error: the plugin's own errors travel in Detail;
// esbuild's (syntax, transform) are ErrSyntax. The location, when esbuild gives one, is where
// the problem is: for an import, the import statement in the file that made it.
func fromMessage(entry string, m api.Message) error {
	e, ok := m.Detail.(*Error)
	switch {
	case ok:
		c := *e
		e = &c
	case atStub(m):
		// The stub's one import failed: the entry has no export named execute.
		return &Error{Kind: ErrNoExecute, File: entry, Msg: "does not export a function named execute",
			Hint: "declare it as `export function execute(args, ctx) { ... }` or `export async function execute(args, ctx) { ... }`"}
	default:
		e = &Error{Kind: ErrSyntax, Msg: m.Text, Hint: "fix the code at that position"}
	}
	if loc := m.Location; loc != nil {
		e.File = strings.TrimPrefix(loc.File, namespace+":")
		e.Line, e.Column = loc.Line, loc.Column
	}
	return e
}
