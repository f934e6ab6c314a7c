package directory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/td"
)

// Retrieval describes a TD the directory fetched itself, from a Thing that announced
// itself on the LAN.
type Retrieval struct {
	// TTL is how long the registration lives unless renewed; the directory's maximum ttl
	// caps it.
	TTL time.Duration
	// At is when the TD was fetched.
	At time.Time
	// Origin says where the TD came from; it is served in the registration information.
	Origin RetrievalOrigin
}

// RetrievalOrigin is the registration's "origin" member for a TD the directory fetched.
type RetrievalOrigin struct {
	// Via names the discovery mechanism, e.g. "mdns".
	Via string `json:"via"`
	// Instance is the name the Thing announced itself under.
	Instance string `json:"instance,omitempty"`
	// Href is the URL the TD was fetched from.
	Href string `json:"href"`
}

// RetrievedOutcome says what PutRetrieved did.
type RetrievedOutcome int

// What PutRetrieved did.
const (
	RetrievedCreated   RetrievedOutcome = iota + 1 // a new registration
	RetrievedReplaced                              // the TD or its origin changed
	RetrievedRenewed                               // the same TD, its registration renewed
	RetrievedUnchanged                             // the same TD, its registration fresh enough
)

// retrievedNamespace makes the ids of anonymous retrieved TDs: one URL, one id, so that
// fetching the TD again updates the registration rather than adding another.
var retrievedNamespace = uuid.MustParse("5f6bb1f4-1d5e-4c59-9c1a-3f0e07b0b3a8")

// RetrievedID is the id PutRetrieved gives the anonymous TD fetched from href.
func RetrievedID(href string) string {
	return "urn:uuid:" + uuid.NewSHA1(retrievedNamespace, []byte(href)).String()
}

// PutRetrieved registers a TD the directory fetched itself, under its own id or, when it
// has none, under RetrievedID(r.Origin.Href), with a ttl of r.TTL. The TD's own
// registration member is ignored: the announcement, not the TD, says how long it lives.
// Fetching the same TD again writes nothing until half of the ttl has passed, and then
// only renews the registration, so that polling Things does not flood the event stream.
func (s *Service) PutRetrieved(ctx context.Context, raw []byte, r Retrieval) (string, RetrievedOutcome, error) {
	doc, err := s.validator.Validate(raw)
	if err != nil {
		return "", 0, err
	}
	id, ok := doc["id"].(string)
	if !ok {
		id = RetrievedID(r.Origin.Href)
	}
	if err := checkID(id); err != nil {
		return id, 0, err
	}
	ttl := r.TTL
	if s.maxTTL > 0 && ttl > s.maxTTL {
		ttl = s.maxTTL
	}
	if ttl <= 0 {
		return id, 0, invalidf("$.registration.ttl", "a retrieved TD needs a positive ttl, got %s", r.TTL)
	}
	origin, err := json.Marshal(r.Origin)
	if err != nil {
		return id, 0, err
	}
	prepared, err := td.Prepare(raw, id)
	if err != nil {
		return id, 0, err
	}
	now := s.Now()
	current, err := s.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return id, 0, err
	case bytes.Equal(current.Document, prepared) && bytes.Equal(current.Origin, origin):
		if current.TTL == ttl.Seconds() && current.Expires.Sub(now) > ttl/2 {
			return id, RetrievedUnchanged, nil
		}
		return id, RetrievedRenewed, s.renewRetrieved(ctx, id, now, ttl, r.At)
	}
	ix := indexOf(raw, doc, s.expander)
	t := Thing{
		ID: id, Document: prepared, Created: now, Modified: now, Expires: now.Add(ttl), TTL: ttl.Seconds(),
		Retrieved: r.At.UTC().Truncate(time.Microsecond), Origin: origin, Index: &ix,
	}
	defer s.written(id)
	created, err := s.store.Put(ctx, t, now)
	if err != nil {
		return id, 0, err
	}
	if created {
		return id, RetrievedCreated, nil
	}
	return id, RetrievedReplaced, nil
}

func (s *Service) renewRetrieved(ctx context.Context, id string, now time.Time, ttl time.Duration, at time.Time) error {
	defer s.forget(id)
	return s.store.Update(ctx, id, now, func(current Thing) (Thing, error) {
		current.TTL, current.Expires = ttl.Seconds(), now.Add(ttl)
		current.Retrieved = at.UTC().Truncate(time.Microsecond)
		return current, nil
	})
}
