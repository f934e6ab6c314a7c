package target

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const weatherInput = `{"question": "Will it rain in Bonn tomorrow?", "interactionMode": "text"}`

func TestSchemaValidate(t *testing.T) {
	weather := string(mustParse(t, readFile(t, corpusLMOS+"weather-agent.json")).Actions["getWeather"].Input.Raw())
	tests := []struct {
		name, schema, value string
		want                []Problem // nil: valid
	}{
		{"weather input", weather, weatherInput, nil},
		{"weather input, extra member", weather, `{"question": "q", "interactionMode": "voice", "city": "Bonn"}`, nil},
		{"weather input, wrong", weather, `{"question": 5, "interactionMode": "smoke signals"}`, []Problem{
			{"/interactionMode", "value must be one of 'text', 'voice'"},
			{"/question", "got number, want string"},
		}},
		{"weather input, missing", weather, `{}`, []Problem{
			{"", "missing properties 'question', 'interactionMode'"},
		}},
		{"weather input, not an object", weather, `"rain?"`, []Problem{{"", "got string, want object"}}},
		{"pointer escapes", `{"properties": {"a/b": {"type": "integer"}, "c~d": {"type": "integer"}}}`, `{"a/b": 1.5, "c~d": "x"}`, []Problem{
			{"/a~1b", "got number, want integer"},
			{"/c~0d", "got string, want integer"},
		}},
		{"array items", `{"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 2}`, `["ok", "long", 3]`, []Problem{
			{"", "maxItems: got 3, want 2"},
			{"/1", "maxLength: got 4, want 3"},
			{"/2", "got number, want string"},
		}},
		{"nested", `{"properties": {"a": {"properties": {"b": {"minimum": 10}}}}}`, `{"a": {"b": 9}}`, []Problem{{"/a/b", "minimum: got 9, want 10"}}},
		{"oneOf lists each alternative", `{"oneOf": [{"type": "string"}, {"type": "integer"}]}`, `true`, []Problem{
			{"", "got boolean, want integer"},
			{"", "got boolean, want string"},
		}},
		{"exclusive bounds are numbers", `{"exclusiveMinimum": 0, "exclusiveMaximum": 1}`, `1`, []Problem{{"", "exclusiveMaximum: got 1, want 1"}}},
		{"large integers keep their precision", `{"const": 12345678901234567891}`, `12345678901234567890`, []Problem{{"", "value must be 12345678901234567891"}}},
		{"large integers equal", `{"const": 12345678901234567891}`, `12345678901234567891`, nil},
		{"integer written with a fraction", `{"type": "integer"}`, `2.0`, nil},
		{"format is an annotation", `{"type": "string", "format": "email"}`, `"not an email"`, nil},
		{"nested format is an annotation", `{"items": {"format": "date-time"}}`, `["yesterday"]`, nil},
		{"a property named format is checked", `{"properties": {"format": {"type": "string"}}}`, `{"format": 5}`, []Problem{{"/format", "got number, want string"}}},
		{"const data stays as written", `{"const": {"format": "x"}}`, `{"format": "x"}`, nil},
		{"const data stays as written, other value", `{"const": {"format": "x"}}`, `{"format": "y"}`, []Problem{{"", "'const' failed"}}},
		{"$schema does not switch the draft", `{"$schema": "https://json-schema.org/draft/2020-12/schema", "items": [{"type": "string"}]}`, `["a", 1]`, nil},
		{"local $ref", `{"definitions": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/n"}}}`, `{"x": "1"}`, []Problem{{"/x", "got string, want integer"}}},
		{"TD terms are ignored", `{"@type": "saref:Brightness", "unit": "percent", "title": "T", "titles": {"de": "T"}, "readOnly": true, "type": "integer"}`, `3`, nil},
		{"not JSON", `{}`, `{"a": `, []Problem{{"", "not JSON: invalid JSON at line 1, column 7 (byte 6): unexpected end of JSON input"}}},
		{"empty schema", `{}`, `[1, {"a": null}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newSchema([]byte(tt.schema)).Validate(json.RawMessage(tt.value))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var serr *SchemaError
			if !errors.As(err, &serr) {
				t.Fatalf("Validate = %v, want a *SchemaError", err)
			}
			if !reflect.DeepEqual(serr.Problems, tt.want) {
				t.Errorf("Problems = %q\nwant       %q", serr.Problems, tt.want)
			}
			if errors.Is(err, ErrBadSchema) {
				t.Error("an invalid value is reported as a bad schema")
			}
		})
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	err := &SchemaError{Problems: []Problem{{"", "missing property 'question'"}, {"/mode", "got number, want string"}}}
	want := "the value does not match the data schema: (value): missing property 'question'; /mode: got number, want string"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestSchemaThatCannotCompile(t *testing.T) {
	tests := []struct {
		name, schema, detail string
	}{
		{"bad pattern", `{"type": "string", "pattern": "("}`, "/pattern: '(' is not valid regex"},
		{"unknown type", `{"type": "text"}`, "/type:"},
		{"boolean exclusiveMinimum", `{"minimum": 0, "exclusiveMinimum": true}`, "/exclusiveMinimum: got boolean, want number"},
		{"not a schema", `5`, "got number, want"},
		{"relative $ref", `{"$ref": "other.json"}`, "is not fetched"},
		{"missing local $ref", `{"$ref": "#/definitions/none"}`, "definitions/none"},
		{"$ref cycle", `{"definitions": {"a": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"}`, "a $ref leads back to #/definitions/a in a cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchema([]byte(tt.schema))
			for range 2 { // the second use gets the error without compiling again
				err := s.Validate(json.RawMessage(`"value"`))
				if !errors.Is(err, ErrBadSchema) {
					t.Fatalf("Validate = %v, want ErrBadSchema", err)
				}
				var serr *SchemaError
				if errors.As(err, &serr) {
					t.Errorf("a bad schema is reported as an invalid value: %v", err)
				}
				if !strings.Contains(err.Error(), tt.detail) || strings.Contains(err.Error(), "\n") {
					t.Errorf("Validate = %q, want one line with %q", err, tt.detail)
				}
			}
		})
	}
}

func TestSchemaNeverFetches(t *testing.T) {
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type": "string"}`))
	}))
	defer server.Close()
	for _, schema := range []string{
		`{"$ref": "` + server.URL + `/schema.json"}`,
		`{"properties": {"a": {"$ref": "` + server.URL + `/schema.json#/x"}}}`,
		`{"$schema": "` + server.URL + `/meta.json", "type": "string"}`,
		`{"$id": "` + server.URL + `/base/", "$ref": "schema.json"}`,
	} {
		err := newSchema([]byte(schema)).Validate(json.RawMessage(`"x"`))
		if err != nil && !errors.Is(err, ErrBadSchema) {
			t.Errorf("%s: Validate = %v, want nil or ErrBadSchema", schema, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the schema server got %d requests, want none", n)
	}
}

func TestNilSchema(t *testing.T) {
	var s *Schema
	for _, value := range []string{`null`, `{"any": "thing"}`, `not even JSON`} {
		if err := s.Validate(json.RawMessage(value)); err != nil {
			t.Errorf("nil Schema: Validate(%s) = %v", value, err)
		}
	}
	if s.Raw() != nil {
		t.Errorf("nil Schema: Raw() = %s", s.Raw())
	}
}

// TestSchemaConcurrentUse has many goroutines use one schema from its first use on, so
// that the race detector sees the compilation and the validations overlap.
func TestSchemaConcurrentUse(t *testing.T) {
	const goroutines = 64
	thing := mustParse(t, readFile(t, corpusLMOS+"weather-agent.json"))
	good := newSchema(thing.Actions["getWeather"].Input.Raw())
	bad := newSchema([]byte(`{"pattern": "("}`))
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := range goroutines {
		wg.Go(func() {
			for range 20 {
				if err := good.Validate(json.RawMessage(weatherInput)); err != nil {
					errs <- err
					return
				}
				var serr *SchemaError
				if err := good.Validate(json.RawMessage(`{"question": 1}`)); !errors.As(err, &serr) || len(serr.Problems) != 2 {
					errs <- err
					return
				}
				if i%2 == 0 {
					if err := bad.Validate(json.RawMessage(`"x"`)); !errors.Is(err, ErrBadSchema) {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Validate: %v", err)
	}
}
