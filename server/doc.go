// Package server is Skillbox's HTTP face: an echo frontend over a *runtime.Runtime that lists
// skills (metadata first, instructions and resources on demand), runs them (JSON or a stream of
// server-sent events), publishes tool manifests, manages skill packages, searches, and reports
// health and metrics.
//
// Mount it into your own echo app under any prefix:
//
//	e := echo.New()
//	srv, err := server.New(rt, server.Options{Keys: keys})
//	if err != nil { ... }
//	srv.Mount(e.Group("/skills"))
//
// or serve it alone with `skillbox serve`. Every error is JSON: {"error": {"code", "message"}}.
//
// Browsers are kept out unless invited: without keys only loopback Host names are served (421),
// requests that change state are refused from other web origins (403), the JSON endpoints take
// only Content-Type: application/json (415), and CORS answers only Options.CORSOrigins.
//
// Options.Console, when set, is served at /console/: the operator console of package console,
// which skillbox serve sets (the server itself does not import it).
package server
