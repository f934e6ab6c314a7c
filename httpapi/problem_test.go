package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v5"
)

func TestRouterErrorsAreProblems(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		f.get("/nowhere").want(t, http.StatusNotFound).problem(t)
		f.get("/things/").want(t, http.StatusNotFound).problem(t)

		r := f.do(http.MethodDelete, "/things", "", "").want(t, http.StatusMethodNotAllowed)
		r.problem(t)
		allow := r.header.Get("Allow")
		for _, m := range []string{"GET", "HEAD", "POST"} {
			if !strings.Contains(allow, m) {
				t.Errorf("Allow %q lacks %s", allow, m)
			}
		}
		r = f.do(http.MethodPost, "/things/urn:x:1", mediaTD, minimalTD("urn:x:1", "x")).want(t, http.StatusMethodNotAllowed)
		r.problem(t)
		if !strings.Contains(r.header.Get("Allow"), "PUT") {
			t.Errorf("Allow %q lacks PUT", r.header.Get("Allow"))
		}
		f.do(http.MethodPut, "/.well-known/wot", mediaTD, "{}").want(t, http.StatusMethodNotAllowed).problem(t)
	})
}

func TestBodyErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store, func(c *Config) { c.MaxBodyBytes = 512 })
		f.do(http.MethodPut, "/things/urn:x:1", "text/plain", minimalTD("urn:x:1", "x")).want(t, http.StatusUnsupportedMediaType).problem(t)
		f.do(http.MethodPut, "/things/urn:x:1", "application/x-www-form-urlencoded", minimalTD("urn:x:1", "x")).want(t, http.StatusUnsupportedMediaType).problem(t)
		// The media types real clients send for TDs are all accepted, with parameters.
		for i, ct := range []string{"application/td+json", "application/json; charset=utf-8", "application/ld+json", ""} {
			id := "urn:x:ct" + string(rune('a'+i))
			f.do(http.MethodPut, "/things/"+id, ct, minimalTD(id, "x")).want(t, http.StatusCreated)
		}

		big := minimalTD("urn:x:big", strings.Repeat("x", 600))
		p := f.put("/things/urn:x:big", big).want(t, http.StatusRequestEntityTooLarge).problem(t)
		if !strings.Contains(p.Detail, "512") {
			t.Errorf("413 detail does not state the limit: %q", p.Detail)
		}
		f.get("/things/urn:x:big").want(t, http.StatusNotFound)

		p = f.put("/things/urn:x:bad", "{\n  \"title\": \"x\",\n  }").want(t, http.StatusBadRequest).problem(t)
		if p.Type != problemMalformedJSON || !strings.Contains(p.Detail, "line 3, column 3") {
			t.Errorf("malformed JSON problem: %+v", p)
		}
		f.put("/things/urn:x:empty", "").want(t, http.StatusBadRequest).problem(t)
		f.put("/things/urn:x:array", "[]").want(t, http.StatusBadRequest).problem(t)
	})
}

func TestValidationProblems(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		p := f.put("/things/urn:x:1", `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "@type": "saref:Sensor", "id": "urn:x:1", "title": "x",
			"properties": {"p": {"forms": [{"href": "https://example.com/p", "op": "fly"}]}}}`).want(t, http.StatusBadRequest).problem(t)
		if p.Type != problemInvalidTD || len(p.ValidationErrors) == 0 {
			t.Fatalf("invalid TD problem: %+v", p)
		}
		for _, ve := range p.ValidationErrors {
			if !strings.HasPrefix(ve.Field, "$") || ve.Description == "" {
				t.Errorf("validation error without field path or description: %+v", ve)
			}
		}

		minimal := readCorpus(t, "lmos/agent-description-minimal.json")
		p = f.put("/things/urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77", minimal).want(t, http.StatusBadRequest).problem(t)
		hint := false
		for _, ve := range p.ValidationErrors {
			hint = hint || (strings.Contains(ve.Description, "securityDefinitions") && strings.Contains(ve.Description, "nosec"))
		}
		if !hint {
			t.Errorf("LMOS example without security: no hint on what to add: %+v", p.ValidationErrors)
		}

		tm := `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "@type": "tm:ThingModel", "title": "model"}`
		p = f.put("/things/urn:x:tm", tm).want(t, http.StatusBadRequest).problem(t)
		if p.Type != problemThingModel || !strings.Contains(p.Detail, "Thing Model") {
			t.Errorf("Thing Model problem: %+v", p)
		}
	})
}

func TestPanicBecomesProblem(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		f.server.echo.GET("/panic", func(*echo.Context) error { panic("boom") })
		p := f.get("/panic").want(t, http.StatusInternalServerError).problem(t)
		if strings.Contains(p.Detail, "boom") {
			t.Errorf("internal detail leaked: %q", p.Detail)
		}
		f.get("/healthz").want(t, http.StatusOK)
	})
}
