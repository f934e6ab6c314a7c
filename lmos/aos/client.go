package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/internal/redirect"
)

// The JSON-RPC methods this client calls.
const (
	methodToolCallRequest = "steps/toolCallRequest"
	methodToolCallResult  = "steps/toolCallResult"
	methodPing            = "ping"
)

const (
	jsonrpcVersion = "2.0"
	pingConnected  = "connected"

	// maxResponseBytes bounds what is read from a guardian: a decision is a
	// few hundred bytes, and a misbehaving guardian must not exhaust memory.
	maxResponseBytes = 1 << 20

	// maxRedirects is how many redirects a call follows before giving up.
	maxRedirects = 3

	// maxErrorSnippet is how much of a non-2xx body goes into the error.
	maxErrorSnippet = 200
)

// ErrUnavailable is wrapped by every error that means no usable answer came
// from the guardian: it could not be reached, did not answer in time, answered
// with an HTTP error, or sent something other than a valid JSON-RPC 2.0
// response to the request. The error text says which.
var ErrUnavailable = errors.New("the guardian is unavailable")

// RPCError is a JSON-RPC error response from the guardian. It does not wrap
// ErrUnavailable: the guardian was reached and refused on purpose.
//
// Both the JSON-RPC 2.0 error object and the spec's JSONRPCErrorResponse,
// whose error member is a plain string, are accepted; for the latter Code is
// 0 and Message is that string.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

// Error gives the code, unless the guardian sent none, and the message; Data
// is left out as it may be large.
func (e *RPCError) Error() string {
	if e.Code == 0 {
		return "aos: the guardian answered with error: " + e.Message
	}
	return fmt.Sprintf("aos: the guardian answered with error %d: %s", e.Code, e.Message)
}

// Client calls one guardian. It is safe for concurrent use.
type Client struct {
	endpoint string
	http     *http.Client
}

// NewClient returns a client for the guardian at endpoint, an absolute http or
// https URL. A nil httpClient means a default one. Either way, the client
// follows at most three redirects, only to the endpoint's scheme, host and
// port, and only when the redirect keeps the request a POST: a guardian must
// not be able to send a step's context elsewhere or have it dropped. A
// caller's httpClient is copied, not changed. Calls are bounded by the
// caller's context alone.
func NewClient(endpoint string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("aos: the guardian endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("aos: the guardian endpoint %q is not an http or https URL", endpoint)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("aos: the guardian endpoint %q has no host", endpoint)
	}
	var hc http.Client
	if httpClient != nil {
		hc = *httpClient
	}
	hc.CheckRedirect = redirect.SameOrigin(maxRedirects, hc.CheckRedirect)
	return &Client{endpoint: u.String(), http: &hc}, nil
}

// ToolCallRequest asks the guardian whether a tool call may go ahead.
func (c *Client) ToolCallRequest(ctx context.Context, p ToolCallRequestParams) (Decision, error) {
	return c.decide(ctx, methodToolCallRequest, p)
}

// ToolCallResult reports the result of a tool call to the guardian, which may
// still deny or modify it.
func (c *Client) ToolCallResult(ctx context.Context, p ToolCallResultParams) (Decision, error) {
	return c.decide(ctx, methodToolCallResult, p)
}

// Ping checks that the guardian is alive. An empty Timestamp is set to the
// current UTC time, as the spec requires one. A result whose status is not
// "connected" is returned together with an error wrapping ErrUnavailable, so
// that the caller can still log what the guardian said about itself.
func (c *Client) Ping(ctx context.Context, p PingParams) (PingResult, error) {
	if p.Timestamp == "" {
		p.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
	}
	raw, err := c.call(ctx, methodPing, p)
	if err != nil {
		return PingResult{}, err
	}
	var r PingResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return PingResult{}, fmt.Errorf("%w: the ping result is malformed: %w", ErrUnavailable, err)
	}
	if r.Status != pingConnected {
		return r, fmt.Errorf("%w: ping status %q", ErrUnavailable, r.Status)
	}
	return r, nil
}

func (c *Client) decide(ctx context.Context, method string, params any) (Decision, error) {
	raw, err := c.call(ctx, method, params)
	if err != nil {
		return Decision{}, err
	}
	return parseDecision(raw)
}

