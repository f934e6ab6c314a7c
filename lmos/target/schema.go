package target

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lmosdir/lmosdir/td"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ErrBadSchema is wrapped by the error of validating against a data schema that cannot be
// compiled: the TD is at fault, not the value.
var ErrBadSchema = errors.New("the data schema cannot be compiled")

// Schema is a TD DataSchema, compiled to a JSON Schema on first use, so that parsing a TD
// with many affordances stays cheap. Safe for concurrent use.
type Schema struct {
	raw json.RawMessage

	once     sync.Once
	compiled *jsonschema.Schema
	err      error // wraps ErrBadSchema
}

func newSchema(raw []byte) *Schema {
	// The Thing outlives the document; the caller may reuse the document's buffer.
	return &Schema{raw: bytes.Clone(raw)}
}

// Raw is the schema as written in the TD. It must not be modified.
func (s *Schema) Raw() json.RawMessage {
	if s == nil {
		return nil
	}
	return s.raw
}

// Validate checks a JSON value against the schema. A nil *Schema accepts everything.
// An invalid value gives a *SchemaError; a schema that cannot be compiled gives an error
// wrapping ErrBadSchema.
func (s *Schema) Validate(value json.RawMessage) error {
	if s == nil {
		return nil
	}
	s.once.Do(s.compile)
	if s.err != nil {
		return s.err
	}
	// Like jsonschema.UnmarshalJSON, td.DecodeJSON keeps numbers as json.Number, so large
	// integers keep their precision; it takes about a third of the time, and this runs for
	// every relayed message.
	v, err := td.DecodeJSON(value)
	if err != nil {
		return &SchemaError{Problems: []Problem{{Message: "not JSON: " + err.Error()}}}
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return badSchema(err)
	}
	if cycle := refCycle(verr); cycle != nil {
		// $refs that lead back to where they started fail whatever the value.
		return fmt.Errorf("%w: a $ref leads back to %s in a cycle", ErrBadSchema, strings.TrimPrefix(cycle.URL, schemaURL))
	}
	return &SchemaError{Problems: problems(verr)}
}

// refCycle returns the reference cycle among the causes of a failed validation, if any.
func refCycle(verr *jsonschema.ValidationError) *kind.RefCycle {
	if cycle, ok := verr.ErrorKind.(*kind.RefCycle); ok {
		return cycle
	}
	for _, cause := range verr.Causes {
		if cycle := refCycle(cause); cycle != nil {
			return cycle
		}
	}
	return nil
}

// schemaURL is the name the schema is compiled under. The .invalid host (RFC 2606) can
// never be fetched; a relative $ref resolves against it and is refused by the loader.
const schemaURL = "https://lmosdir.invalid/data-schema.json"

func (s *Schema) compile() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.raw))
	if err != nil {
		s.err = badSchema(err)
		return
	}
	dropAssertionsBesideDataSchema(doc)
	c := jsonschema.NewCompiler()
	// TD 1.1 DataSchema is defined after JSON Schema draft-07.
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(offline{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		s.err = badSchema(err)
		return
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		s.err = badSchema(err)
		return
	}
	s.compiled = compiled
}

// badSchema wraps a compile error in ErrBadSchema. A schema the draft-07 metaschema
// refuses is told on one line, by pointers into the schema, like the problems of a value.
func badSchema(err error) error {
	var invalid *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &invalid) && errors.As(invalid.Err, &verr) {
		return fmt.Errorf("%w: %s", ErrBadSchema, (&SchemaError{Problems: problems(verr)}).list())
	}
	return fmt.Errorf("%w: %w", ErrBadSchema, err)
}

// offline refuses every URL: the gateway must not reach out to the network, or read
// files, because a TD names a schema by URL.
type offline struct{}

func (offline) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s is not fetched: a data schema may refer only to itself", u)
}

// dropAssertionsBesideDataSchema removes, from the schema and its subschemas, the keywords
// by which the validator would assert more than the gateway means to:
//   - "format": JSON Schema leaves asserting it to the implementation, and v6 asserts it
//     for draft-07. The gateway keeps it an annotation, so that no message is refused for a
//     format the Thing may read more loosely than the validator ("uri", "date-time", ...).
//   - "$schema" would switch the schema to another draft than the one TD 1.1 builds on.
//
// It walks only keywords whose values are schemas, so a data member of that name (a
// property called "format", or a "const" object) stays as written.
func dropAssertionsBesideDataSchema(v any) {
	schema, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(schema, "format")
	delete(schema, "$schema")
	for keyword, value := range schema {
		switch keyword {
		case "items", "additionalItems", "contains", "additionalProperties", "propertyNames",
			"not", "if", "then", "else", "allOf", "anyOf", "oneOf":
			// A schema, or an array of schemas.
			if list, ok := value.([]any); ok {
				for _, sub := range list {
					dropAssertionsBesideDataSchema(sub)
				}
			} else {
				dropAssertionsBesideDataSchema(value)
			}
		case "properties", "patternProperties", "definitions", "$defs", "dependencies":
			// Schemas by name; a dependency may be a list of names instead, which is left alone.
			byName, _ := value.(map[string]any)
			for _, sub := range byName {
				dropAssertionsBesideDataSchema(sub)
			}
		}
	}
}

// SchemaError is a value that does not match its data schema.
type SchemaError struct{ Problems []Problem }

// Problem is one way a value does not match its data schema.
type Problem struct {
	Pointer string // JSON Pointer (RFC 6901) into the value, "" for the value itself
	Message string
}

func (e *SchemaError) Error() string {
	return "the value does not match the data schema: " + e.list()
}

// list gives each problem as "<pointer>: <message>", joined with "; ".
func (e *SchemaError) list() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Pointer == "" {
			b.WriteString("(value)")
		} else {
			b.WriteString(p.Pointer)
		}
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// problems lists the innermost failures of a validation: an outer one ("oneOf failed")
// only sums up the inner ones. They come sorted by pointer because the validator visits
// object members in map order.
func problems(verr *jsonschema.ValidationError) []Problem {
	var list []Problem
	var collect func(u *jsonschema.OutputUnit)
	collect = func(u *jsonschema.OutputUnit) {
		if len(u.Errors) == 0 {
			p := Problem{Pointer: u.InstanceLocation}
			if u.Error != nil {
				p.Message = u.Error.String()
			}
			list = append(list, p)
			return
		}
		for i := range u.Errors {
			collect(&u.Errors[i])
		}
	}
	collect(verr.DetailedOutput())
	slices.SortFunc(list, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(list)
}
