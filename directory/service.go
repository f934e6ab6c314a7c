// Package directory is the core of lmosdir: registering, reading, updating, listing and
// expiring Thing Descriptions. It knows no HTTP and no SQL; a Store keeps the data.
package directory

import (
	"context"
	"encoding/json"
	"math"
	"net/url"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/td"
)

// Options tune a Service.
type Options struct {
	// MaxTTL is the longest registration a client may ask for with ttl or expires; 0: no limit.
	MaxTTL time.Duration
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// ReadCacheBytes keeps up to about twice this many bytes of recently read TDs in
	// memory; 0 turns the cache off. Only for a store that no other process writes.
	ReadCacheBytes int
	// Expander expands TDs and their @type values; nil: types are indexed as written and
	// there is no JSON-LD expansion.
	Expander Expander
	// Search limits /search and JSONPath queries.
	Search SearchLimits
	// EventBuffer is how many events a subscriber may fall behind before it is dropped;
	// 0: DefaultEventBuffer.
	EventBuffer int
	// MaxSubscribers bounds the open event subscriptions; 0: DefaultMaxSubscribers.
	MaxSubscribers int
}

// Service is the directory's behavior on top of a Store.
type Service struct {
	store     Store
	validator *td.Validator
	maxTTL    time.Duration
	clock     func() time.Time
	cache     *thingCache // nil: off
	expander  Expander
	limits    SearchLimits
	// expansionWake has room for one signal: any number of writes while the expansion
	// is busy make it look for work once more.
	expansionWake chan struct{}
	events        *eventHub
}

// NewService returns a Service keeping Things in store and validating them with validator.
func NewService(store Store, validator *td.Validator, opts Options) *Service {
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Service{
		store: store, validator: validator, maxTTL: opts.MaxTTL, clock: clock,
		cache: newThingCache(opts.ReadCacheBytes), expander: opts.Expander,
		limits: opts.Search.withDefaults(), expansionWake: make(chan struct{}, 1),
		events: newEventHub(store, opts.EventBuffer, opts.MaxSubscribers),
	}
}

// Now is the directory's current time, at the precision the stores keep.
func (s *Service) Now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}

// Put registers the TD raw under id, replacing a live registration with that id. created
// reports whether the Thing is new.
func (s *Service) Put(ctx context.Context, id string, raw []byte) (created bool, err error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	doc, err := s.validator.Validate(raw)
	if err != nil {
		return false, err
	}
	if bodyID, ok := doc["id"]; ok && bodyID != id {
		return false, invalidf("$.id", "the id in the TD (%v) differs from the id in the URL (%s); they must be equal", bodyID, id)
	}
	return s.put(ctx, id, raw, doc)
}

// put stores the validated TD raw (decoded as doc) under id.
func (s *Service) put(ctx context.Context, id string, raw []byte, doc map[string]any) (bool, error) {
	t, err := s.newThing(id, raw, doc)
	if err != nil {
		return false, err
	}
	defer s.written(id)
	return s.store.Put(ctx, t, t.Created)
}

// Create registers an anonymous TD (one without id) and returns the id the directory gave it.
func (s *Service) Create(ctx context.Context, raw []byte) (string, error) {
	doc, err := s.validator.Validate(raw)
	if err != nil {
		return "", err
	}
	if _, ok := doc["id"]; ok {
		return "", invalidf("$.id", "a TD with an id must be registered with PUT /things/{id}; POST /things is for anonymous TDs, which have no id")
	}
	return s.create(ctx, raw, doc)
}

// Import registers raw under its own id, or as an anonymous TD when it has none, and
// returns the id: a bulk load needs no URL to name the Thing.
func (s *Service) Import(ctx context.Context, raw []byte) (string, error) {
	doc, err := s.validator.Validate(raw)
	if err != nil {
		return "", err
	}
	id, ok := doc["id"].(string)
	if !ok {
		return s.create(ctx, raw, doc)
	}
	if err := checkID(id); err != nil {
		return id, err
	}
	_, err = s.put(ctx, id, raw, doc)
	return id, err
}