// parseDecision checks an AOSSuccessResult, as acting on a decision the client
// misread would be worse than having none.
func parseDecision(raw json.RawMessage) (Decision, error) {
	// The outer Message shadows Decision.Message, which tells a missing
	// message apart from an empty one.
	var r struct {
		Decision
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Decision{}, fmt.Errorf("%w: the decision is malformed: %w", ErrUnavailable, err)
	}
	switch r.Decision.Decision {
	case DecisionAllow, DecisionDeny, DecisionModify:
	case "":
		return Decision{}, fmt.Errorf("%w: the result has no decision", ErrUnavailable)
	default:
		return Decision{}, fmt.Errorf("%w: unknown decision %q", ErrUnavailable, r.Decision.Decision)
	}
	if r.Message == nil {
		return Decision{}, fmt.Errorf("%w: the decision has no message", ErrUnavailable)
	}
	d := r.Decision
	d.Message = *r.Message
	return d, nil
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// response keeps members raw so that a missing member can be told apart from
// one with a zero value.
type response struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// call sends one JSON-RPC request and returns its result member.
func (c *Client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := uuid.NewString()
	body, err := json.Marshal(request{JSONRPC: jsonrpcVersion, ID: id, Method: method, Params: params})
	if err != nil {
		// The params are the caller's, e.g. a ToolArgumentValue holding invalid
		// JSON; the guardian was never asked, so this is not ErrUnavailable.
		return nil, fmt.Errorf("aos: encoding the %s request: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("aos: building the %s request: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, method, err)
	}
	defer resp.Body.Close()

	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading the response: %w", ErrUnavailable, method, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: %s: HTTP status %s%s", ErrUnavailable, method, resp.Status, snippet(data))
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("%w: %s: the response is larger than %d bytes", ErrUnavailable, method, maxResponseBytes)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: %s: the response is not JSON (Content-Type %q)", ErrUnavailable, method, resp.Header.Get("Content-Type"))
	}
	result, err := parseResponse(data, id)
	if err != nil {
		if _, ok := errors.AsType[*RPCError](err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, method, err)
	}
	return result, nil
}

// snippet quotes the start of an error body, which often says why, without
// letting a large page flood the logs.
func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return ""
	case len(b) > maxErrorSnippet:
		return fmt.Sprintf(": %q…", b[:maxErrorSnippet])
	default:
		return fmt.Sprintf(": %q", b)
	}
}

// parseResponse checks a JSON-RPC 2.0 response to the request with id and
// returns its result, or its error as an *RPCError. Any other error means the
// body is not such a response.
func parseResponse(data []byte, id string) (json.RawMessage, error) {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the response is not a JSON-RPC response object: %w", err)
	}
	if r.JSONRPC == nil {
		return nil, errors.New("the response has no jsonrpc member")
	}
	if *r.JSONRPC != jsonrpcVersion {
		return nil, fmt.Errorf("the response has jsonrpc %q, not %q", *r.JSONRPC, jsonrpcVersion)
	}
	// Servers commonly write the member they leave out as null.
	hasResult, hasError := present(r.Result), present(r.Error)
	switch {
	case hasResult && hasError:
		return nil, errors.New("the response has both result and error")
	case !hasResult && !hasError:
		return nil, errors.New("the response has neither result nor error")
	}
	if err := checkID(r.ID, id, hasError); err != nil {
		return nil, err
	}
	if hasError {
		return nil, parseRPCError(r.Error)
	}
	return r.Result, nil
}

func present(v json.RawMessage) bool {
	return v != nil && !bytes.Equal(v, []byte("null"))
}

// checkID requires the response id to be the request's. A null id is allowed
// on an error response, where JSON-RPC 2.0 uses it when the server could not
// read the request's id.
func checkID(got json.RawMessage, want string, isError bool) error {
	if got == nil {
		return errors.New("the response has no id")
	}
	if bytes.Equal(got, []byte("null")) && isError {
		return nil
	}
	var s string
	if err := json.Unmarshal(got, &s); err != nil || s != want {
		return fmt.Errorf("the response id %s is not the request's %q", got, want)
	}
	return nil
}

// parseRPCError reads an error member, either a JSON-RPC 2.0 error object or
// a plain string as the spec's JSONRPCErrorResponse has it.
func parseRPCError(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &RPCError{Message: s}
	}
	var e struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("the error member is neither a string nor an error object: %w", err)
	}
	if e.Code == nil || e.Message == nil {
		return fmt.Errorf("the error object lacks code or message: %s", raw)
	}
	return &RPCError{Code: *e.Code, Message: *e.Message, Data: e.Data}
}
