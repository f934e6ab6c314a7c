package directory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/internal/dirtest"
	"github.com/lmosdir/lmosdir/td"
)

func retrievedTD(id, title string) []byte {
	return fmt.Appendf(nil, `{"@context":"https://www.w3.org/2022/wot/td/v1.1",%q:%q,"title":%q,"securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n","registration":{"ttl":5}}`, "id", id, title)
}

// eventCount is how many events the directory recorded: all of them are replayed from the
// store at once, so reading stops at the first pause.
func eventCount(t *testing.T, dir *directory.Service) int {
	t.Helper()
	var first int64
	sub, err := dir.Subscribe(t.Context(), &first, directory.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	n := 0
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		_, err := sub.Next(ctx)
		cancel()
		if err != nil {
			return n
		}
		n++
	}
}

func TestPutRetrieved(t *testing.T) {
	clock := dirtest.NewClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	dir := dirtest.NewEmbedded(t, directory.Options{Clock: clock.Now, MaxTTL: time.Hour})
	dirtest.StartEvents(t, dir)
	ctx := context.Background()
	fetched := clock.Now().Add(-time.Second)
	r := directory.Retrieval{TTL: 2 * time.Minute, At: fetched, Origin: directory.RetrievalOrigin{Via: "mdns", Instance: "lamp", Href: "http://10.0.0.7:80/td"}}

	id, outcome, err := dir.PutRetrieved(ctx, retrievedTD("urn:x:lamp", "lamp"), r)
	if err != nil || id != "urn:x:lamp" || outcome != directory.RetrievedCreated {
		t.Fatalf("first fetch: %q %v %v", id, outcome, err)
	}
	thing, err := dir.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The announcement's ttl, not the TD's own registration member.
	if thing.TTL != 120 || !thing.Expires.Equal(clock.Now().Add(2*time.Minute)) || !thing.Retrieved.Equal(fetched) ||
		string(thing.Origin) != `{"via":"mdns","instance":"lamp","href":"http://10.0.0.7:80/td"}` {
		t.Fatalf("registered %+v", thing)
	}
	events := eventCount(t, dir)

	// The same TD again: nothing written until half the ttl has passed, then a renewal;
	// neither is an event.
	clock.Advance(30 * time.Second)
	if _, outcome, err := dir.PutRetrieved(ctx, retrievedTD("urn:x:lamp", "lamp"), r); err != nil || outcome != directory.RetrievedUnchanged {
		t.Fatalf("same TD: %v %v", outcome, err)
	}
	clock.Advance(31 * time.Second)
	r.At = clock.Now()
	if _, outcome, err := dir.PutRetrieved(ctx, retrievedTD("urn:x:lamp", "lamp"), r); err != nil || outcome != directory.RetrievedRenewed {
		t.Fatalf("same TD past half the ttl: %v %v", outcome, err)
	}
	renewed, err := dir.Get(ctx, id)
	if err != nil || !renewed.Expires.Equal(clock.Now().Add(2*time.Minute)) || !renewed.Modified.Equal(thing.Modified) || !renewed.Retrieved.Equal(r.At) {
		t.Fatalf("renewed %+v %v", renewed, err)
	}
	if n := eventCount(t, dir); n != events {
		t.Errorf("fetching the same TD made %d events", n-events)
	}

	// A changed TD replaces the registration, and is an event.
	if _, outcome, err := dir.PutRetrieved(ctx, retrievedTD("urn:x:lamp", "lamp, repainted"), r); err != nil || outcome != directory.RetrievedReplaced {
		t.Fatalf("changed TD: %v %v", outcome, err)
	}
	if n := eventCount(t, dir); n != events+1 {
		t.Errorf("a changed TD made %d events, want 1", n-events)
	}

	// The directory's maximum ttl caps the announcement's.
	r.TTL = 2 * time.Hour
	if _, outcome, err := dir.PutRetrieved(ctx, retrievedTD("urn:x:lamp", "lamp, repainted"), r); err != nil || outcome != directory.RetrievedRenewed {
		t.Fatalf("longer ttl: %v %v", outcome, err)
	}
	if capped, _ := dir.Get(ctx, id); capped.TTL != 3600 {
		t.Errorf("ttl %v, want the maximum 3600", capped.TTL)
	}

	// A client's PUT takes the Thing over: it is no longer the announcement's.
	if _, err := dir.Put(ctx, id, retrievedTD("urn:x:lamp", "lamp")); err != nil {
		t.Fatal(err)
	}
	if taken, _ := dir.Get(ctx, id); taken.Origin != nil || !taken.Retrieved.IsZero() {
		t.Errorf("after a client's PUT: origin %s retrieved %v", taken.Origin, taken.Retrieved)
	}
}

func TestPutRetrievedAnonymous(t *testing.T) {
	dir := dirtest.NewEmbedded(t, directory.Options{})
	href := "http://10.0.0.8:8080/td"
	r := directory.Retrieval{TTL: time.Minute, At: time.Now(), Origin: directory.RetrievalOrigin{Via: "mdns", Href: href}}
	anonymous := []byte(`{"@context":"https://www.w3.org/2022/wot/td/v1.1","title":"anonymous","securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`)
	id, outcome, err := dir.PutRetrieved(context.Background(), anonymous, r)
	if err != nil || outcome != directory.RetrievedCreated || id != directory.RetrievedID(href) {
		t.Fatalf("%q %v %v", id, outcome, err)
	}
	if again, outcome, err := dir.PutRetrieved(context.Background(), anonymous, r); err != nil || again != id || outcome != directory.RetrievedUnchanged {
		t.Fatalf("fetched again: %q %v %v", again, outcome, err)
	}
	if directory.RetrievedID("http://10.0.0.9:8080/td") == id {
		t.Error("two URLs give one id")
	}
	thing, err := dir.Get(context.Background(), id)
	if err != nil || !bytes.Contains(thing.Document, []byte(`"id":"`+id+`"`)) {
		t.Fatalf("%s %v", thing.Document, err)
	}
}

func TestPutRetrievedRefusesWhatPutRefuses(t *testing.T) {
	dir := dirtest.NewEmbedded(t, directory.Options{})
	r := directory.Retrieval{TTL: time.Minute, At: time.Now(), Origin: directory.RetrievalOrigin{Via: "mdns", Href: "http://10.0.0.8/td"}}
	var invalid *td.ValidationError
	if _, _, err := dir.PutRetrieved(context.Background(), []byte(`{"id":"urn:x:y","title":"no security"}`), r); !errors.As(err, &invalid) {
		t.Errorf("invalid TD: %v", err)
	}
	if _, _, err := dir.PutRetrieved(context.Background(), retrievedTD("not a uri", "x"), r); !errors.As(err, &invalid) {
		t.Errorf("relative id: %v", err)
	}
	var request *directory.RequestError
	r.TTL = 0
	if _, _, err := dir.PutRetrieved(context.Background(), retrievedTD("urn:x:y", "x"), r); !errors.As(err, &request) {
		t.Errorf("no ttl: %v", err)
	}
	if m, _ := dir.Membership(context.Background()); m.Total != 0 {
		t.Errorf("%d Things registered", m.Total)
	}
}
