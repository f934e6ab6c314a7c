package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"
)

// readinessTimeout bounds /readyz so a hung database answers "not ready" instead of hanging
// the orchestrator's probe.
const readinessTimeout = 2 * time.Second

// healthz answers as long as the process serves HTTP.
func (s *Server) healthz(c *echo.Context) error {
	return writeBody(c, http.StatusOK, mediaJSON, []byte(`{"status":"ok"}`))
}

// readyz answers 200 when the store is reachable and its schema is current, events are
// delivered, and the LMOS gateway can ask its guardian (when it has one and fails closed).
func (s *Server) readyz(c *echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readinessTimeout)
	defer cancel()
	if err := s.dir.Ready(ctx); err != nil {
		s.log.Warn("not ready", "error", err)
		return errorf(http.StatusServiceUnavailable, "the directory is not ready: %v", err)
	}
	if s.gateway != nil {
		if err := s.gateway.Ready(ctx); err != nil {
			s.log.Warn("not ready", "error", err)
			return errorf(http.StatusServiceUnavailable, "the LMOS gateway is not ready: %v", err)
		}
	}
	return writeBody(c, http.StatusOK, mediaJSON, []byte(`{"status":"ready"}`))
}
