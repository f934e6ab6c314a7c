package directory

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEnriched(t *testing.T) {
	thing := Thing{
		ID:       "urn:x",
		Document: []byte("{\"id\": \"urn:x\", \"n\": 1.0e2\n}"),
		Created:  time.Date(2026, 1, 2, 3, 4, 5, 600000, time.UTC),
		Modified: time.Date(2026, 1, 2, 3, 4, 6, 0, time.FixedZone("CET", 3600)),
		Expires:  time.Date(2026, 1, 2, 4, 4, 6, 0, time.UTC),
		TTL:      1.5,
	}
	got := string(thing.Enriched(time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)))
	want := "{\"id\": \"urn:x\", \"n\": 1.0e2," +
		`"registration":{"created":"2026-01-02T03:04:05.0006Z","modified":"2026-01-02T02:04:06Z","expires":"2026-01-02T04:04:06Z","ttl":1.5,"retrieved":"2026-01-02T03:05:00Z"}` + "\n}"
	if got != want {
		t.Errorf("\n got: %s\nwant: %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("not valid JSON")
	}
	thing.Expires, thing.TTL = time.Time{}, 0
	if got := string(thing.Enriched(thing.Created)); strings.Contains(got, "expires") || strings.Contains(got, "ttl") {
		t.Errorf("a registration without expiry shows one: %s", got)
	}
}

// TestEnrichedRetrieved: a TD the directory fetched itself says when and where from, and a
// client's says nothing of either.
func TestEnrichedRetrieved(t *testing.T) {
	serving := time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)
	client := Thing{
		ID:       "urn:x",
		Document: []byte(`{"id":"urn:x"}`),
		Created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	const clientTD = `{"id":"urn:x","registration":{"created":"2026-01-02T03:04:05Z","modified":"2026-01-02T03:04:05Z","retrieved":"2026-01-02T03:05:00Z"}}`
	if got := string(client.Enriched(serving)); got != clientTD {
		t.Errorf("without Retrieved and Origin:\n got: %s\nwant: %s", got, clientTD)
	}

	fetched := client
	fetched.Retrieved = time.Date(2026, 1, 2, 4, 4, 0, 120000, time.FixedZone("CET", 3600))
	fetched.Origin = []byte(`{"via":"mdns", "href":"http://10.0.0.7/td","n":1.0e2}`)
	want := `{"id":"urn:x","registration":{"created":"2026-01-02T03:04:05Z","modified":"2026-01-02T03:04:05Z",` +
		`"retrieved":"2026-01-02T03:04:00.00012Z","origin":{"via":"mdns", "href":"http://10.0.0.7/td","n":1.0e2}}}`
	if got := string(fetched.AppendEnriched([]byte("prefix "), serving)); got != "prefix "+want {
		t.Errorf("with Retrieved and Origin:\n got: %s\nwant: prefix %s", got, want)
	}

	// Each on its own.
	onlyRetrieved := fetched
	onlyRetrieved.Origin = nil
	want = strings.Replace(clientTD, "03:05:00Z", "03:04:00.00012Z", 1)
	if got := string(onlyRetrieved.Enriched(serving)); got != want {
		t.Errorf("with Retrieved only:\n got: %s\nwant: %s", got, want)
	}
	onlyOrigin := fetched
	onlyOrigin.Retrieved = time.Time{}
	want = strings.TrimSuffix(clientTD, "}}") + `,"origin":` + string(fetched.Origin) + "}}"
	if got := string(onlyOrigin.Enriched(serving)); got != want {
		t.Errorf("with Origin only:\n got: %s\nwant: %s", got, want)
	}
}

func TestLiveAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expires time.Time
		live    bool
	}{{time.Time{}, true}, {now.Add(time.Microsecond), true}, {now, false}, {now.Add(-time.Second), false}} {
		if got := (Thing{Expires: tc.expires}).LiveAt(now); got != tc.live {
			t.Errorf("expires %v: live %t, want %t", tc.expires, got, tc.live)
		}
	}
}

func TestRegistrationOf(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Service{maxTTL: time.Hour}
	tests := []struct {
		name    string
		reg     string
		wantErr string
		want    registration
	}{
		{name: "none", reg: `null`},
		{name: "ttl", reg: `{"ttl": 60}`, want: registration{given: true, ttl: 60, expires: now.Add(time.Minute)}},
		{name: "fractional ttl", reg: `{"ttl": 0.5}`, want: registration{given: true, ttl: 0.5, expires: now.Add(500 * time.Millisecond)}},
		{name: "ttl wins", reg: `{"ttl": 60, "expires": "2026-01-01T00:30:00Z"}`, want: registration{given: true, ttl: 60, expires: now.Add(time.Minute)}},
		{name: "expires", reg: `{"expires": "2026-01-01T01:30:00+01:00"}`, want: registration{given: true, expires: now.Add(30 * time.Minute)}},
		{name: "directory fields ignored", reg: `{"created": "1999-01-01T00:00:00Z", "retrieved": "x"}`},
		{name: "zero ttl", reg: `{"ttl": 0}`, wantErr: "positive"},
		{name: "ttl over max", reg: `{"ttl": 3601}`, wantErr: "maximum of 3600 seconds"},
		{name: "huge ttl", reg: `{"ttl": 1e400}`, wantErr: "positive"},
		{name: "expires past", reg: `{"expires": "2025-12-31T23:59:59Z"}`, wantErr: "not in the future"},
		{name: "expires beyond max", reg: `{"expires": "2026-01-01T01:00:01Z"}`, wantErr: "maximum ttl"},
		{name: "expires not a date", reg: `{"expires": "tomorrow"}`, wantErr: "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(`{"registration": ` + tt.reg + `}`))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			got, err := s.registrationOf(doc, now)
			if tt.wantErr != "" {
				var reqErr *RequestError
				if !errors.As(err, &reqErr) || !strings.Contains(reqErr.Detail, tt.wantErr) || !strings.HasPrefix(reqErr.Field, "$.registration.") {
					t.Fatalf("error %v, want a RequestError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.given != tt.want.given || got.ttl != tt.want.ttl || !got.expires.Equal(tt.want.expires) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTTLDurationSaturates(t *testing.T) {
	if got := ttlDuration(math.MaxFloat64); got != time.Duration(math.MaxInt64) {
		t.Errorf("ttlDuration(max) = %v", got)
	}
	if got := ttlDuration(1.0000005); got != time.Second {
		t.Errorf("ttlDuration(1.0000005) = %v, want truncation to microseconds", got)
	}
}

// BenchmarkEnriched measures the splice that serves every GET: the stored 4 KB TD with the
// registration object appended, no re-encoding.
func BenchmarkEnriched(b *testing.B) {
	doc, err := os.ReadFile("../td/testdata/agent-4k.json")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	thing := Thing{ID: "urn:x", Document: doc, Created: now, Modified: now, Expires: now.Add(time.Hour), TTL: 3600}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(doc)+256)
	for b.Loop() {
		buf = thing.AppendEnriched(buf[:0], now)
	}
}
