// Package console is the operator console: a small browser app, embedded in the skillbox binary,
// that lists skills and runs, starts runs and watches their events, reviews versions and, for
// admins, shows tenants and the cluster. It talks to the HTTP API alone, with the key the
// operator types in (kept in the tab's sessionStorage, sent as a Bearer token; no cookies), so it
// can do nothing the key cannot.
//
// Its sources are TypeScript and CSS in console/src; console/dist holds them built (bundled and
// minified by esbuild, see console/build), committed and embedded here, so building skillbox
// needs Go alone. `make console` (go generate ./console) rebuilds dist; a test fails when it is
// stale.
//
// [Handler] serves the assets with a Content-Security-Policy that allows scripts, styles and
// connections to this origin only and no inline script or style, so that text a skill wrote
// cannot become code even if the app had a bug that let it into the page as markup. The server
// mounts it (server.Options.Console) without importing this package.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:generate go run ./generate src dist

//go:embed dist
var dist embed.FS

// CSP is the Content-Security-Policy of every answer of Handler: only this origin's script,
// style and API; no inline script or style, no plugins, no frames of it, no forms posted
// anywhere, no <base> to move relative URLs. Images may be data: and blob: URLs (an artifact
// previewed from the blob it was downloaded into).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// types are the content types of the assets, by extension: fixed here, not read from the
// host's MIME tables, which differ between machines.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// asset is one embedded file, ready to serve.
type asset struct {
	data  []byte
	ctype string
	etag  string
}

// Handler serves the console. It expects the path below its mount point: "/" is index.html and
// "/app.js" the script, so a server mounting it at /console/ strips that prefix first. Only
// GET and HEAD are answered; a name that is not an embedded asset is 404, whatever it holds
// ("..", encoded slashes): the handler looks names up in a fixed table and never opens a path.
//
// Every answer carries CSP, X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer and
// X-Frame-Options: DENY. Assets are revalidated on each load (Cache-Control: no-cache, with an
// ETag of their sha256): their names carry no hash, and a console must not run yesterday's
// script against today's API; a revalidation costs a 304.
func Handler() http.Handler {
	assets, err := load(dist)
	if err != nil {
		panic("console: the embedded assets are unreadable: " + err.Error()) // a broken build, not a request
	}
	return handler{assets: assets}
}

func load(fsys fs.FS) (map[string]asset, error) {
	assets := map[string]asset{}
	err := fs.WalkDir(fsys, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := types[path.Ext(p)]
		if !ok {
			return nil // not an asset the console serves
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		assets["/"+p[len("dist/"):]] = asset{data: data, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	return assets, err
}

type handler struct {
	assets map[string]asset
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "the console's files are read with GET", http.StatusMethodNotAllowed)
		return
	}
	name := r.URL.Path
	if name == "/" || name == "" {
		name = "/index.html"
	}
	a, ok := h.assets[name]
	if !ok {
		http.Error(w, "no such file in the console", http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", a.etag)
	// ServeContent answers If-None-Match with 304, ranges, and HEAD; the zero time sends no
	// Last-Modified (the ETag decides).
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.data))
}