// create stores the validated anonymous TD raw (decoded as doc) under a new id.
func (s *Service) create(ctx context.Context, raw []byte, doc map[string]any) (string, error) {
	id := "urn:uuid:" + uuid.NewString()
	t, err := s.newThing(id, raw, doc)
	if err != nil {
		return "", err
	}
	defer s.written(id)
	return id, s.store.Create(ctx, t, t.Created)
}

func (s *Service) newThing(id string, raw []byte, doc map[string]any) (Thing, error) {
	now := s.Now()
	reg, err := s.registrationOf(doc, now)
	if err != nil {
		return Thing{}, err
	}
	prepared, err := td.Prepare(raw, id)
	if err != nil {
		return Thing{}, err
	}
	ix := indexOf(raw, doc, s.expander)
	return Thing{ID: id, Document: prepared, Created: now, Modified: now, Expires: reg.expires, TTL: reg.ttl, Index: &ix}, nil
}

// Get returns the live Thing with id.
func (s *Service) Get(ctx context.Context, id string) (Thing, error) {
	now := s.Now()
	if s.cache == nil {
		return s.store.Get(ctx, id, now)
	}
	t, generation, ok := s.cache.lookup(id)
	if ok {
		if !t.LiveAt(now) {
			return Thing{}, ErrNotFound
		}
		return t, nil
	}
	t, err := s.store.Get(ctx, id, now)
	if err == nil {
		s.cache.fill(t, generation)
	}
	return t, err
}

// written is what follows every write to id, whatever its outcome (an error may come after
// the store changed): the read cache forgets id, and the expansion and the event delivery
// look for work. Event delivery would learn of the write from the store too; being told
// at once saves a subscriber the store's notification delay.
func (s *Service) written(id string) {
	s.forget(id)
	s.wakeExpansion()
	s.events.poke()
}

// forget drops id from the read cache.
func (s *Service) forget(id string) {
	if s.cache != nil {
		s.cache.forget(id)
	}
}

// Patch applies an RFC 7396 merge patch to the Thing with id; the result must be a valid TD.
// An empty patch ({}) changes nothing but renews a registration that has a ttl.
func (s *Service) Patch(ctx context.Context, id string, patch []byte) error {
	decoded, err := td.DecodeJSON(patch)
	if err != nil {
		return err
	}
	members, ok := decoded.(map[string]any)
	if !ok {
		return invalidf("$", "a merge patch for a TD must be a JSON object")
	}
	if patchID, ok := members["id"]; ok && patchID != id {
		return invalidf("$.id", "a patch cannot change or remove the id of a Thing (%s)", id)
	}
	if len(members) == 0 {
		return s.Renew(ctx, id)
	}
	now := s.Now()
	defer s.written(id)
	return s.store.Update(ctx, id, now, func(current Thing) (Thing, error) {
		merged, err := jsonpatch.MergePatch(current.Document, patch)
		if err != nil {
			return Thing{}, invalidf("$", "the merge patch cannot be applied: %v", err)
		}
		doc, err := s.validator.Validate(merged)
		if err != nil {
			return Thing{}, err
		}
		reg, err := s.registrationOf(doc, now)
		if err != nil {
			return Thing{}, err
		}
		if !reg.given {
			reg.ttl, reg.expires = current.TTL, current.Expires
			if current.TTL > 0 {
				reg.expires = now.Add(ttlDuration(current.TTL))
			}
		}
		prepared, err := td.Prepare(merged, id)
		if err != nil {
			return Thing{}, err
		}
		ix := indexOf(merged, doc, s.expander)
		return Thing{ID: id, Document: prepared, Created: current.Created, Modified: now, Expires: reg.expires, TTL: reg.ttl, Index: &ix}, nil
	})
}

// Renew is the keep-alive: the registration of the Thing with id, if it has a ttl, lasts
// that long again from now. Nothing else changes.
func (s *Service) Renew(ctx context.Context, id string) error {
	now := s.Now()
	// A keep-alive leaves the document as it is: nothing to expand, and heartbeats, the
	// most frequent write, must not send the expansion to the store each time.
	defer s.forget(id)
	return s.store.Update(ctx, id, now, func(current Thing) (Thing, error) {
		if current.TTL > 0 {
			current.Expires = now.Add(ttlDuration(current.TTL))
		}
		return current, nil
	})
}

