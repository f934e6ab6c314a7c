package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/openapi"
)

func (s *Server) getOpenAPI(c *echo.Context) error {
	return writeBody(c, http.StatusOK, "application/yaml", openapi.Spec)
}
