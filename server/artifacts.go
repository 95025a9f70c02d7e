package server

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
)

// artifact answers GET /v1/runs/{id}/artifacts/{name...}: the bytes of a file the run left in
// its output directory, from the runtime (which reads its artifact.Store, or what it keeps of
// its recent runs).
//
// A skill's file is untrusted content served from the API's own origin, so it is never
// rendered there: it is sent as an attachment, with nosniff (a browser takes the media type
// as given) and a sandboxing Content-Security-Policy in case a browser renders it anyway. The
// ETag is the file's sha256: the same bytes have the same tag in any run.
func (s *view) artifact(c echo.Context) error {
	id := c.Param("run_id")
	// echo routes on the raw path when a client escapes differently from Go: decode it here.
	name, err := url.PathUnescape(c.Param("*"))
	if err != nil || !artifact.ValidName(name) {
		return httpError(http.StatusBadRequest, "bad_path", "the artifact name is not a clean relative path, such as report.pdf or charts/a.png")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), historyTimeout)
	defer cancel()
	rc, a, err := s.rt.OpenArtifact(ctx, principal(c), id, name) // the runtime decides who sees the run's files
	switch {
	case errors.Is(err, artifact.ErrNoRun):
		return httpError(http.StatusNotFound, "not_found", "no run %q (neither the run history nor the runtime's recent runs have it)", id)
	case errors.Is(err, artifact.ErrNoArtifact):
		return httpError(http.StatusNotFound, "not_found", "run %q left no file %q in its output", id, name)
	case errors.Is(err, run.ErrClosed):
		return httpError(http.StatusServiceUnavailable, "unavailable", "the server is shutting down")
	case err != nil:
		s.logger.Error("read an artifact", "run", id, "name", name, "err", err)
		return httpError(http.StatusServiceUnavailable, "unavailable", "the artifact cannot be read now; try again later").WithInternal(err)
	}
	defer rc.Close()
	etag := `"` + a.SHA256 + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set(echo.HeaderContentType, a.MediaType)
	h.Set(echo.HeaderContentLength, strconv.FormatInt(a.Size, 10))
	c.Response().WriteHeader(http.StatusOK)
	// The store checked the bytes against their sha256; at most Size of them are sent.
	_, err = io.Copy(c.Response(), io.LimitReader(rc, a.Size))
	return err
}
