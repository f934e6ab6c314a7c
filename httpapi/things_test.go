package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const weatherID = "urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77"

func TestPutCreatesThenReplaces(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		td := readCorpus(t, "lmos/weather-agent.json")
		f.put("/things/"+weatherID, td).want(t, http.StatusCreated)
		f.put("/things/"+weatherID, td).want(t, http.StatusNoContent)

		got := f.get("/things/"+weatherID).want(t, http.StatusOK)
		if ct := got.header.Get("Content-Type"); ct != "application/td+json" {
			t.Errorf("Content-Type %q", ct)
		}
		doc := got.object(t)
		if doc["title"] != "WeatherAgent" || doc["id"] != weatherID {
			t.Errorf("served TD: %s", got.body)
		}
	})
}

func TestGetServesRegisteredBytes(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		// Member order, number spellings, spacing and unknown members must come back as sent.
		body := `{"title": "Odd",  "id": "urn:x:odd", "n": 1.50e+2, "big": 100000000000000000000001,
	 "@context": ["https://www.w3.org/2022/wot/td/v1.1", {"ex": "https://example.com/"}],
	 "ex:unknown": {"z": 1, "a": [3,2,1]}, "security": ["nosec_sc"],
	 "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "title": "Odd"}`
		r := f.put("/things/urn:x:odd", body)
		if r.status != http.StatusBadRequest {
			t.Fatalf("duplicate title accepted: %d %s", r.status, r.body)
		}
		body = strings.Replace(body, `, "title": "Odd"}`, `}`, 1)
		f.put("/things/urn:x:odd", body).want(t, http.StatusCreated)
		got := string(f.get("/things/urn:x:odd").want(t, http.StatusOK).body)
		want := strings.Replace(body, `{"ex": "https://example.com/"}]`, `{"ex": "https://example.com/"},"https://www.w3.org/2022/wot/discovery"]`, 1)
		want = strings.TrimSuffix(want, "}")
		if !strings.HasPrefix(got, want+`,"registration":{"created":"2026-11-21T10:00:00Z","modified":"2026-11-21T10:00:00Z","retrieved":"2026-11-21T10:00:00Z"}`) {
			t.Errorf("served bytes differ\n got: %s\nwant: %s...", got, want)
		}
	})
}

func TestHeadMatchesGet(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		f.put("/things/urn:x:1", minimalTD("urn:x:1", "one")).want(t, http.StatusCreated)
		for _, path := range []string{"/things/urn:x:1", "/things?limit=1", "/things?limit=1&format=collection", "/.well-known/wot", "/healthz", "/readyz", "/openapi.yaml", "/things/urn:x:missing", "/nowhere"} {
			get := f.get(path)
			head := f.do(http.MethodHead, path, "", "")
			if head.status != get.status || len(head.body) != 0 {
				t.Errorf("HEAD %s: status %d (GET %d), %d body bytes", path, head.status, get.status, len(head.body))
			}
			for _, h := range []string{"Content-Type", "Content-Length", "Link"} {
				if head.header.Get(h) != get.header.Get(h) {
					t.Errorf("HEAD %s: %s %q, GET has %q", path, h, head.header.Get(h), get.header.Get(h))
				}
			}
			if get.header.Get("Content-Length") != strconv.Itoa(len(get.body)) {
				t.Errorf("GET %s: Content-Length %q for %d bytes", path, get.header.Get("Content-Length"), len(get.body))
			}
		}
		head := f.do(http.MethodHead, "/things", "", "")
		if head.status != http.StatusOK || head.header.Get("Content-Type") != "application/ld+json" {
			t.Errorf("HEAD /things: %d %q", head.status, head.header.Get("Content-Type"))
		}
	})
}

func TestUnknownThingIs404Problem(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			p := f.do(method, "/things/urn:x:none", "", "").want(t, http.StatusNotFound).problem(t)
			if p.Instance != "/things/urn:x:none" {
				t.Errorf("instance %q", p.Instance)
			}
		}
		f.do(http.MethodPatch, "/things/urn:x:none", mediaMergePatch, `{"title":"x"}`).want(t, http.StatusNotFound).problem(t)
	})
}