// Delete removes the Thing with id.
func (s *Service) Delete(ctx context.Context, id string) error {
	defer s.forget(id)
	defer s.events.poke()
	return s.store.Delete(ctx, id, s.Now())
}

// List streams the live Things of page to fn in id order.
func (s *Service) List(ctx context.Context, page Page, fn func(Thing) error) error {
	return s.store.List(ctx, page, s.Now(), fn)
}

// Membership describes the set of live Things.
func (s *Service) Membership(ctx context.Context) (Membership, error) {
	return s.store.Membership(ctx, s.Now())
}

// PurgeExpired deletes expired registrations and returns how many were deleted.
func (s *Service) PurgeExpired(ctx context.Context) (int, error) {
	defer s.events.poke()
	return s.store.PurgeExpired(ctx, s.Now())
}

// PurgeEvents deletes the events older than retention and returns how many.
func (s *Service) PurgeEvents(ctx context.Context, retention time.Duration) (int, error) {
	return s.store.PurgeEvents(ctx, s.Now().Add(-retention))
}

// Ready reports whether the directory can serve requests, event streams included.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.store.Ready(ctx); err != nil {
		return err
	}
	if !s.eventsRunning() {
		return ErrEventsStopped
	}
	return nil
}

// checkID accepts the ids a TD may have: absolute URIs (TD 1.1 `id` is an anyURI and the
// directory must be able to name the Thing in a URL).
func checkID(id string) error {
	if !StorableID(id) {
		return UnstorableIDError(id)
	}
	u, err := url.Parse(id)
	if err != nil || u.Scheme == "" {
		return invalidf("$.id", "the id %q is not an absolute URI (for example urn:uuid:6f1d3a7a-1f97-4e6b-b45f-f3c2e1c84c77)", id)
	}
	return nil
}

type registration struct {
	given   bool // the TD carried ttl or expires
	ttl     float64
	expires time.Time
}

// registrationOf reads the client's wishes from a TD's registration member. Only ttl and
// expires are the client's to set; created, modified and retrieved are the directory's and
// are ignored. ttl wins over expires because it stays right however long the request took.
func (s *Service) registrationOf(doc map[string]any, now time.Time) (registration, error) {
	info, _ := doc["registration"].(map[string]any)
	var reg registration
	if n, ok := info["ttl"].(json.Number); ok {
		ttl, err := n.Float64()
		if err != nil || ttl <= 0 || math.IsInf(ttl, 0) {
			return reg, invalidf("$.registration.ttl", "ttl must be a positive number of seconds, got %s", n)
		}
		if s.maxTTL > 0 && ttl > s.maxTTL.Seconds() {
			return reg, invalidf("$.registration.ttl", "ttl %s exceeds this directory's maximum of %g seconds", n, s.maxTTL.Seconds())
		}
		reg.given, reg.ttl, reg.expires = true, ttl, now.Add(ttlDuration(ttl))
		return reg, nil
	}
	if text, ok := info["expires"].(string); ok {
		expires, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return reg, invalidf("$.registration.expires", "expires must be an RFC 3339 date-time with a time zone, got %q", text)
		}
		if !expires.After(now) {
			return reg, invalidf("$.registration.expires", "expires (%s) is not in the future", text)
		}
		if s.maxTTL > 0 && expires.Sub(now) > s.maxTTL {
			return reg, invalidf("$.registration.expires", "expires is more than this directory's maximum ttl of %g seconds away", s.maxTTL.Seconds())
		}
		reg.given, reg.expires = true, expires.UTC().Truncate(time.Microsecond)
	}
	return reg, nil
}

func ttlDuration(seconds float64) time.Duration {
	if seconds >= math.MaxInt64/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds * float64(time.Second)).Truncate(time.Microsecond)
}
