package httpapi

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lmosdir/lmosdir/openapi"
)

// The parts of an OpenAPI 3.1 document these tests read. Only what is checked is decoded,
// so the spec may use anything else OpenAPI allows.
type oasDocument struct {
	OpenAPI    string                          `yaml:"openapi"`
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Responses map[string]oasResponse `yaml:"responses"`
	} `yaml:"components"`
}

type oasOperation struct {
	Parameters  []any                  `yaml:"parameters"`
	RequestBody any                    `yaml:"requestBody"`
	Responses   map[string]oasResponse `yaml:"responses"`
}

type oasResponse struct {
	Ref     string                  `yaml:"$ref"`
	Headers map[string]any          `yaml:"headers"`
	Content map[string]oasMediaType `yaml:"content"`
}

type oasMediaType struct {
	Schema struct {
		Ref string `yaml:"$ref"`
	} `yaml:"schema"`
}

// oasMethods are the operation keys of an OpenAPI 3.1 Path Item; its other keys
// (parameters, summary, …) are not operations.
var oasMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

const (
	problemMediaType = "application/problem+json"
	problemSchemaRef = "#/components/schemas/Problem"
	responseRefBase  = "#/components/responses/"
)

type specOperation struct {
	method, path string
	op           oasOperation
	pathParams   bool
}

func loadSpec(t *testing.T) (oasDocument, []specOperation) {
	t.Helper()
	// The embedded bytes, not the file on disk, because they are what /openapi.yaml serves.
	var doc oasDocument
	if err := yaml.Unmarshal(openapi.Spec, &doc); err != nil {
		t.Fatalf("openapi/openapi.yaml is not valid YAML: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("openapi/openapi.yaml declares openapi %q; want an OpenAPI 3.1.x document", doc.OpenAPI)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("openapi/openapi.yaml describes no paths")
	}
	var ops []specOperation
	for path, item := range doc.Paths {
		_, pathParams := item["parameters"]
		for key, node := range item {
			if !slices.Contains(oasMethods, key) {
				continue
			}
			var op oasOperation
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s %s: %v", strings.ToUpper(key), path, err)
			}
			ops = append(ops, specOperation{method: strings.ToUpper(key), path: path, op: op, pathParams: pathParams})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].path != ops[j].path {
			return ops[i].path < ops[j].path
		}
		return ops[i].method < ops[j].method
	})
	return doc, ops
}

// routeShape reduces a path to its shape so that echo's syntax (":name", a trailing "*"
// that takes the rest of the path) and OpenAPI's ("{name}") compare equal.
func routeShape(path string) string {
	segments := strings.Split(path, "/")
	for i, s := range segments {
		switch {
		case strings.HasPrefix(s, ":"),
			strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"),
			s == "*" && i == len(segments)-1:
			segments[i] = "{}"
		}
	}
	return strings.Join(segments, "/")
}

