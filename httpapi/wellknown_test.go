package httpapi

import (
	"net/http"
	"testing"
)

func TestDirectoryTD(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		r := f.get("/.well-known/wot").want(t, http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "application/td+json" {
			t.Errorf("Content-Type %q", ct)
		}
		v, err := validator()
		if err != nil {
			t.Fatal(err)
		}
		doc, err := v.Validate(r.body)
		if err != nil {
			t.Fatalf("the directory's TD is not a valid TD: %v", err)
		}
		if doc["@type"] != "ThingDirectory" || doc["base"] != "http://dir.example:8080/" {
			t.Errorf("@type %v base %v", doc["@type"], doc["base"])
		}
		ctx := doc["@context"].([]any)
		if len(ctx) != 2 || ctx[1] != "https://www.w3.org/2022/wot/discovery" {
			t.Errorf("@context %v", ctx)
		}
		// Every response that has a body names its content type.
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, child := range v {
					if k == "response" || k == "additionalResponses" {
						responses, ok := child.([]any)
						if !ok {
							responses = []any{child}
						}
						for _, resp := range responses {
							if resp.(map[string]any)["contentType"] == nil {
								t.Errorf("response without contentType: %v", resp)
							}
						}
					}
					walk(child)
				}
			case []any:
				for _, child := range v {
					walk(child)
				}
			}
		}
		walk(doc)
	})
}

func TestHealth(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		if body := string(f.get("/healthz").want(t, http.StatusOK).body); body != `{"status":"ok"}` {
			t.Errorf("healthz: %s", body)
		}
		if body := string(f.get("/readyz").want(t, http.StatusOK).body); body != `{"status":"ready"}` {
			t.Errorf("readyz: %s", body)
		}
	})
}
