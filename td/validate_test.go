package td

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func newTestValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type manifestEntry struct {
	File        string `json:"file"`
	Expect      string `json:"expect"`
	Schema      string `json:"schema"`
	SchemaValid bool   `json:"schema_valid"`
	Note        string `json:"note"`
}

func readManifest(t *testing.T) []manifestEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m []manifestEntry
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("empty manifest")
	}
	return m
}

// TestCorpus gives every third-party document of the manifest its expected
// verdict.
func TestCorpus(t *testing.T) {
	v := newTestValidator(t)
	for _, e := range readManifest(t) {
		t.Run(e.File, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata/corpus", e.File))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := v.Validate(raw)
			var ve *ValidationError
			errors.As(err, &ve)
			switch e.Expect {
			case "valid", "ambiguous":
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if doc == nil {
					t.Fatal("accepted without returning the document")
				}
			case "invalid":
				if e.File == "invalid/playground/usingTM.json" {
					// The only fault is that "status" contradicts the remote
					// Thing Model its rel="type" link names; seeing that needs
					// fetching the model, which an offline validator never does.
					if err != nil {
						t.Fatalf("rejected: %v", err)
					}
					return
				}
				if ve == nil || ve.ThingModel {
					t.Fatalf("got %#v, want a *ValidationError for a TD", err)
				}
			case "tm-valid", "tm-invalid":
				if !json.Valid(raw) {
					var se *SyntaxError
					if !errors.As(err, &se) {
						t.Fatalf("malformed JSON gave %v, want *SyntaxError", err)
					}
					return
				}
				if ve == nil || !ve.ThingModel {
					t.Fatalf("got %v, want a *ValidationError with ThingModel", err)
				}
			case "lmos-example":
				if strings.HasSuffix(e.File, "weather-agent.json") {
					if err != nil {
						t.Fatalf("rejected: %v", err)
					}
					return
				}
				if ve == nil || ve.ThingModel {
					t.Fatalf("got %v, want a *ValidationError for a TD", err)
				}
				if !slices.ContainsFunc(ve.Problems, func(p Problem) bool {
					return strings.Contains(p.Description, "securityDefinitions") && strings.Contains(p.Description, "nosec")
				}) {
					t.Errorf("no problem tells how to add securityDefinitions with nosec: %v", ve.Problems)
				}
			default:
				t.Fatalf("unknown verdict %q", e.Expect)
			}
			if ve != nil && len(ve.Problems) == 0 {
				t.Error("ValidationError without problems")
			}
		})
	}
}

// TestCorpusSchemaVerdicts checks the bundled TD 1.1 schema, compiled
// offline with format assertions, against the manifest's record of which
// documents pass the W3C schema.
func TestCorpusSchemaVerdicts(t *testing.T) {
	v := newTestValidator(t)
	checked := 0
	for _, e := range readManifest(t) {
		if e.Schema != "td-json-schema-validation.json" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("testdata/corpus", e.File))
		if err != nil {
			t.Fatal(err)
		}
		doc, _, err := decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", e.File, err)
		}
		if got := v.td11.Validate(doc) == nil; got != e.SchemaValid {
			t.Errorf("%s: TD 1.1 schema says valid=%v, manifest says %v", e.File, got, e.SchemaValid)
		}
		checked++
	}
	if checked < 150 {
		t.Errorf("only %d documents checked", checked)
	}
}

