package server

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openapiDoc describes every route (OpenAPI 3.1). TestOpenAPICoversRoutes keeps it and the routes
// in step.
//
//go:embed openapi.json
var openapiDoc []byte

func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/json", openapiDoc)
}
