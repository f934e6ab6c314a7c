// Package lmos is the message layer of the Eclipse LMOS communication
// protocol: the Go types of its messages, a parser that refuses anything the
// specification does not allow while keeping members it does not know, and an
// encoder that answers a consumer in the member spelling it used.
package lmos

import "encoding/json"

// Type is the value of the messageType member.
type Type string

// The message types of the LMOS protocol.
const (
	TypeInvokeAction            Type = "invokeAction"
	TypeCancelAction            Type = "cancelAction"
	TypeQueryAction             Type = "queryAction"
	TypeActionStatus            Type = "actionStatus"
	TypeSubscribeEvent          Type = "subscribeEvent"
	TypeUnsubscribeEvent        Type = "unsubscribeEvent"
	TypeSubscribeAllEvents      Type = "subscribeAllEvents"
	TypeUnsubscribeAllEvents    Type = "unsubscribeAllEvents"
	TypeReadProperty            Type = "readProperty"
	TypePropertyReading         Type = "propertyReading"
	TypePropertyReadings        Type = "propertyReadings"
	TypeWriteProperty           Type = "writeProperty"
	TypeWriteMultipleProperties Type = "writeMultipleProperties"
	TypeObserveProperty         Type = "observeProperty"
	TypeUnobserveProperty       Type = "unobserveProperty"
	TypeEvent                   Type = "event"
	TypeError                   Type = "error"
)

// Spelling is how a message spells the identifier members. The specification
// writes thingID, messageID and correlationID, while its own examples and
// deployed agents also write thingId, messageId and correlationId; a reply is
// best written the way the consumer wrote its request.
type Spelling int

const (
	// SpellingUpperID writes thingID, messageID and correlationID, as the
	// specification's member tables do.
	SpellingUpperID Spelling = iota
	// SpellingCamelID writes thingId, messageId and correlationId.
	SpellingCamelID
)

// Message is one LMOS message: the members every message shares, the members
// of its type in Body, and the members the protocol does not define in Extra.
type Message struct {
	ThingID       string // absolute URI of the Thing
	MessageID     string // UUIDv4
	CorrelationID string // UUIDv4 shared by a request and its replies; optional except for events
	TraceParent   string // W3C Trace Context traceparent; optional
	TraceState    string // W3C Trace Context tracestate; optional
	Body          Body   // the members of the message type; decides messageType
	// Extra holds members the protocol does not define, in the order they were
	// received, so that a message forwarded by an intermediary loses nothing.
	Extra []Member

	spelling Spelling
}

// Member is one member of a JSON object, its value kept as received.
type Member struct {
	Name  string
	Value json.RawMessage
}

// Type is the message type, decided by the body; empty when there is none.
func (m *Message) Type() Type {
	if m.Body == nil {
		return ""
	}
	return m.Body.Type()
}

// Spelling is the spelling of the identifier members the message was received
// in: the spelling of the first identifier member it contained.
func (m *Message) Spelling() Spelling { return m.spelling }

// Body is the type-specific part of a message. The implementations are the
// pointer types in this package named after the message types.
type Body interface {
	Type() Type
	// fields lists the type's members in the order the specification gives
	// them, pointing into the body so one list serves decoding, validation
	// and encoding.
	fields() []field
}

// InvokeAction asks a Thing to run an action.
type InvokeAction struct {
	Action string
	Input  json.RawMessage // optional
}

// CancelAction asks a Thing to cancel an ongoing or scheduled action.
type CancelAction struct {
	Action string
	Reason string // optional
}

// QueryAction asks a Thing for the latest status of an action.
type QueryAction struct {
	Action string
}

// ActionStatus reports the status of an action, e.g. pending, completed or failed.
type ActionStatus struct {
	Action string
	Status string
	Output json.RawMessage // optional
}

// SubscribeEvent subscribes to one event of a Thing.
type SubscribeEvent struct {
	Event string
}

// UnsubscribeEvent ends a subscription to one event of a Thing.
type UnsubscribeEvent struct {
	Event string
}

// SubscribeAllEvents subscribes to every event of a Thing.
type SubscribeAllEvents struct{}

// UnsubscribeAllEvents ends the subscription to every event of a Thing.
type UnsubscribeAllEvents struct{}

// ReadProperty asks a Thing for the value of a property.
type ReadProperty struct {
	Name string
}