func TestAnonymousThing(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		r := f.do(http.MethodPost, "/things", mediaTD, minimalTD("", "anon")).want(t, http.StatusCreated)
		loc := r.header.Get("Location")
		if !regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(loc) {
			t.Fatalf("Location %q is not a urn:uuid v4", loc)
		}
		doc := f.get("/things/"+loc).want(t, http.StatusOK).object(t)
		if doc["id"] != loc || doc["title"] != "anon" {
			t.Errorf("anonymous TD served as %v", doc)
		}
		p := f.do(http.MethodPost, "/things", mediaTD, minimalTD("urn:x:has-id", "named")).want(t, http.StatusBadRequest).problem(t)
		if !strings.Contains(p.Detail, "PUT") {
			t.Errorf("detail does not point to PUT: %q", p.Detail)
		}
		f.get("/things/urn:x:has-id").want(t, http.StatusNotFound)
	})
}

func TestPutIDMustMatchBody(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		f.put("/things/urn:x:a", minimalTD("urn:x:b", "x")).want(t, http.StatusBadRequest).problem(t)
		f.get("/things/urn:x:a").want(t, http.StatusNotFound)
		// A TD without id takes the one in the URL.
		f.put("/things/urn:x:c", minimalTD("", "x")).want(t, http.StatusCreated)
		if doc := f.get("/things/urn:x:c").want(t, http.StatusOK).object(t); doc["id"] != "urn:x:c" {
			t.Errorf("id %v", doc["id"])
		}
		f.put("/things/not%20a%20uri", minimalTD("", "x")).want(t, http.StatusBadRequest).problem(t)
	})
}

func TestIDsWithReservedCharacters(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		for _, id := range []string{"urn:x:a/b/c", "urn:x:100%", "urn:x:frag#ment", "urn:x:with space", "urn:x:a/../b", "urn:x:q?x=1", "urn:x:ü/é", "http://example.com/things/1"} {
			path := "/things/" + url.PathEscape(id)
			f.put(path, minimalTD(id, "reserved")).want(t, http.StatusCreated)
			doc := f.get(path).want(t, http.StatusOK).object(t)
			if doc["id"] != id {
				t.Errorf("GET %s: id %v, want %q", path, doc["id"], id)
			}
			f.do(http.MethodPatch, path, mediaMergePatch, `{"title":"patched"}`).want(t, http.StatusNoContent)
			f.do(http.MethodDelete, path, "", "").want(t, http.StatusNoContent)
			f.get(path).want(t, http.StatusNotFound)
		}
		// An unescaped slash is part of the id too; the router neither cleans nor redirects.
		f.put("/things/urn:x:p/q", minimalTD("urn:x:p/q", "slash")).want(t, http.StatusCreated)
		f.get("/things/urn:x:p%2Fq").want(t, http.StatusOK)
		f.put("/things/urn:x:dot/../dot", minimalTD("urn:x:dot/../dot", "dots")).want(t, http.StatusCreated)
		f.get("/things/urn:x:dot%2F..%2Fdot").want(t, http.StatusOK)
		// net/http refuses a request line with a broken escape before any handler runs.
		f.do(http.MethodGet, "/things/urn:x:bad%zz", "", "").want(t, http.StatusBadRequest)
	})
}

func TestPatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		f.put("/things/urn:x:p", `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "id": "urn:x:p", "title": "before", "n": 1.0,
			"securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "security": "nosec_sc", "description": "drop me"}`).want(t, http.StatusCreated)
		f.clock.Advance(time.Minute)
		f.do(http.MethodPatch, "/things/urn:x:p", mediaMergePatch, `{"title": "after", "description": null, "ex:new": true}`).want(t, http.StatusNoContent)
		got := f.get("/things/urn:x:p").want(t, http.StatusOK)
		doc := got.object(t)
		if doc["title"] != "after" || doc["description"] != nil || doc["ex:new"] != true {
			t.Errorf("patched TD: %s", got.body)
		}
		if i, j := strings.Index(string(got.body), `"id"`), strings.Index(string(got.body), `"title"`); i > j {
			t.Errorf("member order changed: %s", got.body)
		}
		reg := doc["registration"].(map[string]any)
		if reg["created"] != "2026-11-21T10:00:00Z" || reg["modified"] != "2026-11-21T10:01:00Z" {
			t.Errorf("registration after patch: %v", reg)
		}

		f.do(http.MethodPatch, "/things/urn:x:p", mediaTD, `{"title": "x"}`).want(t, http.StatusUnsupportedMediaType).problem(t)
		p := f.do(http.MethodPatch, "/things/urn:x:p", mediaMergePatch, `{"security": null}`).want(t, http.StatusBadRequest).problem(t)
		if len(p.ValidationErrors) == 0 {
			t.Errorf("patch making the TD invalid gave no validationErrors: %+v", p)
		}
		f.do(http.MethodPatch, "/things/urn:x:p", mediaMergePatch, `{"id": "urn:x:other"}`).want(t, http.StatusBadRequest).problem(t)
		f.do(http.MethodPatch, "/things/urn:x:p", mediaMergePatch, `["not", "an", "object"]`).want(t, http.StatusBadRequest).problem(t)
		f.do(http.MethodPatch, "/things/urn:x:p", mediaMergePatch, `{"title": }`).want(t, http.StatusBadRequest).problem(t)
		if doc := f.get("/things/urn:x:p").object(t); doc["title"] != "after" {
			t.Errorf("a refused patch changed the TD: %v", doc)
		}
	})
}

func TestRegistrationInfoAndExpiry(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		body := `{"@context": "https://www.w3.org/2022/wot/td/v1.1", "id": "urn:x:ttl", "title": "t",
			"securityDefinitions": {"nosec_sc": {"scheme": "nosec"}}, "security": "nosec_sc",
			"registration": {"ttl": 60, "expires": "2030-01-01T00:00:00Z", "created": "2001-01-01T00:00:00Z", "modified": "2001-01-01T00:00:00Z"}}`
		f.put("/things/urn:x:ttl", body).want(t, http.StatusCreated)
		reg := f.get("/things/urn:x:ttl").want(t, http.StatusOK).object(t)["registration"].(map[string]any)
		want := map[string]any{"created": "2026-11-21T10:00:00Z", "modified": "2026-11-21T10:00:00Z", "expires": "2026-11-21T10:01:00Z", "ttl": 60.0, "retrieved": "2026-11-21T10:00:00Z"}
		for k, v := range want {
			if reg[k] != v {
				t.Errorf("registration.%s = %v, want %v", k, reg[k], v)
			}
		}

		// The empty patch is the keep-alive: it renews expires and leaves modified alone.
		f.clock.Advance(45 * time.Second)
		f.do(http.MethodPatch, "/things/urn:x:ttl", mediaMergePatch, `{}`).want(t, http.StatusNoContent)
		reg = f.get("/things/urn:x:ttl").want(t, http.StatusOK).object(t)["registration"].(map[string]any)
		if reg["expires"] != "2026-11-21T10:01:45Z" || reg["modified"] != "2026-11-21T10:00:00Z" {
			t.Errorf("after keep-alive: %v", reg)
		}

		f.clock.Advance(61 * time.Second)
		f.get("/things/urn:x:ttl").want(t, http.StatusNotFound).problem(t)
		if list := f.get("/things").want(t, http.StatusOK); string(list.body) != "[]" {
			t.Errorf("expired TD listed: %s", list.body)
		}
		f.do(http.MethodPatch, "/things/urn:x:ttl", mediaMergePatch, `{}`).want(t, http.StatusNotFound)
		// Registering an expired id again is a creation.
		f.put("/things/urn:x:ttl", body).want(t, http.StatusCreated)

		other := func(id string, replacements ...string) string {
			out := strings.Replace(body, "urn:x:ttl", id, 1)
			return strings.NewReplacer(replacements...).Replace(out)
		}
		p := f.put("/things/urn:x:long", other("urn:x:long", `"ttl": 60`, `"ttl": 86401`)).want(t, http.StatusBadRequest).problem(t)
		if !strings.Contains(p.Detail, "86400") {
			t.Errorf("ttl above maximum: detail %q does not state the maximum", p.Detail)
		}
		f.put("/things/urn:x:neg", other("urn:x:neg", `"ttl": 60`, `"ttl": -1`)).want(t, http.StatusBadRequest).problem(t)
		f.put("/things/urn:x:str", other("urn:x:str", `"ttl": 60`, `"ttl": "60"`)).want(t, http.StatusBadRequest).problem(t)
		f.put("/things/urn:x:past", other("urn:x:past", `"ttl": 60, `, ``, `2030-01-01`, `2020-01-01`)).want(t, http.StatusBadRequest).problem(t)

		expiresOnly := other("urn:x:exp", `"ttl": 60, "expires": "2030-01-01T00:00:00Z"`, `"expires": "2026-11-21T12:00:00+01:00"`)
		f.put("/things/urn:x:exp", expiresOnly).want(t, http.StatusCreated)
		reg = f.get("/things/urn:x:exp").want(t, http.StatusOK).object(t)["registration"].(map[string]any)
		if reg["expires"] != "2026-11-21T11:00:00Z" || reg["ttl"] != nil {
			t.Errorf("client expires: %v", reg)
		}
	})
}

