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
package server
