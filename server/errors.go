package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

// apiError is the body of every error response.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []string `json:"details,omitempty"`
}

// quotaStatus answers a run whose files the artifact store had no room for: 507 Insufficient
// Storage, not 429, since the store is full for every caller and waiting does not free it
// (retention or an operator does).
const quotaStatus = http.StatusInsufficientStorage

// storeRetryAfter is the Retry-After, in seconds, of a request that needs a store that is down.
const storeRetryAfter = "5"

// httpError builds an error a handler returns; errorHandler writes it.
func httpError(status int, code, format string, args ...any) *echo.HTTPError {
	return echo.NewHTTPError(status, apiErrorBody{Code: code, Message: fmt.Sprintf(format, args...)})
}

// errorHandler turns any error into the JSON error shape: handlers return errors, this is the one
// place that decides what a client sees.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, body := http.StatusInternalServerError, apiErrorBody{Code: "internal", Message: "internal error"}
	var he *echo.HTTPError
	var re *retryError
	var mbe *http.MaxBytesError
	var bte *BodyTimeoutError
	var se *spec.SkillError
	if errors.As(err, &re) {
		c.Response().Header().Set("Retry-After", re.retryAfter())
	}
	switch {
	case errors.As(err, &bte):
		status, body = http.StatusRequestTimeout, apiErrorBody{Code: "body_timeout", Message: bte.Error() + ": send the body without pausing"}
		c.Response().Header().Set("Connection", "close")
	case errors.As(err, &mbe):
		status, body = http.StatusRequestEntityTooLarge, apiErrorBody{Code: "too_large", Message: fmt.Sprintf("the body is larger than %d bytes", mbe.Limit)}
	case errors.As(err, &se):
		status, body = http.StatusUnprocessableEntity, apiErrorBody{Code: "invalid_skill", Message: fmt.Sprintf("skill %q is invalid", se.ID)}
		for _, p := range se.Problems {
			body.Details = append(body.Details, p.Error()) // Install reports package-relative paths
		}
	case errors.Is(err, run.ErrBusy):
		// An install the runtime had no room to compile (runs answer their own refusals).
		if errors.Is(err, run.ErrClosed) {
			status, body = http.StatusServiceUnavailable, apiErrorBody{Code: "unavailable", Message: err.Error()}
		} else {
			c.Response().Header().Set("Retry-After", "1")
			status, body = http.StatusTooManyRequests, apiErrorBody{Code: "busy", Message: err.Error()}
		}
	case errors.Is(err, bundle.ErrInvalid):
		status, body = http.StatusUnprocessableEntity, apiErrorBody{Code: "invalid_bundle", Message: err.Error()}
	case errors.Is(err, bundle.ErrUntrusted):
		status, body = http.StatusForbidden, apiErrorBody{Code: "untrusted_bundle", Message: err.Error()}
	case errors.Is(err, runtime.ErrExists):
		status, body = http.StatusConflict, apiErrorBody{Code: "exists", Message: err.Error()}
	case errors.Is(err, access.ErrVisibility):
		status, body = http.StatusConflict, apiErrorBody{Code: "visibility", Message: err.Error()}
	case errors.Is(err, run.ErrQuotaExceeded):
		status, body = quotaStatus, apiErrorBody{Code: "quota_exceeded", Message: err.Error()}
	case errors.Is(err, version.ErrUnavailable):
		// The store's own error can name hosts and paths: the log has it, the client the why.
		s.logger.Error("the version store is unreachable", "path", c.Path(), "err", err)
		c.Response().Header().Set("Retry-After", storeRetryAfter)
		status, body = http.StatusServiceUnavailable, apiErrorBody{Code: "store_unavailable",
			Message: "the version store cannot be reached now: installs and version changes wait for it (runs of the versions this server knows go on); try again later"}
	case errors.Is(err, version.ErrNoStore), errors.Is(err, version.ErrNotFound):
		status, body = http.StatusNotFound, apiErrorBody{Code: "not_found", Message: err.Error()}
	case errors.Is(err, version.ErrBadQuery):
		status, body = http.StatusBadRequest, apiErrorBody{Code: "bad_request", Message: err.Error()}
	case errors.Is(err, version.ErrConflict):
		status, body = http.StatusConflict, apiErrorBody{Code: "version_conflict", Message: err.Error()}
	case errors.Is(err, access.ErrForbidden):
		status, body = http.StatusForbidden, apiErrorBody{Code: "forbidden", Message: err.Error()}
	case errors.Is(err, run.ErrNotFound):
		status, body = http.StatusNotFound, apiErrorBody{Code: "not_found", Message: err.Error()}
	case errors.As(err, &he):
		status = he.Code
		switch m := he.Message.(type) {
		case apiErrorBody:
			body = m
		default:
			body = apiErrorBody{Code: codeFor(he.Code), Message: fmt.Sprint(m)}
		}
	default:
		s.logger.Error("request failed", "path", c.Path(), "err", err)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, apiError{Error: body})
}

// noSkill is the 404 of a lookup of skill id that failed with err: the runtime's message for a
// client (the id and the nearest ids; never a directory of the host, see runtime.NotFoundError).
func noSkill(err error, id string) error {
	var re *run.Error
	if errors.As(err, &re) && re.Message != "" {
		return httpError(http.StatusNotFound, "not_found", "%s", re.Message)
	}
	return httpError(http.StatusNotFound, "not_found", "no skill %q", id)
}

func codeFor(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusTooManyRequests:
		return "too_many_requests"
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusMisdirectedRequest:
		return "misdirected_request"
	case http.StatusInsufficientStorage:
		return "quota_exceeded"
	}
	return "error"
}

// apiMessage is the message a client of the HTTP face reads for err: an HTTP error's own
// message, else err's text. A face that is not HTTP's says the same.
func apiMessage(err error) string {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if body, ok := he.Message.(apiErrorBody); ok {
			return body.Message
		}
	}
	return err.Error()
}