// Every fixture file is listed in the manifest, so none goes untested.
func TestCorpusFilesAreInManifest(t *testing.T) {
	listed := map[string]bool{}
	for _, e := range readManifest(t) {
		listed[e.File] = true
	}
	err := filepath.WalkDir("testdata/corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("testdata/corpus", path)
		if rel != "manifest.json" && rel != "SOURCES.md" && !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s is not in the manifest", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

const okSecurity = `"securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":"nosec_sc"`

// td builds a minimal valid TD 1.1 with extra members appended.
func td(extra string) string {
	s := `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp",` + okSecurity
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func problemsOf(t *testing.T, v *Validator, in string) *ValidationError {
	t.Helper()
	doc, err := v.Validate([]byte(in))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want *ValidationError for %s", err, in)
	}
	if doc != nil {
		t.Error("got a document with the error")
	}
	return ve
}

func TestValidReturnsDocument(t *testing.T) {
	v := newTestValidator(t)
	doc, err := v.Validate([]byte(td(`"properties":{"level":{"type":"number","maximum":1.50,"forms":[{"href":"/level"}]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if doc["title"] != "Lamp" {
		t.Errorf("title = %v", doc["title"])
	}
	maximum := doc["properties"].(map[string]any)["level"].(map[string]any)["maximum"]
	if maximum != json.Number("1.50") {
		t.Errorf("maximum = %#v, want json.Number(\"1.50\") as written", maximum)
	}
}

func TestRootMustBeObject(t *testing.T) {
	v := newTestValidator(t)
	for in, what := range map[string]string{`[]`: "an array", `"td"`: "a string", `42`: "a number", `null`: "null", `true`: "a boolean"} {
		ve := problemsOf(t, v, in)
		want := []Problem{{"$", "a Thing Description must be a JSON object, not " + what}}
		if !reflect.DeepEqual(ve.Problems, want) || ve.ThingModel {
			t.Errorf("%s: got %+v", in, ve)
		}
	}
}

func TestDuplicatesRejected(t *testing.T) {
	v := newTestValidator(t)
	ve := problemsOf(t, v, td(`"properties":{"on":{"type":"boolean","forms":[{"href":"/on","href":"/off"}]}}`))
	want := []Problem{{"$.properties.on.forms[0]", dupText("href")}}
	if !reflect.DeepEqual(ve.Problems, want) {
		t.Errorf("got %+v, want %+v", ve.Problems, want)
	}
}

func TestThingModelDeclared(t *testing.T) {
	v := newTestValidator(t)
	want := []Problem{{"$['@type']", "this document is a Thing Model (@type tm:ThingModel), not a Thing Description; register a TD instantiated from it"}}
	for _, typ := range []string{`"tm:ThingModel"`, `["Thing","tm:ThingModel"]`, `"https://www.w3.org/2019/wot/td#ThingModel"`} {
		// Schema-valid otherwise, with a duplicate: the TM verdict alone is reported.
		ve := problemsOf(t, v, td(`"@type":`+typ+`,"a":1,"a":2`))
		if !ve.ThingModel || !reflect.DeepEqual(ve.Problems, want) {
			t.Errorf("@type %s: got %+v", typ, ve)
		}
	}
}

func TestThingModelTraits(t *testing.T) {
	v := newTestValidator(t)
	const noSecurity = `{"@context":["https://www.w3.org/2022/wot/td/v1.1"],"title":"Lamp",`
	tests := []struct {
		name, in, field string
	}{
		{"tm:optional", noSecurity + `"@type":"Thing","tm:optional":["#/actions/toggle"]}`, "$['tm:optional']"},
		{"tm:ref in an affordance", noSecurity + `"@type":"Thing","properties":{"p":{"tm:ref":"x.tm.json#/properties/p","forms":[{"href":"/p"}]}}}`, "$.properties.p['tm:ref']"},
		{"placeholder", noSecurity + `"@type":"Thing","base":"http://{{HOST}}/"}`, "$.base"},
		{"tm:extends link", noSecurity + `"@type":"Thing","links":[{"rel":"tm:extends","href":"base.tm.json"}]}`, "$.links[0].rel"},
		{"no type, forms or security", noSecurity + `"id":"urn:x"}`, "$['@type']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ve := problemsOf(t, v, tt.in)
			if !ve.ThingModel {
				t.Fatalf("not recognized as a Thing Model: %v", ve)
			}
			if !slices.ContainsFunc(ve.Problems, func(p Problem) bool {
				return p.Field == tt.field && strings.Contains(p.Description, "Thing Model")
			}) {
				t.Errorf("no Thing Model problem at %s: %+v", tt.field, ve.Problems)
			}
		})
	}

	// The same traits in a document that passes the TD schema do not make it a TM.
	for _, in := range []string{
		td(`"description":"templates look like {{NAME}}"`),
		td(`"tm:optional":["#/actions/toggle"]`),
	} {
		if _, err := v.Validate([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	// A TD missing security but saying what it is (here lmos:Agent) is a TD
	// with a problem, not a Thing Model.
	ve := problemsOf(t, v, noSecurity+`"@type":"lmos:Agent"}`)
	if ve.ThingModel {
		t.Errorf("typed TD without security taken for a Thing Model: %+v", ve.Problems)
	}
}

func TestSecurityNamesDefined(t *testing.T) {
	v := newTestValidator(t)
	const defs = `"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"basic_sc":{"scheme":"basic"},"nosec_sc":{"scheme":"nosec"}}`
	undefined := func(name string) string {
		return `security scheme "` + name + `" is not defined in "securityDefinitions"; define it there or use one of "basic_sc" or "nosec_sc"`
	}
	form := func(sec string) string { return `"forms":[{"href":"/x","security":` + sec + `}]` }
	tests := []struct {
		name string
		in   string
		want []Problem
	}{
		{"all defined", `{` + defs + `,"security":["basic_sc","nosec_sc"],"properties":{"p":{` + form(`"basic_sc"`) + `}}}`, nil},
		{"root string", `{` + defs + `,"security":"oauth_sc"}`, []Problem{{"$.security", undefined("oauth_sc")}}},
		{"root array", `{` + defs + `,"security":["basic_sc","oauth_sc"]}`, []Problem{{"$.security[1]", undefined("oauth_sc")}}},
		{"property form", `{` + defs + `,"security":"basic_sc","properties":{"lmos:p":{` + form(`"x"`) + `}}}`, []Problem{{"$.properties['lmos:p'].forms[0].security", undefined("x")}}},
		{"action form", `{` + defs + `,"security":"basic_sc","actions":{"a":{` + form(`["nosec_sc","x"]`) + `}}}`, []Problem{{"$.actions.a.forms[0].security[1]", undefined("x")}}},
		{"event form", `{` + defs + `,"security":"basic_sc","events":{"e":{` + form(`"x"`) + `}}}`, []Problem{{"$.events.e.forms[0].security", undefined("x")}}},
		{"root form", `{` + defs + `,"security":"basic_sc","forms":[{"href":"/all","op":"readallproperties","security":"x"}]}`, []Problem{{"$.forms[0].security", undefined("x")}}},
		{"combo oneOf", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","security":"combo_sc","securityDefinitions":{"combo_sc":{"scheme":"combo","oneOf":["basic_sc","bearer_sc"]},"basic_sc":{"scheme":"basic"}}}`,
			[]Problem{{"$.securityDefinitions.combo_sc.oneOf[1]", `security scheme "bearer_sc" is not defined in "securityDefinitions"; define it there or use one of "basic_sc" or "combo_sc"`}}},
		{"combo allOf", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","security":"combo_sc","securityDefinitions":{"combo_sc":{"scheme":"combo","allOf":["a","b"]}}}`,
			[]Problem{
				{"$.securityDefinitions.combo_sc.allOf[0]", `security scheme "a" is not defined in "securityDefinitions"; define it there or use one of "combo_sc"`},
				{"$.securityDefinitions.combo_sc.allOf[1]", `security scheme "b" is not defined in "securityDefinitions"; define it there or use one of "combo_sc"`},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Validate([]byte(tt.in))
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ve := problemsOf(t, v, tt.in)
			if !reflect.DeepEqual(ve.Problems, tt.want) {
				t.Errorf("got  %+v\nwant %+v", ve.Problems, tt.want)
			}
		})
	}
}

