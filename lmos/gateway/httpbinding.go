package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/lmos/target"
)

// maxHTTPReplyBytes bounds what the gateway reads of a Thing's HTTP answer.
const maxHTTPReplyBytes = 16 << 20

// httpFormFor is the plain HTTP form that can carry the request, for the requests the HTTP
// binding supports: invoking actions and reading and writing properties.
func httpFormFor(m *lmos.Message, th *target.Thing, forms []target.Form) (target.Form, bool) {
	switch m.Type() {
	case lmos.TypeInvokeAction:
		return target.HTTPForm(forms, "invokeaction")
	case lmos.TypeReadProperty:
		return target.HTTPForm(forms, "readproperty")
	case lmos.TypeWriteProperty:
		return target.HTTPForm(forms, "writeproperty")
	case lmos.TypeWriteMultipleProperties:
		return target.HTTPForm(th.Forms, "writemultipleproperties")
	}
	return target.Form{}, false
}

// defaultMethods are the TD HTTP binding's methods for forms without htv:methodName.
var defaultMethods = map[lmos.Type]string{
	lmos.TypeInvokeAction:            http.MethodPost,
	lmos.TypeReadProperty:            http.MethodGet,
	lmos.TypeWriteProperty:           http.MethodPut,
	lmos.TypeWriteMultipleProperties: http.MethodPut,
}

// forwardHTTP performs the HTTP request a form describes and answers with the LMOS reply
// that matches the request: an action's completed status, a property reading, or the
// readings of the written properties.
func (s *Session) forwardHTTP(ctx context.Context, r *route, m *lmos.Message, th *target.Thing, form target.Form) {
	ctx, cancel := context.WithTimeout(ctx, s.g.cfg.ReplyTimeout)
	defer cancel()
	var payload json.RawMessage
	switch b := m.Body.(type) {
	case *lmos.InvokeAction:
		payload = b.Input
	case *lmos.WriteProperty:
		payload = b.Data
	case *lmos.WriteMultipleProperties:
		payload = b.Data
	}
	method := form.Method
	if method == "" {
		method = defaultMethods[m.Type()]
	}
	req, err := http.NewRequestWithContext(ctx, method, form.Href.String(), bytes.NewReader(payload))
	if err != nil {
		r.fail(http.StatusBadGateway, fmt.Sprintf("the form of %s cannot be used: %v", th.ID, err))
		return
	}
	if payload != nil {
		req.Header.Set("Content-Type", form.ContentType)
	}
	req.Header.Set("Accept", form.ContentType)
	injectTraceContext(ctx, req.Header)
	resp, err := s.g.http.Do(req)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, context.DeadlineExceeded) {
			status = http.StatusGatewayTimeout
		}
		r.fail(status, fmt.Sprintf("%s %s failed: %v", method, form.Href, err))
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPReplyBytes+1))
	switch {
	case err != nil:
		r.fail(http.StatusBadGateway, fmt.Sprintf("reading the answer of %s %s: %v", method, form.Href, err))
		return
	case len(body) > maxHTTPReplyBytes:
		r.fail(http.StatusBadGateway, fmt.Sprintf("the answer of %s %s is larger than %d bytes", method, form.Href, maxHTTPReplyBytes))
		return
	}
	reply := &lmos.Message{ThingID: th.ID, MessageID: uuid.NewString()}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		reply.Body = httpError(resp, body)
		r.deliver(reply)
		return
	}
	value := bodyValue(resp.Header.Get("Content-Type"), body)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	switch b := m.Body.(type) {
	case *lmos.InvokeAction:
		reply.Body = &lmos.ActionStatus{Action: b.Action, Status: "completed", Output: value}
	case *lmos.ReadProperty:
		if value == nil {
			r.fail(http.StatusBadGateway, fmt.Sprintf("%s %s answered without a value", method, form.Href))
			return
		}
		reply.Body = &lmos.PropertyReading{Name: b.Name, Value: value, Timestamp: now}
	case *lmos.WriteProperty:
		written, _ := json.Marshal(map[string]json.RawMessage{b.Name: b.Data})
		reply.Body = &lmos.PropertyReadings{Data: written, Timestamp: now}
	case *lmos.WriteMultipleProperties:
		reply.Body = &lmos.PropertyReadings{Data: b.Data, Timestamp: now}
	}
	r.deliver(reply)
}

// bodyValue is an HTTP answer as a JSON value: JSON as it is, other content as a string,
// nothing as nil.
func bodyValue(contentType string, body []byte) json.RawMessage {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if isJSONMedia(contentType) && json.Valid(body) {
		return body
	}
	text, _ := json.Marshal(string(body))
	return text
}

func isJSONMedia(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && (media == "application/json" || strings.HasSuffix(media, "+json"))
}

// maxErrorDetail bounds how much of a non-JSON error answer becomes the error's detail.
const maxErrorDetail = 512

// httpError is the LMOS error for a Thing's failed HTTP answer, with the problem details it
// sent when it sent some.
func httpError(resp *http.Response, body []byte) *lmos.Error {
	e := &lmos.Error{
		TypeURI:  lmos.ErrorTypeUnspecified,
		Title:    http.StatusText(resp.StatusCode),
		Status:   fmt.Sprint(resp.StatusCode),
		Detail:   fmt.Sprintf("the Thing answered %s", resp.Status),
		Instance: uuid.New().URN(),
	}
	if e.Title == "" {
		e.Title = "Error"
	}
	var problem struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if isJSONMedia(resp.Header.Get("Content-Type")) && json.Unmarshal(body, &problem) == nil {
		if problem.Detail != "" {
			e.Detail = problem.Detail
		} else if problem.Title != "" {
			e.Detail = problem.Title
		}
		if problem.Type != "" && strings.Contains(problem.Type, ":") {
			e.TypeURI = problem.Type
		}
		return e
	}
	if text := strings.TrimSpace(string(body)); text != "" {
		if len(text) > maxErrorDetail {
			text = text[:maxErrorDetail] + "…"
		}
		e.Detail += ": " + text
	}
	return e
}
