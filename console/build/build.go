// Package build makes the console's assets from its sources: console/src/main.ts and what it
// imports bundled by esbuild into one minified app.js, app.css minified, and index.html copied.
// The generator (console/generate, run by `make console` or `go generate ./console`) writes
// them to console/dist, which is committed and embedded; the console's tests build them again
// in memory and fail when the committed copy is stale. Both call [Dist], so they cannot differ
// in how they build.
package build

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Files are the names of the assets Dist makes, in the order it makes them.
var Files = []string{"index.html", "app.js", "app.css"}

// Target is the JavaScript the bundle is lowered to: what every browser an operator runs today
// understands (fetch streams, optional chaining, private fields).
const Target = api.ES2022

// Dist builds the assets from the console's source directory src (console/src): each name of
// Files to its bytes. Nothing is written: the output is deterministic, so the generator writes
// it and the test compares it byte for byte.
func Dist(src string) (map[string][]byte, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	js, err := bundle(abs, "main.ts", api.LoaderTS)
	if err != nil {
		return nil, err
	}
	out["app.js"] = js
	css, err := bundle(abs, "app.css", api.LoaderCSS)
	if err != nil {
		return nil, err
	}
	out["app.css"] = css
	html, err := os.ReadFile(filepath.Join(abs, "index.html"))
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	out["index.html"] = html
	return out, nil
}

// UnitTests bundles the console's unit tests (src/test/unit.ts) into one script for Node,
// which exits non-zero when one fails.
func UnitTests(src string) ([]byte, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	return bundle(abs, "test/unit.ts", api.LoaderTS, api.PlatformNode)
}

// bundle runs esbuild on entry, a file of dir, and returns its one output file.
func bundle(dir, entry string, loader api.Loader, platform ...api.Platform) ([]byte, error) {
	opts := api.BuildOptions{
		EntryPoints:       []string{entry},
		AbsWorkingDir:     dir,
		Bundle:            true,
		Write:             false,
		Outdir:            "out",
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		Target:            Target,
		Sourcemap:         api.SourceMapNone,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		LogLevel:          api.LogLevelSilent,
		TsconfigRaw:       `{"compilerOptions":{"strict":true}}`,
		Loader:            map[string]api.Loader{filepath.Ext(entry): loader},
	}
	if loader == api.LoaderTS {
		opts.Format = api.FormatIIFE
		opts.Platform = api.PlatformBrowser
		if len(platform) > 0 {
			opts.Platform = platform[0]
		}
	}
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("console: bundle %s:\n%s", entry, strings.Join(msgs, ""))
	}
	if len(res.OutputFiles) != 1 {
		return nil, errors.New("console: bundle " + entry + ": want one output file")
	}
	return res.OutputFiles[0].Contents, nil
}