func TestOneTypeLink(t *testing.T) {
	v := newTestValidator(t)
	link := `{"rel":"type","href":"https://example.com/lamp.tm.jsonld","type":"application/tm+json"}`
	if _, err := v.Validate([]byte(td(`"links":[` + link + `,{"rel":"icon","href":"i.png"}]`))); err != nil {
		t.Fatalf("one type link rejected: %v", err)
	}
	ve := problemsOf(t, v, td(`"links":[`+link+`,{"rel":"icon","href":"i.png"},`+link+`]`))
	want := []Problem{{"$.links[2].rel", `only one link may have "rel": "type" (the Thing Model this TD is an instance of), and links[0] already has it; remove this link or change its "rel"`}}
	if !reflect.DeepEqual(ve.Problems, want) {
		t.Errorf("got %+v", ve.Problems)
	}
}

// A TD whose context names only TD 1.0 is checked against the TD 1.0 schema,
// which differs from 1.1 in both directions.
func TestSchemaVersionByContext(t *testing.T) {
	v := newTestValidator(t)
	const (
		ctx10   = `"https://www.w3.org/2019/wot/td/v1"`
		ctx11   = `"https://www.w3.org/2022/wot/td/v1.1"`
		ctxBoth = `["https://www.w3.org/2019/wot/td/v1","https://www.w3.org/2022/wot/td/v1.1"]`
	)
	doc := func(ctx, affordances string) string {
		return `{"@context":` + ctx + `,"title":"Lamp",` + okSecurity + `,` + affordances + `}`
	}
	// TD 1.1 added queryaction; TD 1.0 allows only invokeaction on actions.
	query := `"actions":{"toggle":{"forms":[{"href":"/toggle","op":"queryaction"}]}}`
	// TD 1.1 requires a response to name its contentType; TD 1.0 does not.
	response := `"properties":{"on":{"forms":[{"href":"/on","response":{}}]}}`

	for _, tt := range []struct {
		name, in string
		field    string // "" for valid
	}{
		{"1.0 rejects queryaction", doc(ctx10, query), "$.actions.toggle.forms[0].op"},
		{"1.1 accepts queryaction", doc(ctx11, query), ""},
		{"1.0 and 1.1 context is 1.1", doc(ctxBoth, query), ""},
		{"1.0 accepts a response without contentType", doc(ctx10, response), ""},
		{"1.1 rejects a response without contentType", doc(ctx11, response), "$.properties.on.forms[0].response.contentType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Validate([]byte(tt.in))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ve := problemsOf(t, v, tt.in)
			if len(ve.Problems) != 1 || ve.Problems[0].Field != tt.field {
				t.Errorf("got %+v, want one problem at %s", ve.Problems, tt.field)
			}
		})
	}
}