// PropertyReading carries the value of one property.
type PropertyReading struct {
	Name      string
	Value     json.RawMessage // any JSON value, null included
	Timestamp string          // RFC 3339 date-time of the reading
}

// PropertyReadings carries the values of several properties.
type PropertyReadings struct {
	Data      json.RawMessage // object mapping property names to values
	Timestamp string          // RFC 3339 date-time of the readings
}

// WriteProperty asks a Thing to change the value of a property.
type WriteProperty struct {
	Name string
	Data json.RawMessage // the new value
}

// WriteMultipleProperties asks a Thing to change the values of several properties.
type WriteMultipleProperties struct {
	Data json.RawMessage // object mapping property names to new values
}

// ObserveProperty starts observing changes of a property.
type ObserveProperty struct {
	Name string
}

// UnobserveProperty stops observing changes of a property.
type UnobserveProperty struct {
	Name string
}

// Event notifies a subscriber of an event; its message's CorrelationID is
// required and names the subscription.
type Event struct {
	Event     string
	Data      json.RawMessage
	Timestamp string // RFC 3339 date-time of the occurrence
}

// Error reports a failure, in the shape of RFC 9457 problem details.
type Error struct {
	TypeURI  string // the "type" member: URI reference identifying the kind of error
	Title    string
	Status   string // status code, a string in the specification
	Detail   string
	Instance string // URI reference identifying this occurrence
}

// Type implements Body.
func (*InvokeAction) Type() Type { return TypeInvokeAction }

// Type implements Body.
func (*CancelAction) Type() Type { return TypeCancelAction }

// Type implements Body.
func (*QueryAction) Type() Type { return TypeQueryAction }

// Type implements Body.
func (*ActionStatus) Type() Type { return TypeActionStatus }

// Type implements Body.
func (*SubscribeEvent) Type() Type { return TypeSubscribeEvent }

// Type implements Body.
func (*UnsubscribeEvent) Type() Type { return TypeUnsubscribeEvent }

// Type implements Body.
func (*SubscribeAllEvents) Type() Type { return TypeSubscribeAllEvents }

// Type implements Body.
func (*UnsubscribeAllEvents) Type() Type { return TypeUnsubscribeAllEvents }

// Type implements Body.
func (*ReadProperty) Type() Type { return TypeReadProperty }

// Type implements Body.
func (*PropertyReading) Type() Type { return TypePropertyReading }

// Type implements Body.
func (*PropertyReadings) Type() Type { return TypePropertyReadings }

// Type implements Body.
func (*WriteProperty) Type() Type { return TypeWriteProperty }

// Type implements Body.
func (*WriteMultipleProperties) Type() Type { return TypeWriteMultipleProperties }

// Type implements Body.
func (*ObserveProperty) Type() Type { return TypeObserveProperty }

// Type implements Body.
func (*UnobserveProperty) Type() Type { return TypeUnobserveProperty }

// Type implements Body.
func (*Event) Type() Type { return TypeEvent }

// Type implements Body.
func (*Error) Type() Type { return TypeError }

// newBody returns an empty body for a message type, or nil for an unknown one.
func newBody(t Type) Body {
	switch t {
	case TypeInvokeAction:
		return &InvokeAction{}
	case TypeCancelAction:
		return &CancelAction{}
	case TypeQueryAction:
		return &QueryAction{}
	case TypeActionStatus:
		return &ActionStatus{}
	case TypeSubscribeEvent:
		return &SubscribeEvent{}
	case TypeUnsubscribeEvent:
		return &UnsubscribeEvent{}
	case TypeSubscribeAllEvents:
		return &SubscribeAllEvents{}
	case TypeUnsubscribeAllEvents:
		return &UnsubscribeAllEvents{}
	case TypeReadProperty:
		return &ReadProperty{}
	case TypePropertyReading:
		return &PropertyReading{}
	case TypePropertyReadings:
		return &PropertyReadings{}
	case TypeWriteProperty:
		return &WriteProperty{}
	case TypeWriteMultipleProperties:
		return &WriteMultipleProperties{}
	case TypeObserveProperty:
		return &ObserveProperty{}
	case TypeUnobserveProperty:
		return &UnobserveProperty{}
	case TypeEvent:
		return &Event{}
	case TypeError:
		return &Error{}
	}
	return nil
}
