// Package httpapi is lmosdir's HTTP interface: the W3C WoT Discovery directory API and its
// companions (directory TD, health, OpenAPI). Handlers decode, call the directory, encode.
package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/lmos/gateway"
)

// Config tunes the API.
type Config struct {
	// BaseURL is the absolute URL clients reach the directory at; it is the base of the
	// directory's TD and of the links it sends.
	BaseURL string
	// MaxBodyBytes limits request bodies.
	MaxBodyBytes int64
	// DefaultPageSize applies when a listing asks for an offset without a limit.
	DefaultPageSize int
	// MaxPageSize caps limit; larger limits get pages of this size with a next link.
	MaxPageSize int
	// Version is the build version, shown in the directory TD.
	Version string
	// EventQuiet is how long an event stream starts without keep-alive comments;
	// 0: DefaultEventQuiet.
	EventQuiet time.Duration
	// EventKeepAlive is the interval of keep-alive comments after that; 0:
	// DefaultEventKeepAlive.
	EventKeepAlive time.Duration
	// Gateway relays LMOS messages at /lmos and /things/{id}/messages; nil: those answer
	// 503.
	Gateway *gateway.Gateway
	// Peers knows the directories on the LAN, listed at /directories; nil: none.
	Peers PeerSource
}

// Server serves the directory over HTTP.
type Server struct {
	cfg         Config
	dir         *directory.Service
	gateway     *gateway.Gateway
	log         *slog.Logger
	basePath    string
	directoryTD []byte
	echo        *echo.Echo
}

// New builds the HTTP handler of the directory.
func New(cfg Config, dir *directory.Service, log *slog.Logger) (*Server, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.EventQuiet <= 0 {
		cfg.EventQuiet = DefaultEventQuiet
	}
	if cfg.EventKeepAlive <= 0 {
		cfg.EventKeepAlive = DefaultEventKeepAlive
	}
	s := &Server{cfg: cfg, dir: dir, gateway: cfg.Gateway, log: log, basePath: strings.TrimSuffix(base.Path, "/")}
	if s.directoryTD, err = directoryTD(cfg.BaseURL, cfg.Version); err != nil {
		return nil, err
	}
	e := echo.NewWithConfig(echo.Config{
		Logger:           log,
		HTTPErrorHandler: s.handleError,
		Router:           echo.NewRouter(echo.RouterConfig{}),
	})
	e.Use(s.recoverPanics, s.logRequests)
	s.routes(e)
	s.echo = e
	return s, nil
}

// routes is the whole API surface; openapi/openapi.yaml describes exactly these routes.
func (s *Server) routes(e *echo.Echo) {
	readable(e, "/things", s.listThings)
	e.POST("/things", s.createAnonymousThing)
	readable(e, "/things/*", s.getThing)
	e.PUT("/things/*", s.putThing)
	e.PATCH("/things/*", s.patchThing)
	e.DELETE("/things/*", s.deleteThing)
	e.POST("/things/*", s.postMessage)
	readable(e, "/lmos", s.lmosSocket)
	readable(e, "/search", s.search)
	readable(e, "/search/jsonpath", s.searchJSONPath)
	readable(e, "/search/xpath", unsupportedQueryLanguage("XPath"))
	readable(e, "/search/sparql", unsupportedQueryLanguage("SPARQL"))
	e.POST("/search/sparql", unsupportedQueryLanguage("SPARQL"))
	readable(e, "/events", s.streamEvents)
	readable(e, "/events/:type", s.streamEvents)
	readable(e, "/directories", s.listDirectories)
	readable(e, "/.well-known/wot", s.getDirectoryTD)
	readable(e, "/healthz", s.healthz)
	readable(e, "/readyz", s.readyz)
	readable(e, "/openapi.yaml", s.getOpenAPI)
}

// readable registers a GET route and its HEAD twin; handlers write the same headers for
// both and net/http drops HEAD bodies.
func readable(e *echo.Echo, path string, h echo.HandlerFunc) {
	e.GET(path, h)
	e.HEAD(path, h)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}

// Routes lists the registered method and path pairs.
func (s *Server) Routes() []echo.RouteInfo {
	return s.echo.Router().Routes()
}

func (s *Server) handleError(c *echo.Context, err error) {
	if resp, _ := echo.UnwrapResponse(c.Response()); resp != nil && resp.Committed {
		s.log.Warn("request failed after the response started", "method", c.Request().Method, "path", c.Request().URL.Path, "error", err)
		return
	}
	p := problemFor(err)
	if p.Status >= http.StatusInternalServerError {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "error", err)
	}
	if werr := writeProblem(c, p); werr != nil {
		s.log.Debug("writing problem details", "error", werr)
	}
}

// recoverPanics turns a panicking handler into a 500 problem so the process keeps serving.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if err, ok := r.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(r)
			}
			s.log.Error("handler panicked", "method", c.Request().Method, "path", c.Request().URL.Path, "panic", r, "stack", string(debug.Stack()))
			err = errors.New("handler panicked")
		}()
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		start := time.Now()
		err := next(c)
		if s.log.Enabled(c.Request().Context(), slog.LevelDebug) {
			_, status := echo.ResolveResponseStatus(c.Response(), err)
			s.log.Debug("request", "method", c.Request().Method, "uri", c.Request().URL.RequestURI(), "status", status, "duration", time.Since(start))
		}
		return err
	}
}