func TestListing(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		ids := []string{"urn:x:B", "urn:x:a", "urn:x:ä", "urn:x:Z", "urn:x:a/b", "urn:x:0", "urn:x:~", "urn:x:_"}
		for i := range 4 {
			ids = append(ids, fmt.Sprintf("urn:x:n%02d", i))
		}
		for _, id := range ids {
			f.put("/things/"+url.PathEscape(id), minimalTD(id, "listed")).want(t, http.StatusCreated)
		}
		all := f.get("/things").want(t, http.StatusOK)
		if all.header.Get("Content-Type") != "application/ld+json" || all.header.Get("Link") != "" {
			t.Errorf("full listing headers: %v", all.header)
		}
		var tds []map[string]any
		if err := json.Unmarshal(all.body, &tds); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, td := range tds {
			got = append(got, td["id"].(string))
			if _, ok := td["registration"]; !ok {
				t.Errorf("listed TD without registration: %v", td)
			}
		}
		want := "urn:x:0 urn:x:B urn:x:Z urn:x:_ urn:x:a urn:x:a/b urn:x:n00 urn:x:n01 urn:x:n02 urn:x:n03 urn:x:~ urn:x:ä"
		if strings.Join(got, " ") != want {
			t.Errorf("order\n got: %s\nwant: %s", strings.Join(got, " "), want)
		}

		// Walk the pages through the next links.
		var paged []string
		next := "/things?limit=5&format=array"
		var etag string
		for pages := 0; next != ""; pages++ {
			r := f.get(next).want(t, http.StatusOK)
			var page []map[string]any
			if err := json.Unmarshal(r.body, &page); err != nil {
				t.Fatal(err)
			}
			for _, td := range page {
				paged = append(paged, td["id"].(string))
			}
			links := parseLinks(r.header.Values("Link"))
			if links["canonical"].url != "/things" || links["canonical"].etag == "" {
				t.Fatalf("canonical link: %v", r.header.Values("Link"))
			}
			if etag != "" && links["canonical"].etag != etag {
				t.Errorf("etag changed without a membership change")
			}
			etag = links["canonical"].etag
			next = links["next"].url
			if next != "" && !strings.Contains(next, "format=array") {
				t.Errorf("next link lost an argument: %s", next)
			}
			if pages > 5 {
				t.Fatal("too many pages")
			}
		}
		if strings.Join(paged, " ") != want {
			t.Errorf("paged order\n got: %s\nwant: %s", strings.Join(paged, " "), want)
		}

		etagOf := func() string {
			return parseLinks(f.get("/things?limit=1").header.Values("Link"))["canonical"].etag
		}
		before := etagOf()
		f.put("/things/urn:x:0", minimalTD("urn:x:0", "replaced")).want(t, http.StatusNoContent)
		if etagOf() != before {
			t.Error("replacing a TD changed the etag")
		}
		f.put("/things/urn:x:new", minimalTD("urn:x:new", "new")).want(t, http.StatusCreated)
		afterCreate := etagOf()
		if afterCreate == before {
			t.Error("creating a TD left the etag unchanged")
		}
		f.do(http.MethodDelete, "/things/urn:x:new", "", "").want(t, http.StatusNoContent)
		if etagOf() == afterCreate {
			t.Error("deleting a TD left the etag unchanged")
		}
	})
}