// TestOpenAPIMatchesRoutes keeps openapi/openapi.yaml the contract of the server: a route
// added without documenting it, or documented without serving it, fails here.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	_, ops := loadSpec(t)
	// No request is served, so no directory is needed.
	s, err := New(Config{BaseURL: "http://localhost:8080", MaxBodyBytes: 1 << 20, DefaultPageSize: 10, MaxPageSize: 100, Version: "test"}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}

	served := map[string]string{} // shape key -> echo's spelling, for messages
	for _, r := range s.Routes() {
		if strings.HasPrefix(r.Method, "echo_route") || strings.HasPrefix(r.Name, "echo_route") {
			t.Logf("ignoring echo's own route %q %s %s", r.Name, r.Method, r.Path)
			continue
		}
		shape := routeShape(r.Path)
		if r.Method == http.MethodPost && r.Path == "/things/*" {
			// A wildcard ends an echo route, so /things/{id}/messages is served by POST /things/*.
			shape = routeShape("/things/{id}/messages")
		}
		served[r.Method+" "+shape] = r.Method + " " + r.Path
	}
	if len(served) == 0 {
		t.Fatal("the server registers no routes")
	}
	documented := map[string]string{}
	for _, o := range ops {
		documented[o.method+" "+routeShape(o.path)] = o.method + " " + o.path
	}

	var problems []string
	for key, route := range served {
		if _, ok := documented[key]; !ok {
			problems = append(problems, fmt.Sprintf("route %s is served but missing from openapi/openapi.yaml", route))
		}
	}
	for key, op := range documented {
		if _, ok := served[key]; !ok {
			problems = append(problems, fmt.Sprintf("operation %s is in openapi/openapi.yaml but the server does not register it", op))
		}
	}
	for key, op := range documented {
		if head := "HEAD" + strings.TrimPrefix(key, "GET"); strings.HasPrefix(key, "GET ") && documented[head] == "" {
			problems = append(problems, fmt.Sprintf("operation %s has no HEAD twin in openapi/openapi.yaml", op))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestOpenAPIErrorResponses checks that the spec documents errors the way the server sends
// them: every error as problem details, every body with its media type.
//
// An operation that reads client input (parameters or a body) must document at least one
// 4xx answer. Operations without input (the probes, /.well-known/wot, /openapi.yaml) have no
// 4xx of their own: 404 and 405 come from the router for other paths and methods, and are
// documented once as components NoSuchEndpoint and MethodNotAllowed.
func TestOpenAPIErrorResponses(t *testing.T) {
	doc, ops := loadSpec(t)

	resolve := func(r oasResponse) (oasResponse, error) {
		for range 8 {
			if r.Ref == "" {
				return r, nil
			}
			ref := r.Ref
			name, ok := strings.CutPrefix(ref, responseRefBase)
			if !ok {
				return r, fmt.Errorf("$ref %q does not name a component response", ref)
			}
			if r, ok = doc.Components.Responses[name]; !ok {
				return r, fmt.Errorf("$ref %q names no component response", ref)
			}
		}
		return r, fmt.Errorf("$ref %q: too many indirections", r.Ref)
	}
	// checkResponse reports whether r is a problem details response, and any fault in it.
	checkResponse := func(where string, r oasResponse) (isProblem bool) {
		r, err := resolve(r)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return false
		}
		if r.Content != nil && len(r.Content) == 0 {
			t.Errorf("%s: content is given but names no media type", where)
		}
		for mt := range r.Content {
			if parsed, _, err := mime.ParseMediaType(mt); err != nil || !strings.Contains(parsed, "/") || strings.Contains(parsed, "*") {
				t.Errorf("%s: %q is not a concrete media type", where, mt)
			}
		}
		mt, ok := r.Content[problemMediaType]
		return ok && mt.Schema.Ref == problemSchemaRef
	}

	for _, o := range ops {
		name := o.method + " " + o.path
		if len(o.op.Responses) == 0 {
			t.Errorf("%s documents no responses", name)
			continue
		}
		takesInput := o.pathParams || len(o.op.Parameters) > 0 || o.op.RequestBody != nil
		var problem4xx, problemAny bool
		for code, r := range o.op.Responses {
			where := name + " response " + code
			isProblem := checkResponse(where, r)
			status, err := strconv.Atoi(code)
			if err != nil || status < 100 || status > 599 {
				t.Errorf("%s: the server sends exact status codes, not %q", where, code)
				continue
			}
			if status < 400 {
				continue
			}
			if !isProblem {
				t.Errorf("%s: an error response must be %s with schema %s", where, problemMediaType, problemSchemaRef)
				continue
			}
			problemAny = true
			problem4xx = problem4xx || status < 500
		}
		switch {
		case takesInput && !problem4xx:
			t.Errorf("%s takes client input but documents no 4xx problem details response", name)
		case !problemAny:
			t.Errorf("%s documents no error response with problem details", name)
		}
	}

	// Errors the router sends for any path: the Allow header is what makes a 405 useful.
	for name, header := range map[string]string{"NoSuchEndpoint": "", "MethodNotAllowed": "Allow"} {
		r, ok := doc.Components.Responses[name]
		if !ok {
			t.Errorf("component response %s is missing", name)
			continue
		}
		if !checkResponse("component response "+name, r) {
			t.Errorf("component response %s must be %s with schema %s", name, problemMediaType, problemSchemaRef)
		}
		if _, ok := r.Headers[header]; header != "" && !ok {
			t.Errorf("component response %s must document the %s header", name, header)
		}
	}
}
