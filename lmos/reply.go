package lmos

import (
	"strconv"

	"github.com/google/uuid"
)

// Subprotocol is the WebSocket subprotocol of LMOS, spoken by consumers, gateways and
// Things.
const Subprotocol = "lmosprotocol"

// Ends reports whether m is the last reply to its request: an error, or an actionStatus
// whose action is over.
func (m *Message) Ends() bool {
	switch body := m.Body.(type) {
	case *Error:
		return true
	case *ActionStatus:
		return body.Over()
	}
	return false
}

// Over reports whether the action is over: completed, failed or canceled (either spelling).
func (s *ActionStatus) Over() bool {
	switch s.Status {
	case "completed", "failed", "canceled", "cancelled": //nolint:misspell // Things write either
		return true
	}
	return false
}

// ErrorTypeUnspecified is the error type URI that RFC 9457, whose problem
// details the LMOS error message follows, gives errors without a more
// specific type; the title then summarizes the status code.
const ErrorTypeUnspecified = "about:blank"

// NewError builds the error message a Thing sends in reply to request: a new
// message id, the request's message id as correlation id and the request's
// spelling, so the consumer can match the reply to its request. The type is
// ErrorTypeUnspecified and the instance a fresh urn:uuid; set Body fields to
// change them.
//
// request may be one that Parse refused (Parse returns what it could
// decode) or nil. Its thing id and message id are copied only when valid, so
// that the reply stays encodable; when the request had no valid thing id the
// caller, who knows its Thing's id, must set ThingID.
func NewError(request *Message, status int, title, detail string) *Message {
	reply := &Message{
		MessageID: uuid.NewString(),
		Body: &Error{
			TypeURI:  ErrorTypeUnspecified,
			Title:    title,
			Status:   strconv.Itoa(status),
			Detail:   detail,
			Instance: uuid.New().URN(),
		},
	}
	if request != nil {
		reply.spelling = request.spelling
		if checkAbsoluteURI(request.ThingID) == "" {
			reply.ThingID = request.ThingID
		}
		if checkUUIDv4(request.MessageID) == "" {
			reply.CorrelationID = request.MessageID
		}
	}
	return reply
}
