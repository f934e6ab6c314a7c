package lmos

import (
	"bytes"
	"encoding/json"
)

// fieldKind is the JSON shape a type-specific member must have.
type fieldKind int

const (
	kindString fieldKind = iota
	kindJSON             // any JSON value, kept as received
	kindObject           // a JSON object, kept as received
)

// field describes one type-specific member and points at where its value
// lives in a body, so decoding, validation and encoding share one description.
type field struct {
	name     string
	kind     fieldKind
	required bool
	text     *string          // kindString
	raw      *json.RawMessage // kindJSON and kindObject
	// check is a further rule for a non-empty string value; it returns the
	// problem, or "" when the value is acceptable.
	check func(string) string
}

func requiredString(name string, p *string) field {
	return field{name: name, kind: kindString, required: true, text: p}
}

func optionalString(name string, p *string) field {
	return field{name: name, kind: kindString, text: p}
}

func requiredDateTime(name string, p *string) field {
	f := requiredString(name, p)
	f.check = checkDateTime
	return f
}

func requiredURIReference(name string, p *string) field {
	f := requiredString(name, p)
	f.check = checkURIReference
	return f
}

func requiredJSON(name string, p *json.RawMessage) field {
	return field{name: name, kind: kindJSON, required: true, raw: p}
}

func optionalJSON(name string, p *json.RawMessage) field {
	return field{name: name, kind: kindJSON, raw: p}
}

func requiredObject(name string, p *json.RawMessage) field {
	return field{name: name, kind: kindObject, required: true, raw: p}
}

// decode stores a received value and returns the problem with its JSON shape,
// if any; the value rules are left to validate so that messages built in Go
// are held to them too.
func (f field) decode(value json.RawMessage) string {
	if f.kind != kindString {
		*f.raw = value
		return ""
	}
	text, problem := decodeString(value)
	*f.text = text
	return problem
}

func (f field) present() bool {
	if f.kind == kindString {
		return *f.text != ""
	}
	return len(*f.raw) > 0
}

// validate returns the problem with the field's value, or "".
func (f field) validate() string {
	switch {
	case !f.present() && f.required:
		return "missing"
	case !f.present():
		return ""
	case f.kind == kindString && f.check != nil:
		return f.check(*f.text)
	case f.kind != kindString && !validJSON(*f.raw):
		return "is not valid JSON"
	case f.kind == kindObject && !isObject(*f.raw):
		return "must be a JSON object"
	}
	return ""
}

// decodeString returns a received string value and the problem with it, if
// any. Empty strings are refused because an encoder writes an empty optional
// member as absent, so accepting them would break round-trips.
func decodeString(value json.RawMessage) (text, problem string) {
	if len(value) == 0 || value[0] != '"' {
		return "", "must be a string"
	}
	if len(value) >= 2 && value[len(value)-1] == '"' {
		if inner := string(value[1 : len(value)-1]); isPlain(inner) {
			if inner == "" {
				return "", "must not be empty"
			}
			return inner, ""
		}
	}
	if err := json.Unmarshal(value, &text); err != nil {
		return "", "must be a string"
	}
	if text == "" {
		return "", "must not be empty"
	}
	return text, ""
}

// appendString appends s to b as a JSON string, as encoding/json writes it; the common
// case of plain printable ASCII, which needs no escapes, skips its reflection.
func appendString(b []byte, s string) []byte {
	if isPlain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	// Marshaling a string cannot fail.
	quoted, _ := json.Marshal(s)
	return append(b, quoted...)
}

// isPlain reports whether s holds only printable ASCII that JSON writes as it is:
// encoding/json escapes quotes, backslashes, control characters and, for HTML, <, > and &.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func isObject(value json.RawMessage) bool {
	trimmed := bytes.TrimLeft(value, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func (b *InvokeAction) fields() []field {
	return []field{requiredString("action", &b.Action), optionalJSON("input", &b.Input)}
}

func (b *CancelAction) fields() []field {
	return []field{requiredString("action", &b.Action), optionalString("reason", &b.Reason)}
}

func (b *QueryAction) fields() []field {
	return []field{requiredString("action", &b.Action)}
}

func (b *ActionStatus) fields() []field {
	return []field{
		requiredString("action", &b.Action),
		requiredString("status", &b.Status),
		optionalJSON("output", &b.Output),
	}
}

func (b *SubscribeEvent) fields() []field {
	return []field{requiredString("event", &b.Event)}
}

func (b *UnsubscribeEvent) fields() []field {
	return []field{requiredString("event", &b.Event)}
}

func (*SubscribeAllEvents) fields() []field { return nil }

func (*UnsubscribeAllEvents) fields() []field { return nil }

func (b *ReadProperty) fields() []field {
	return []field{requiredString("name", &b.Name)}
}

func (b *PropertyReading) fields() []field {
	return []field{
		requiredString("name", &b.Name),
		requiredJSON("value", &b.Value),
		requiredDateTime("timestamp", &b.Timestamp),
	}
}

func (b *PropertyReadings) fields() []field {
	return []field{requiredObject("data", &b.Data), requiredDateTime("timestamp", &b.Timestamp)}
}

func (b *WriteProperty) fields() []field {
	return []field{requiredString("name", &b.Name), requiredJSON("data", &b.Data)}
}

func (b *WriteMultipleProperties) fields() []field {
	return []field{requiredObject("data", &b.Data)}
}

func (b *ObserveProperty) fields() []field {
	return []field{requiredString("name", &b.Name)}
}

func (b *UnobserveProperty) fields() []field {
	return []field{requiredString("name", &b.Name)}
}

func (b *Event) fields() []field {
	return []field{
		requiredString("event", &b.Event),
		requiredJSON("data", &b.Data),
		requiredDateTime("timestamp", &b.Timestamp),
	}
}

func (b *Error) fields() []field {
	return []field{
		requiredURIReference("type", &b.TypeURI),
		requiredString("title", &b.Title),
		requiredString("status", &b.Status),
		requiredString("detail", &b.Detail),
		requiredURIReference("instance", &b.Instance),
	}
}