func TestListingCollection(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		for i := range 7 {
			id := fmt.Sprintf("urn:x:%d", i)
			f.put("/things/"+id, minimalTD(id, "c")).want(t, http.StatusCreated)
		}
		c := f.get("/things?format=collection&limit=3&offset=3").want(t, http.StatusOK).object(t)
		if c["@type"] != "ThingCollection" || c["total"] != 7.0 || c["@context"] == nil {
			t.Errorf("collection: %v", c)
		}
		if c["@id"] != "/things?format=collection&limit=3&offset=3" || c["next"] != "/things?format=collection&limit=3&offset=6" {
			t.Errorf("collection links: @id %v next %v", c["@id"], c["next"])
		}
		if members := c["members"].([]any); len(members) != 3 || members[0].(map[string]any)["id"] != "urn:x:3" {
			t.Errorf("members: %v", members)
		}
		whole := f.get("/things?format=collection").want(t, http.StatusOK).object(t)
		if len(whole["members"].([]any)) != 7 || whole["next"] != nil {
			t.Errorf("unpaged collection: %v", whole)
		}
		// offset alone pages with the default page size (5 here).
		if page := f.get("/things?offset=1").want(t, http.StatusOK); strings.Count(string(page.body), `"registration"`) != 5 {
			t.Errorf("offset without limit: %s", page.body)
		}
	})
}

func TestListingLimitIsCapped(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store, func(c *Config) { c.MaxPageSize = 3 })
		for i := range 5 {
			id := fmt.Sprintf("urn:x:%d", i)
			f.put("/things/"+id, minimalTD(id, "c")).want(t, http.StatusCreated)
		}
		r := f.get("/things?limit=100").want(t, http.StatusOK)
		if n := strings.Count(string(r.body), `"registration"`); n != 3 {
			t.Errorf("limit above the maximum page size gave %d TDs, want 3", n)
		}
		if next := parseLinks(r.header.Values("Link"))["next"].url; next != "/things?limit=3&offset=3" {
			t.Errorf("next link after a capped page: %q", next)
		}
	})
}

func TestListingArguments(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		for _, q := range []string{"limit=0", "limit=x", "limit=-1", "offset=-2", "offset=1.5", "format=xml", "sort_by=id", "limit=1&limit=2"} {
			p := f.get("/things?"+q).want(t, http.StatusBadRequest).problem(t)
			if p.Instance != "/things?"+q {
				t.Errorf("%s: instance %q", q, p.Instance)
			}
		}
	})
}

func TestConcurrentPutsOfOneID(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		const writers = 32
		statuses := make(chan int, writers)
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				statuses <- f.put("/things/urn:x:race", minimalTD("urn:x:race", "race")).status
			})
		}
		wg.Wait()
		close(statuses)
		count := map[int]int{}
		for s := range statuses {
			count[s]++
		}
		if count[http.StatusCreated] != 1 || count[http.StatusNoContent] != writers-1 {
			t.Errorf("statuses %v, want one 201 and %d 204", count, writers-1)
		}
	})
}

func TestConcurrentPutsOfManyIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		f := newFixture(t, store)
		const writers = 32
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				id := fmt.Sprintf("urn:x:many-%d", i)
				if r := f.put("/things/"+id, minimalTD(id, "many")); r.status != http.StatusCreated {
					t.Errorf("%s: %d %s", id, r.status, r.body)
				}
			})
		}
		wg.Wait()
		if c := f.get("/things?format=collection").object(t); c["total"] != float64(writers) {
			t.Errorf("total %v, want %d", c["total"], writers)
		}
	})
}

type link struct{ url, etag string }

var linkPattern = regexp.MustCompile(`^<([^>]*)>\s*;\s*rel="([^"]+)"(?:\s*;\s*etag="([^"]*)")?$`)

func parseLinks(values []string) map[string]link {
	links := map[string]link{}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if m := linkPattern.FindStringSubmatch(strings.TrimSpace(part)); m != nil {
				links[m[2]] = link{url: m[1], etag: m[3]}
			}
		}
	}
	return links
}