func TestRegistrationSchema(t *testing.T) {
	v := newTestValidator(t)
	if _, err := v.Validate([]byte(td(`"registration":{"ttl":60,"created":"2025-01-31T12:00:00Z","expires":"2025-01-31T12:01:00Z"}`))); err != nil {
		t.Fatalf("valid registration rejected: %v", err)
	}
	tests := []struct {
		in   string
		want Problem
	}{
		{`"registration":{"ttl":"x"}`, Problem{"$.registration.ttl", `"ttl" must be a number, not a string`}},
		{`"registration":{"created":"yesterday"}`, Problem{"$.registration.created", `"created" must be an RFC 3339 date-time such as "2025-01-31T12:00:00Z" (got "yesterday")`}},
		{`"registration":[]`, Problem{"$.registration", `"registration" must be an object, not an array`}},
	}
	for _, tt := range tests {
		ve := problemsOf(t, v, td(tt.in))
		if !reflect.DeepEqual(ve.Problems, []Problem{tt.want}) {
			t.Errorf("%s: got %+v, want %+v", tt.in, ve.Problems, tt.want)
		}
	}
}

// TestProblemDescriptions pins the wording of the common mistakes: one
// precise problem each, at the member's path, no oneOf/anyOf dumps.
func TestProblemDescriptions(t *testing.T) {
	v := newTestValidator(t)
	nosec := `add "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}} and "security": "nosec_sc" (or your real security scheme)`
	tests := []struct {
		name string
		in   string
		want []Problem
	}{
		{"missing security and definitions", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","@type":"lmos:Agent","title":"Agent"}`, []Problem{
			{"$.security", `missing "security": ` + nosec},
			{"$.securityDefinitions", `missing "securityDefinitions": ` + nosec},
		}},
		{"missing security only", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"basic_sc":{"scheme":"basic"}}}`, []Problem{
			{"$.security", `missing "security": add "security": "basic_sc" to apply a scheme defined in "securityDefinitions" (defined: "basic_sc")`},
		}},
		{"missing definitions only", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","security":["basic_sc"]}`, []Problem{
			{"$.securityDefinitions", `missing "securityDefinitions": define the scheme named by "security", e.g. "securityDefinitions": {"basic_sc": {"scheme": "nosec"}} (or your real security scheme)`},
		}},
		{"missing title", `{"@context":"https://www.w3.org/2022/wot/td/v1.1",` + okSecurity + `}`, []Problem{
			{"$.title", `missing "title": add a human-readable "title" for the Thing, e.g. "title": "Weather Agent"`},
		}},
		{"missing context", `{"title":"Lamp",` + okSecurity + `}`, []Problem{
			{"$['@context']", `missing "@context": add "@context": "https://www.w3.org/2022/wot/td/v1.1"`},
		}},
		{"wrong context", `{"@context":"https://example.com/td","title":"Lamp",` + okSecurity + `}`, []Problem{
			{"$['@context']", `"@context" must be "https://www.w3.org/2022/wot/td/v1.1", or an array that starts with it (optionally preceded by the TD 1.0 URL "https://www.w3.org/2019/wot/td/v1") followed by other context URLs or objects`},
		}},
		{"missing forms", td(`"actions":{"lmos:chat":{}}`), []Problem{
			{"$.actions['lmos:chat'].forms", `missing "forms": every property, action and event needs at least one form saying how to reach it, e.g. "forms": [{"href": "https://example.com/things/1/actions/lmos:chat"}]`},
		}},
		{"missing href", td(`"properties":{"status":{"forms":[{"op":"readproperty"}]}}`), []Problem{
			{"$.properties.status.forms[0].href", `missing "href": every form and link needs the URL of its target in "href"`},
		}},
		{"op of another affordance", td(`"properties":{"status":{"forms":[{"href":"/s","op":"invokeaction"}]}}`), []Problem{
			{"$.properties.status.forms[0].op", `"op" must be one of "readproperty", "writeproperty", "observeproperty" or "unobserveproperty" (got "invokeaction")`},
		}},
		{"op array item", td(`"events":{"e":{"forms":[{"href":"/e","op":["subscribeevent","subscribe"]}]}}`), []Problem{
			{"$.events.e.forms[0].op[1]", `item 1 of "op" must be one of "subscribeevent" or "unsubscribeevent" (got "subscribe")`},
		}},
		{"wrong type", td(`"properties":[]`), []Problem{
			{"$.properties", `"properties" must be an object, not an array`},
		}},
		{"security of wrong type", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"nosec_sc":{"scheme":"nosec"}},"security":5}`, []Problem{
			{"$.security", `"security" must be a string or an array, not a number`},
		}},
		{"unknown scheme", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"s":{"scheme":"token"}},"security":"s"}`, []Problem{
			{"$.securityDefinitions.s.scheme", `"scheme" must be one of "nosec", "auto", "combo", "basic", "digest", "apikey", "bearer", "psk", "oauth2" or a string matching the pattern ".+:.*" (got "token")`},
		}},
		{"bad member of a known scheme", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"s":{"scheme":"basic","in":"url"}},"security":"s"}`, []Problem{
			{"$.securityDefinitions.s.in", `"in" must be one of "header", "query", "body", "cookie" or "auto" (got "url")`},
		}},
		{"combo without members", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"c":{"scheme":"combo"}},"security":"c"}`, []Problem{
			{"$.securityDefinitions.c", `"c" must have "oneOf" or "allOf"`},
		}},
		{"combo with both oneOf and allOf", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"c":{"scheme":"combo","oneOf":["b","n"],"allOf":["b","n"]},"b":{"scheme":"basic"},"n":{"scheme":"nosec"}},"security":"c"}`, []Problem{
			{"$.securityDefinitions.c", `"c" matches more than one of the shapes the TD schema allows for it; make it match exactly one`},
		}},
		{"basic link with sizes", td(`"links":[{"rel":"alternate","href":"/x","sizes":"16x16"}]`), []Problem{
			{"$.links[0]", `item 0 of "links" breaks a rule of the TD schema: a basic link element should not contain sizes`},
		}},
		{"auto scheme with name", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{"a":{"scheme":"auto","name":"token"}},"security":"a"}`, []Problem{
			{"$.securityDefinitions.a", `"a" must not have "name"`},
		}},
		{"empty enum and repeated items", td(`"properties":{"p":{"enum":[],"forms":[{"href":"/p"}]},"q":{"enum":[1,2,1],"forms":[{"href":"/q"}]}}`), []Problem{
			{"$.properties.p.enum", `"enum" must have at least 1 item (it has 0)`},
			{"$.properties.q.enum", `"enum" must not repeat items: items 0 and 2 are equal`},
		}},
		{"negative minItems and zero multipleOf", td(`"properties":{"p":{"type":"array","minItems":-1,"forms":[{"href":"/p"}]},"q":{"type":"number","multipleOf":0,"forms":[{"href":"/q"}]}}`), []Problem{
			{"$.properties.p.minItems", `"minItems" must be at least 0 (got -1)`},
			{"$.properties.q.multipleOf", `"multipleOf" must be greater than 0 (got 0)`},
		}},
		{"empty securityDefinitions", `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"Lamp","securityDefinitions":{},"security":"nosec_sc"}`, []Problem{
			{"$.security", `security scheme "nosec_sc" is not defined in "securityDefinitions"; define it there`},
			{"$.securityDefinitions", `"securityDefinitions" must have at least 1 member (it has 0)`},
		}},
		{"icon link sizes", td(`"links":[{"rel":"icon","href":"i.png","sizes":"big"}]`), []Problem{
			{"$.links[0].sizes", `"sizes" must be a string matching the pattern "[0-9]*x[0-9]+" (got "big")`},
		}},
		{"language tag", td(`"links":[{"rel":"alternate","href":"/de","hreflang":"de_DE"}]`), []Problem{
			{"$.links[0].hreflang", `"hreflang" must be a BCP 47 language tag such as "en" or "de-CH" (got "de_DE")`},
		}},
		{"id not a URI", td(`"id":"lamp 1"`), []Problem{
			{"$.id", `"id" must be an absolute URI such as "urn:uuid:0b6b4e0e-7f7c-4c36-9f8a-1d2e3f4a5b6c" or "https://example.com/things/1" (got "lamp 1")`},
		}},
		{"nested tm:ThingModel type", td(`"properties":{"p":{"@type":["tm:ThingModel"],"forms":[{"href":"/p"}]}}`), []Problem{
			{"$.properties.p['@type'][0]", `item 0 of "@type" must not be "tm:ThingModel"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ve := problemsOf(t, v, tt.in)
			if ve.ThingModel {
				t.Error("taken for a Thing Model")
			}
			if !reflect.DeepEqual(ve.Problems, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", listProblems(ve.Problems), listProblems(tt.want))
			}
		})
	}
}

func listProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s: %s\n", p.Field, p.Description)
	}
	return b.String()
}

// Problems from decoding, the schemas and the extra checks come out sorted
// by field then description, the same on every run despite map iteration.
func TestProblemsSortedAndStable(t *testing.T) {
	v := newTestValidator(t)
	in := `{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":5,"title":6,
		"securityDefinitions":{"b":{"scheme":"basic"}},"security":["x","b","y"],
		"properties":{"z":{"forms":[{"href":"/z","security":"q"}]},"a":{"forms":[]}},
		"links":[{"rel":"type","href":"/a"},{"rel":"type","href":"/b"}],
		"registration":{"ttl":"long"}}`
	first := problemsOf(t, v, in).Problems
	if len(first) != 8 {
		t.Errorf("got %d problems, want 8:\n%s", len(first), listProblems(first))
	}
	if !slices.IsSortedFunc(first, func(a, b Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Description, b.Description)
	}) {
		t.Errorf("not sorted:\n%s", listProblems(first))
	}
	for range 20 {
		if again := problemsOf(t, v, in).Problems; !reflect.DeepEqual(again, first) {
			t.Fatalf("order changed:\n%s\nthen\n%s", listProblems(first), listProblems(again))
		}
	}
}

func TestValidationErrorString(t *testing.T) {
	e := &ValidationError{Problems: []Problem{{"$.a", "x"}, {"$.b", "y"}, {"$.c", "z"}, {"$.d", "w"}, {"$.e", "v"}}}
	want := "invalid Thing Description (5 problems): $.a: x; $.b: y; $.c: z; and 2 more"
	if e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	tm := &ValidationError{ThingModel: true, Problems: []Problem{{"$['@type']", "a TM"}}}
	if want := "Thing Model, not a Thing Description (1 problem): $['@type']: a TM"; tm.Error() != want {
		t.Errorf("got %q, want %q", tm.Error(), want)
	}
}

// The compiler never loads anything that is not embedded, so a schema or
// document naming a URL cannot make the directory reach out.
func TestLoaderRefusesEverything(t *testing.T) {
	for _, u := range []string{td11SchemaID, "https://www.w3.org/2019/wot/td-schema/v1", "file:///etc/passwd"} {
		if doc, err := (offline{}).Load(u); err == nil || doc != nil {
			t.Errorf("Load(%s) = %v, %v; want a refusal", u, doc, err)
		}
	}
}

func TestConcurrentValidate(t *testing.T) {
	v := newTestValidator(t)
	type result struct {
		in  []byte
		err string
	}
	var cases []result
	for _, e := range readManifest(t) {
		raw, err := os.ReadFile(filepath.Join("testdata/corpus", e.File))
		if err != nil {
			t.Fatal(err)
		}
		_, verr := v.Validate(raw)
		r := result{in: raw}
		if verr != nil {
			r.err = verr.Error()
		}
		cases = append(cases, r)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range cases {
				c := cases[(i+g*25)%len(cases)]
				_, err := v.Validate(c.in)
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != c.err {
					errs <- fmt.Sprintf("goroutine %d: got %q, want %q", g, got, c.err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkValidate measures the full validation a new document gets; the verdict cache is
// off (BenchmarkValidateCached measures a repeated document).
func BenchmarkValidate(b *testing.B) {
	v := newTestValidator(b)
	v.passed = nil
	for _, f := range []string{"testdata/corpus/lmos/weather-agent.json", "testdata/agent-4k.json"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := v.Validate(raw); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Validate(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(filepath.Base(f)+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
