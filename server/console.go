package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// mountConsole serves Options.Console at /console/ with mw (the common middleware and the
// loopback-Host check): GET and HEAD of its files, the handler seeing the path below
// /console, and /console redirected to /console/ so that the page's relative URLs (app.js,
// the API at ../v1/) resolve under whatever prefix the group has.
func (s *Server) mountConsole(g *echo.Group, mw []echo.MiddlewareFunc) {
	h := s.opts.Console
	serve := func(c echo.Context) error {
		r := c.Request()
		u := *r.URL
		u.Path, u.RawPath = "/"+c.Param("*"), ""
		r2 := r.Clone(r.Context())
		r2.URL = &u
		h.ServeHTTP(c.Response(), r2)
		return nil
	}
	g.GET("/console/*", serve, mw...)
	g.HEAD("/console/*", serve, mw...)
	g.GET("/console", func(c echo.Context) error {
		// Relative, so the redirect stays under the group's prefix and on the request's host.
		return c.Redirect(http.StatusMovedPermanently, "console/")
	}, mw...)
}
