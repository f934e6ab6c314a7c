package lmos

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON encodes the message in the spelling it was received in; see Encode.
func (m *Message) MarshalJSON() ([]byte, error) {
	return m.Encode(m.spelling)
}

// Encode validates the message and encodes it with its identifier members in
// the given spelling: the common members first, then the type's members in
// the order of the specification, then Extra in its order. It returns a
// *ValidationError for an invalid message, so nothing a peer would refuse
// leaves this package.
func (m *Message) Encode(spelling Spelling) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var w objectWriter
	w.buf.Grow(encodeBufferSize)
	w.str(thingIDName.in(spelling), m.ThingID)
	w.str(messageIDName.in(spelling), m.MessageID)
	w.str(messageTypeName, string(m.Type()))
	w.optionalString(correlationIDName.in(spelling), m.CorrelationID)
	w.optionalString(traceParentName, m.TraceParent)
	w.optionalString(traceStateName, m.TraceState)
	for _, f := range m.Body.fields() {
		switch {
		case !f.present():
		case f.kind == kindString:
			w.str(f.name, *f.text)
		default:
			w.member(f.name, *f.raw)
		}
	}
	for _, e := range m.Extra {
		w.member(e.Name, e.Value)
	}
	return w.finish()
}

// encodeBufferSize is room for a typical message, so that encoding it grows no buffer.
const encodeBufferSize = 512

// objectWriter writes a JSON object member by member, keeping the first error.
type objectWriter struct {
	buf bytes.Buffer
	err error
}

// name starts a member; it reports false after an error.
func (w *objectWriter) name(name string) bool {
	if w.err != nil {
		return false
	}
	if w.buf.Len() == 0 {
		w.buf.WriteByte('{')
	} else {
		w.buf.WriteByte(',')
	}
	w.buf.Write(appendString(w.buf.AvailableBuffer(), name))
	w.buf.WriteByte(':')
	return true
}

// str writes a member whose value is a string.
func (w *objectWriter) str(name, value string) {
	if w.name(name) {
		w.buf.Write(appendString(w.buf.AvailableBuffer(), value))
	}
}

func (w *objectWriter) member(name string, value json.RawMessage) {
	if !w.name(name) {
		return
	}
	if isCompact(value) {
		w.buf.Write(value)
		return
	}
	// Compacting keeps a received value's content but not its layout.
	w.err = json.Compact(&w.buf, value)
}

// isCompact reports whether a JSON value has no whitespace outside its strings, so that
// it can be written as it is.
func isCompact(value json.RawMessage) bool {
	inString := false
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

func (w *objectWriter) optionalString(name, value string) {
	if value != "" {
		w.str(name, value)
	}
}

func (w *objectWriter) finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}
