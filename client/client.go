// Package client talks to a running lmosdir directory over its HTTP API, so that Go
// programs — the lmosdir command itself, agents looking for tools, registration jobs — can
// search, read, register and remove Thing Descriptions without knowing the wire format:
// query parameters, cursors in next links, facet order and RFC 7807 problem answers.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// defaultMaxResponseBytes bounds what the client reads of one answer, so that a misbehaving
// server or proxy cannot exhaust the caller's memory. It is well above the directory's own
// default limit of a JSONPath answer (16 MiB).
const defaultMaxResponseBytes = 64 << 20

// Client sends requests to one directory. It is safe for concurrent use.
type Client struct {
	// base is the directory's URL without a trailing slash; endpoint paths are appended.
	base string
	http *http.Client
	// maxResponseBytes is a whole number of MiB, as errors state it.
	maxResponseBytes int
	// eventsRetry, when set, replaces the first reconnection delay of Events until the
	// server sets one, so that tests need not wait seconds.
	eventsRetry time.Duration
}

// Option changes a Client made by New.
type Option func(*Client)

// WithHTTPClient sends the requests with hc instead of http.DefaultClient, e.g. for
// timeouts, proxies or TLS settings.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.http = hc }
}

// New returns a client of the directory at baseURL, an absolute http or https URL that may
// include the path the directory is served under ("http://h:8080/dir").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("directory URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("directory URL %q: give an absolute http or https URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("directory URL %q: leave out the query and fragment; endpoint paths are appended to it", baseURL)
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), http: http.DefaultClient, maxResponseBytes: defaultMaxResponseBytes}
	for _, opt := range opts {
		opt(c)
	}
	return c, nil
}

// ProblemError is an answer with a status other than 2xx, read from its RFC 7807 problem
// details. When the body is not problem JSON (a proxy's error page, say), Detail holds its
// beginning.
type ProblemError struct {
	Status   int    `json:"status"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	// ValidationErrors lists every problem of a rejected Thing Description or argument.
	ValidationErrors []FieldProblem `json:"validationErrors,omitempty"`
}

// FieldProblem is one problem of a request, named by the field it is about.
type FieldProblem struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Error is one line: "400 Bad Request: detail (field: description; …)".
func (e *ProblemError) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.Status))
	title := e.Title
	if title == "" {
		title = http.StatusText(e.Status)
	}
	if title != "" {
		b.WriteString(" " + title)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	for i, fp := range e.ValidationErrors {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		if fp.Field != "" {
			b.WriteString(fp.Field + ": ")
		}
		b.WriteString(fp.Description)
	}
	if len(e.ValidationErrors) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// do sends one request and returns the status and body of a 2xx answer; any other answer
// becomes a *ProblemError.
func (c *Client) do(ctx context.Context, method, target string, header http.Header, body []byte) (int, []byte, error) {
	var reader io.Reader = http.NoBody
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return 0, nil, err
	}
	for name, values := range header {
		req.Header[name] = values
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := readLimited(resp.Body, c.maxResponseBytes)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// A cut or broken error body still tells what went wrong; readProblem copes with it.
		return resp.StatusCode, nil, readProblem(resp, data)
	}
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: %w", method, req.URL.Redacted(), err)
	}
	return resp.StatusCode, data, nil
}

// readLimited reads r to its end, or fails once it passes limit bytes; it returns what it
// has read either way.
func readLimited(r io.Reader, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return data, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > limit {
		return data[:limit], fmt.Errorf("the answer is larger than the client's limit of %d MiB", limit>>20)
	}
	return data, nil
}

// readProblem makes an answer that is not 2xx an error; the HTTP status wins over the one in
// the body, which a proxy may not have written.
func readProblem(resp *http.Response, body []byte) *ProblemError {
	var problem ProblemError
	if isJSON(resp.Header.Get("Content-Type")) && json.Unmarshal(body, &problem) == nil &&
		problem.Type+problem.Title+problem.Detail != "" {
		problem.Status = resp.StatusCode
		return &problem
	}
	return &ProblemError{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Detail: truncate(body)}
}

// isJSON reports whether a Content-Type is JSON of any kind: application/problem+json,
// application/json, application/td+json.
func isJSON(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && (media == "application/json" || strings.HasSuffix(media, "+json"))
}

// truncate is the beginning of a body that is not what was expected, for an error message.
func truncate(body []byte) string {
	const shown = 200
	if len(body) > shown {
		body = body[:shown]
	}
	// The cut may split a character; a broken one would garble terminals.
	return strings.ToValidUTF8(strings.TrimSpace(string(body)), "")
}
