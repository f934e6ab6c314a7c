package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/td"
)

// Problem is an RFC 7807 problem details object.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	// ValidationErrors is the WoT Discovery extension listing every problem of a TD.
	ValidationErrors []td.Problem `json:"validationErrors,omitempty"`
}

// Problem types beyond the plain HTTP status ("about:blank"), so clients can tell them apart.
const (
	problemInvalidTD     = "urn:lmosdir:problem:invalid-td"
	problemThingModel    = "urn:lmosdir:problem:thing-model"
	problemMalformedJSON = "urn:lmosdir:problem:malformed-json"
	problemBadRequest    = "urn:lmosdir:problem:bad-request"
	problemQueryLimit    = "urn:lmosdir:problem:query-limit"
	problemEventsGone    = "urn:lmosdir:problem:events-gone"
)

// statusError is a failure that the handlers detect themselves (arguments, media types,
// sizes) and that maps to one status with its own detail.
type statusError struct {
	status int
	detail string
}

func (e *statusError) Error() string { return e.detail }

func errorf(status int, format string, args ...any) error {
	return &statusError{status: status, detail: fmt.Sprintf(format, args...)}
}

// problemFor maps every error the API can meet to its problem details: this is the one
// place where core errors become HTTP statuses.
func problemFor(err error) Problem {
	var (
		statusErr  *statusError
		syntaxErr  *td.SyntaxError
		invalidErr *td.ValidationError
		requestErr *directory.RequestError
		limitErr   *directory.LimitError
		maxBytes   *http.MaxBytesError
		coder      echo.HTTPStatusCoder
	)
	switch {
	case errors.As(err, &statusErr):
		return newProblem(statusErr.status, statusErr.detail)
	case errors.As(err, &maxBytes):
		return newProblem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than this directory's limit of %d bytes", maxBytes.Limit))
	case errors.As(err, &syntaxErr):
		p := newProblem(http.StatusBadRequest, "the request body is not valid JSON: "+syntaxErr.Error())
		p.Type = problemMalformedJSON
		return p
	case errors.As(err, &invalidErr):
		p := newProblem(http.StatusBadRequest, "")
		p.ValidationErrors = invalidErr.Problems
		if invalidErr.ThingModel {
			p.Type = problemThingModel
			p.Detail = "the document is a Thing Model, not a Thing Description; register a TD instantiated from the model"
		} else {
			p.Type = problemInvalidTD
			p.Detail = fmt.Sprintf("the Thing Description is not valid: %s", countProblems(len(invalidErr.Problems)))
		}
		return p
	case errors.As(err, &requestErr):
		p := newProblem(http.StatusBadRequest, requestErr.Detail)
		p.Type = problemBadRequest
		if requestErr.Field != "" {
			p.ValidationErrors = []td.Problem{{Field: requestErr.Field, Description: requestErr.Detail}}
		}
		return p
	case errors.As(err, &limitErr):
		p := newProblem(http.StatusUnprocessableEntity, limitErr.Detail)
		p.Type = problemQueryLimit
		return p
	case errors.Is(err, directory.ErrNotFound):
		return newProblem(http.StatusNotFound, "no Thing with this id is registered (or its registration expired)")
	case errors.Is(err, directory.ErrExists):
		return newProblem(http.StatusConflict, "a Thing with this id is already registered")
	case errors.Is(err, directory.ErrUnknownEventType):
		return newProblem(http.StatusNotFound, "there is no such event type: the streams are /events, /events/thing_created, /events/thing_updated and /events/thing_deleted")
	case errors.Is(err, directory.ErrEventsGone):
		p := newProblem(http.StatusGone, "the events after this Last-Event-ID are no longer held (or it is not an id this directory gave out); read the directory again, then subscribe without Last-Event-ID")
		p.Type = problemEventsGone
		return p
	case errors.Is(err, directory.ErrTooManySubscribers):
		return newProblem(http.StatusServiceUnavailable, "the directory has as many event subscribers as it accepts; try again later")
	case errors.Is(err, directory.ErrEventsStopped):
		return newProblem(http.StatusServiceUnavailable, "the directory is not delivering events at the moment (starting or shutting down); try again")
	case errors.Is(err, context.DeadlineExceeded):
		return newProblem(http.StatusServiceUnavailable, "the directory could not answer in time; try again")
	case errors.As(err, &coder) && coder.StatusCode() < 500:
		status := coder.StatusCode()
		return newProblem(status, routerDetail(status))
	default:
		return newProblem(http.StatusInternalServerError, "the directory failed to handle the request; the error has been logged")
	}
}

func countProblems(n int) string {
	if n == 1 {
		return "1 problem, see validationErrors"
	}
	return strconv.Itoa(n) + " problems, see validationErrors"
}

func routerDetail(status int) string {
	switch status {
	case http.StatusNotFound:
		return "there is no such endpoint; see /openapi.yaml for the API"
	case http.StatusMethodNotAllowed:
		return "this endpoint does not support the method; the Allow header lists the ones it does"
	default:
		return http.StatusText(status)
	}
}

func newProblem(status int, detail string) Problem {
	return Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
}

// writeProblem sends p with an exact Content-Length, so HEAD answers carry the same headers.
func writeProblem(c *echo.Context, p Problem) error {
	p.Instance = c.Request().URL.RequestURI()
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return writeBody(c, p.Status, "application/problem+json", body)
}

// writeBody sends body with its exact length (for HEAD too: net/http drops the bytes).
func writeBody(c *echo.Context, status int, contentType string, body []byte) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(body)
	return err
}
