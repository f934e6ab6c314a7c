// Package storetest is the contract every directory.Store must meet, written once and run
// against each implementation. It tests only what the Store interface promises, so that a
// store passing it can replace another without the directory noticing.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/pathquery"
)

// Run runs the contract suite. open must return a new, empty store for the test it is given
// and close it when that test ends.
func Run(t *testing.T, open func(t *testing.T) directory.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, directory.Store)
	}{
		{"PutCreatesThenReplaces", testPutCreatesThenReplaces},
		{"PutKeepsDocumentBytes", testPutKeepsDocumentBytes},
		{"FieldsRoundTrip", testFieldsRoundTrip},
		{"Create", testCreate},
		{"GetAndDeleteNotFound", testGetAndDeleteNotFound},
		{"Delete", testDelete},
		{"ExpiredIsAbsent", testExpiredIsAbsent},
		{"PutOverExpiredCreates", testPutOverExpiredCreates},
		{"CreateOverExpired", testCreateOverExpired},
		{"Update", testUpdate},
		{"UpdateError", testUpdateError},
		{"UpdateNotFound", testUpdateNotFound},
		{"UpdateIsAtomic", testUpdateIsAtomic},
		{"RetrievedAndOrigin", testRetrievedAndOrigin},
		{"UpdateKeepsRetrievedAndOrigin", testUpdateKeepsRetrievedAndOrigin},
		{"ReplaceTakesRetrievedAndOrigin", testReplaceTakesRetrievedAndOrigin},
		{"ListOrder", testListOrder},
		{"ListWindows", testListWindows},
		{"ListSkipsExpired", testListSkipsExpired},
		{"ListFnError", testListFnError},
		{"ListWhere", testListWhere},
		{"MembershipTag", testMembershipTag},
		{"MembershipExpiry", testMembershipExpiry},
		{"MembershipSwap", testMembershipSwap},
		{"PurgeExpired", testPurgeExpired},
		{"PurgeExpiredMany", testPurgeExpiredMany},
		{"ConcurrentPutSameID", testConcurrentPutSameID},
		{"ConcurrentPutDifferentIDs", testConcurrentPutDifferentIDs},
		{"ConcurrentCreateSameID", testConcurrentCreateSameID},
		{"UnstorableIDs", testUnstorableIDs},
		{"SearchFilters", testSearchFilters},
		{"SearchHitFields", testSearchHitFields},
		{"SearchText", testSearchText},
		{"SearchPaging", testSearchPaging},
		{"SearchFacets", testSearchFacets},
		{"SearchFacetLimit", testSearchFacetLimit},
		{"SearchSkipsExpiredAndUnindexed", testSearchSkipsExpiredAndUnindexed},
		{"SearchNilIndexKeepsOnUpdate", testSearchNilIndexKeepsOnUpdate},
		{"ExpansionLifecycle", testExpansionLifecycle},
		{"UnexpandedLimitAndExpiry", testUnexpandedLimitAndExpiry},
		{"EventsOfWrites", testEventsOfWrites},
		{"EventsWindow", testEventsWindow},
		{"PurgeEvents", testPurgeEvents},
		{"EventsInCommitOrder", testEventsInCommitOrder},
		{"WatchEvents", testWatchEvents},
		{"Ready", testReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

// t0 is the suite's clock: every call passes an explicit now, so nothing sleeps. It has
// microseconds, the precision a Thing's times carry.
var t0 = time.Date(2031, time.March, 4, 5, 6, 7, 123456000, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newThing(id string, created time.Time) directory.Thing {
	return directory.Thing{
		ID:       id,
		Document: fmt.Appendf(nil, `{"id":%q,"title":"thing"}`, id),
		Created:  created,
		Modified: created,
	}
}

func expiring(t directory.Thing, expires time.Time) directory.Thing {
	t.Expires = expires
	return t
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func put(t *testing.T, s directory.Store, th directory.Thing, now time.Time) bool {
	t.Helper()
	created, err := s.Put(ctx(t), th, now)
	if err != nil {
		t.Fatalf("Put(%q): %v", th.ID, err)
	}
	return created
}

func get(t *testing.T, s directory.Store, id string, now time.Time) directory.Thing {
	t.Helper()
	th, err := s.Get(ctx(t), id, now)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return th
}

func wantNotFound(t *testing.T, s directory.Store, id string, now time.Time) {
	t.Helper()
	if th, err := s.Get(ctx(t), id, now); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Get(%q) at %v = %+v, %v; want ErrNotFound", id, now, th, err)
	}
}

func list(t *testing.T, s directory.Store, page directory.Page, now time.Time) []directory.Thing {
	t.Helper()
	var things []directory.Thing
	err := s.List(ctx(t), page, now, func(th directory.Thing) error {
		things = append(things, th)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%+v): %v", page, err)
	}
	return things
}

func ids(things []directory.Thing) []string {
	out := make([]string, len(things))
	for i, th := range things {
		out[i] = th.ID
	}
	return out
}

func membership(t *testing.T, s directory.Store, now time.Time) directory.Membership {
	t.Helper()
	m, err := s.Membership(ctx(t), now)
	if err != nil {
		t.Fatalf("Membership: %v", err)
	}
	return m
}

// sameThing fails unless got is want field for field; times compare as instants, since
// a store may return them in another location.
func sameThing(t *testing.T, got, want directory.Thing) {
	t.Helper()
	if got.ID != want.ID {
		t.Errorf("ID = %q, want %q", got.ID, want.ID)
	}
	if !bytes.Equal(got.Document, want.Document) {
		t.Errorf("Document of %q =\n%q\nwant\n%q", want.ID, got.Document, want.Document)
	}
	if !got.Created.Equal(want.Created) {
		t.Errorf("Created of %q = %v, want %v", want.ID, got.Created, want.Created)
	}
	if !got.Modified.Equal(want.Modified) {
		t.Errorf("Modified of %q = %v, want %v", want.ID, got.Modified, want.Modified)
	}
	if got.Expires.IsZero() != want.Expires.IsZero() || !got.Expires.Equal(want.Expires) {
		t.Errorf("Expires of %q = %v, want %v", want.ID, got.Expires, want.Expires)
	}
	if got.TTL != want.TTL {
		t.Errorf("TTL of %q = %v, want %v", want.ID, got.TTL, want.TTL)
	}
	if got.Retrieved.IsZero() != want.Retrieved.IsZero() || !got.Retrieved.Equal(want.Retrieved) {
		t.Errorf("Retrieved of %q = %v, want %v", want.ID, got.Retrieved, want.Retrieved)
	}
	// nil, not merely empty: a nil Origin is what marks a TD a client registered.
	if (got.Origin == nil) != (want.Origin == nil) || !bytes.Equal(got.Origin, want.Origin) {
		t.Errorf("Origin of %q = %q, want %q", want.ID, got.Origin, want.Origin)
	}
}

func testPutCreatesThenReplaces(t *testing.T, s directory.Store) {
	first := newThing("urn:x:1", at(0))
	first.Expires, first.TTL = at(time.Hour), 3600
	if !put(t, s, first, at(0)) {
		t.Fatal("first Put reported a replace, want a create")
	}
	sameThing(t, get(t, s, first.ID, at(0)), first)

	second := directory.Thing{
		ID:       first.ID,
		Document: []byte(`{"id":"urn:x:1","title":"replaced","version":2}`),
		Created:  at(time.Minute), // a replace must ignore this and keep the stored one
		Modified: at(time.Minute),
	}
	if put(t, s, second, at(time.Minute)) {
		t.Fatal("second Put reported a create, want a replace")
	}
	want := second
	want.Created = first.Created
	sameThing(t, get(t, s, first.ID, at(time.Minute)), want)
	// The replace dropped the expiry: the Thing outlives the first registration's.
	sameThing(t, get(t, s, first.ID, at(2*time.Hour)), want)

	if put(t, s, first, at(2*time.Minute)) {
		t.Fatal("third Put reported a create, want a replace")
	}
	sameThing(t, get(t, s, first.ID, at(2*time.Minute)), first)
	if got := ids(list(t, s, directory.Page{}, at(2*time.Minute))); !slices.Equal(got, []string{first.ID}) {
		t.Fatalf("List after replaces = %q, want one Thing", got)
	}
}

// documents are registered bytes a store must give back unchanged, byte for byte.
var documents = map[string]string{
	"member order": `{"title":"z first","id":"urn:doc:order","@context":"https://www.w3.org/2022/wot/td/v1.1","b":1,"a":2}`,
	"number spellings": `{"id":"urn:doc:numbers","a":1.0e2,"b":1E400,"c":-0,"d":0.10,"e":1e-400,` +
		`"f":12345678901234567890123456789,"g":-1.5E+3,"h":100,"i":[1.0,1.00,1e0]}`,
	"unicode": `{"id":"urn:doc:unicode","title":"Schalter für die Küche","titles":{"ja":"台所のスイッチ","ar":"مفتاح المطبخ"},` +
		`"emoji":"🔌💡","combining":"e\u0301 é"}`,
	"escapes": `{"id":"urn:doc:escapes","s":"quote \" backslash \\ slash \/ \b\f\n\r\t",` +
		`"u":"\u00e4\u00E4\u20ac","pair":"\ud83d\ude00","nul":"a\u0000b","lone high":"\ud800x","lone low":"\udc00",` +
		`"escaped backslash then u":"\\u0000","key \u0041":"v"}`,
	"whitespace":        " \t\r\n{ \"id\" : \"urn:doc:whitespace\" ,\n\t\"a\"\t:\r\n[ 1 , 2 ] ,\"b\" : { } }\n\t ",
	"duplicate members": `{"id":"urn:doc:duplicates","a":1,"a":2,"a":{"x":1,"x":2}}`,
	"deep nesting":      `{"id":"urn:doc:deep","a":` + strings.Repeat(`[{"b":`, 64) + `null` + strings.Repeat(`}]`, 64) + `}`,
	"large":             `{"id":"urn:doc:large","padding":"` + strings.Repeat("0123456789abcdef", 1<<14) + `"}`,
}

func testPutKeepsDocumentBytes(t *testing.T, s directory.Store) {
	want := map[string]directory.Thing{}
	for name, doc := range documents {
		th := newThing("urn:doc:"+name, at(0))
		th.Document = []byte(doc)
		want[th.ID] = th
		if !put(t, s, th, at(0)) {
			t.Errorf("Put %s: reported a replace", name)
		}
		sameThing(t, get(t, s, th.ID, at(0)), th)
	}
	listed := list(t, s, directory.Page{}, at(0))
	if len(listed) != len(want) {
		t.Fatalf("List returned %d Things, want %d", len(listed), len(want))
	}
	for _, th := range listed {
		sameThing(t, th, want[th.ID])
	}
	// Update stores what change returns as verbatim as Put does.
	for id, th := range want {
		doc := documents[strings.TrimPrefix(id, "urn:doc:")]
		err := s.Update(ctx(t), id, at(time.Second), func(current directory.Thing) (directory.Thing, error) {
			sameThing(t, current, th)
			current.Document = []byte(doc + " ")
			return current, nil
		})
		if err != nil {
			t.Fatalf("Update(%q): %v", id, err)
		}
		th.Document = []byte(doc + " ")
		sameThing(t, get(t, s, id, at(time.Second)), th)
	}
}

func testFieldsRoundTrip(t *testing.T, s directory.Store) {
	india := time.FixedZone("IST", 5*3600+1800)
	things := []directory.Thing{
		{ID: "urn:f:no-expiry", Created: at(0), Modified: at(0)},
		{ID: "urn:f:expires", Created: at(0), Modified: at(time.Microsecond), Expires: at(time.Hour + time.Microsecond)},
		{ID: "urn:f:ttl", Created: at(0), Modified: at(0), Expires: at(1500 * time.Millisecond), TTL: 1.5},
		{ID: "urn:f:ttl-tiny", Created: at(0), Modified: at(0), Expires: at(time.Microsecond), TTL: 1e-6},
		{ID: "urn:f:ttl-huge", Created: at(0), Modified: at(0), Expires: time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), TTL: 1e300},
		{ID: "urn:f:ttl-third", Created: at(0), Modified: at(0), Expires: at(time.Hour), TTL: 1.0 / 3},
		{ID: "urn:f:old", Created: time.Date(1969, 7, 20, 20, 17, 40, 1000, time.UTC), Modified: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{ID: "urn:f:zone", Created: at(0).In(india), Modified: at(time.Second).In(india), Expires: at(time.Hour).In(india), TTL: 3600},
		{ID: "urn:f:whole-seconds", Created: t0.Truncate(time.Second), Modified: t0.Truncate(time.Second)},
	}
	for _, th := range things {
		th.Document = fmt.Appendf(nil, `{"id":%q}`, th.ID)
		put(t, s, th, at(0))
		sameThing(t, get(t, s, th.ID, at(0)), th)
	}
}

func testCreate(t *testing.T, s directory.Store) {
	first := newThing("urn:x:c", at(0))
	if err := s.Create(ctx(t), first, at(0)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	sameThing(t, get(t, s, first.ID, at(0)), first)

	second := newThing(first.ID, at(time.Second))
	second.Document = []byte(`{"id":"urn:x:c","title":"second"}`)
	if err := s.Create(ctx(t), second, at(time.Second)); !errors.Is(err, directory.ErrExists) {
		t.Fatalf("Create over a live Thing = %v, want ErrExists", err)
	}
	sameThing(t, get(t, s, first.ID, at(time.Second)), first)

	// A Create is a create for Put's purposes too.
	if put(t, s, second, at(2*time.Second)) {
		t.Fatal("Put after Create reported a create")
	}
}

func testGetAndDeleteNotFound(t *testing.T, s directory.Store) {
	wantNotFound(t, s, "urn:x:missing", at(0))
	if err := s.Delete(ctx(t), "urn:x:missing", at(0)); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("Delete of a missing Thing = %v, want ErrNotFound", err)
	}
	put(t, s, newThing("urn:x:a", at(0)), at(0))
	// Ids are compared exactly: no case folding, no trimming, no prefix match.
	for _, id := range []string{"urn:x:A", "URN:x:a", "urn:x:a ", "urn:x:", "urn:x:ab"} {
		wantNotFound(t, s, id, at(0))
	}
}

func testDelete(t *testing.T, s directory.Store) {
	a, b := newThing("urn:x:a", at(0)), newThing("urn:x:b", at(0))
	put(t, s, a, at(0))
	put(t, s, b, at(0))
	if err := s.Delete(ctx(t), a.ID, at(time.Second)); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantNotFound(t, s, a.ID, at(time.Second))
	sameThing(t, get(t, s, b.ID, at(time.Second)), b)
	if err := s.Delete(ctx(t), a.ID, at(time.Second)); !errors.Is(err, directory.ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
	if !put(t, s, a, at(2*time.Second)) {
		t.Fatal("Put after Delete reported a replace, want a create")
	}
}

func testExpiredIsAbsent(t *testing.T, s directory.Store) {
	th := expiring(newThing("urn:x:e", at(0)), at(10*time.Second))
	put(t, s, th, at(0))
	before, expiry, after := at(10*time.Second-time.Microsecond), at(10*time.Second), at(time.Hour)

	sameThing(t, get(t, s, th.ID, before), th)
	if got := ids(list(t, s, directory.Page{}, before)); !slices.Equal(got, []string{th.ID}) {
		t.Fatalf("List just before expiry = %q", got)
	}
	if m := membership(t, s, before); m.Total != 1 {
		t.Fatalf("Membership just before expiry: Total = %d, want 1", m.Total)
	}

	for _, now := range []time.Time{expiry, after} { // expires not after now: gone
		wantNotFound(t, s, th.ID, now)
		if err := s.Delete(ctx(t), th.ID, now); !errors.Is(err, directory.ErrNotFound) {
			t.Fatalf("Delete at %v = %v, want ErrNotFound", now, err)
		}
		called := false
		err := s.Update(ctx(t), th.ID, now, func(current directory.Thing) (directory.Thing, error) {
			called = true
			return current, nil
		})
		if !errors.Is(err, directory.ErrNotFound) || called {
			t.Fatalf("Update at %v = %v (change called: %v), want ErrNotFound without calling change", now, err, called)
		}
		if got := list(t, s, directory.Page{}, now); len(got) != 0 {
			t.Fatalf("List at %v = %q, want nothing", now, ids(got))
		}
		if m := membership(t, s, now); m.Total != 0 {
			t.Fatalf("Membership at %v: Total = %d, want 0", now, m.Total)
		}
	}
}

func testPutOverExpiredCreates(t *testing.T, s directory.Store) {
	old := expiring(newThing("urn:x:p", at(0)), at(10*time.Second))
	old.TTL = 10
	put(t, s, old, at(0))
	renewed := newThing(old.ID, at(10*time.Second))
	renewed.Document = []byte(`{"id":"urn:x:p","title":"renewed"}`)
	if !put(t, s, renewed, at(10*time.Second)) {
		t.Fatal("Put over an expired Thing reported a replace, want a create")
	}
	// Created is the newcomer's, not the expired registration's.
	sameThing(t, get(t, s, old.ID, at(time.Hour)), renewed)
	if put(t, s, renewed, at(time.Hour)) {
		t.Fatal("Put over the renewed Thing reported a create")
	}
	if got := ids(list(t, s, directory.Page{}, at(time.Hour))); !slices.Equal(got, []string{old.ID}) {
		t.Fatalf("List = %q, want the Thing once", got)
	}
}

func testCreateOverExpired(t *testing.T, s directory.Store) {
	old := expiring(newThing("urn:x:c", at(0)), at(10*time.Second))
	put(t, s, old, at(0))
	if err := s.Create(ctx(t), newThing(old.ID, at(5*time.Second)), at(5*time.Second)); !errors.Is(err, directory.ErrExists) {
		t.Fatalf("Create before expiry = %v, want ErrExists", err)
	}
	fresh := newThing(old.ID, at(10*time.Second))
	fresh.Document = []byte(`{"id":"urn:x:c","title":"fresh"}`)
	if err := s.Create(ctx(t), fresh, at(10*time.Second)); err != nil {
		t.Fatalf("Create over an expired Thing: %v", err)
	}
	sameThing(t, get(t, s, old.ID, at(time.Hour)), fresh)
	if m := membership(t, s, at(time.Hour)); m.Total != 1 {
		t.Fatalf("Membership Total = %d, want 1", m.Total)
	}
}

func testUpdate(t *testing.T, s directory.Store) {
	th := expiring(newThing("urn:x:u", at(0)), at(time.Hour))
	th.TTL = 3600
	put(t, s, th, at(0))
	other := newThing("urn:x:other", at(0))
	put(t, s, other, at(0))

	want := directory.Thing{
		ID:       th.ID,
		Document: []byte(`{"id":"urn:x:u","title":"patched"}`),
		Created:  at(-time.Hour), // stored as returned, like every field
		Modified: at(time.Minute),
		Expires:  at(2 * time.Hour),
		TTL:      7200,
	}
	err := s.Update(ctx(t), th.ID, at(time.Minute), func(current directory.Thing) (directory.Thing, error) {
		sameThing(t, current, th)
		return want, nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameThing(t, get(t, s, th.ID, at(time.Minute)), want)
	sameThing(t, get(t, s, other.ID, at(time.Minute)), other)

	// Clearing the expiry stores no expiry.
	want.Expires, want.TTL = time.Time{}, 0
	err = s.Update(ctx(t), th.ID, at(2*time.Minute), func(directory.Thing) (directory.Thing, error) { return want, nil })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameThing(t, get(t, s, th.ID, at(24*time.Hour)), want)

	// An Update that sets an expiry in the past makes the Thing absent.
	gone := want
	gone.Expires = at(3 * time.Minute)
	err = s.Update(ctx(t), th.ID, at(3*time.Minute-time.Microsecond), func(directory.Thing) (directory.Thing, error) { return gone, nil })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	wantNotFound(t, s, th.ID, at(3*time.Minute))
}

func testUpdateError(t *testing.T, s directory.Store) {
	th := newThing("urn:x:u", at(0))
	put(t, s, th, at(0))
	refused := errors.New("refused by change")
	err := s.Update(ctx(t), th.ID, at(time.Second), func(current directory.Thing) (directory.Thing, error) {
		current.Document = []byte(`{"id":"urn:x:u","title":"must not be stored"}`)
		current.Modified = at(time.Second)
		return current, refused
	})
	if err != refused { //nolint:errorlint // the contract is the very same error value
		t.Fatalf("Update = %v, want change's error as is", err)
	}
	sameThing(t, get(t, s, th.ID, at(time.Second)), th)

	wrapped := &directory.RequestError{Detail: "bad patch", Field: "$.title"}
	err = s.Update(ctx(t), th.ID, at(time.Second), func(directory.Thing) (directory.Thing, error) { return directory.Thing{}, wrapped })
	if err != error(wrapped) { //nolint:errorlint // the contract is the very same error value
		t.Fatalf("Update = %v, want change's error as is", err)
	}
	sameThing(t, get(t, s, th.ID, at(time.Second)), th)
	// The row is not left locked: a later Update goes through.
	err = s.Update(ctx(t), th.ID, at(2*time.Second), func(current directory.Thing) (directory.Thing, error) { return current, nil })
	if err != nil {
		t.Fatalf("Update after a refused one: %v", err)
	}
}

func testUpdateNotFound(t *testing.T, s directory.Store) {
	called := false
	err := s.Update(ctx(t), "urn:x:missing", at(0), func(current directory.Thing) (directory.Thing, error) {
		called = true
		return current, nil
	})
	if !errors.Is(err, directory.ErrNotFound) || called {
		t.Fatalf("Update of a missing Thing = %v (change called: %v), want ErrNotFound without calling change", err, called)
	}
	wantNotFound(t, s, "urn:x:missing", at(0))
}

func testUpdateIsAtomic(t *testing.T, s directory.Store) {
	cx := ctx(t)
	const writers = 32
	th := newThing("urn:x:counter", at(0))
	th.Document = []byte(`{"id":"urn:x:counter","count":0,"writers":[]}`)
	put(t, s, th, at(0))

	type counter struct {
		ID      string `json:"id"`
		Count   int    `json:"count"`
		Writers []int  `json:"writers"`
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			errs <- s.Update(cx, th.ID, at(time.Second), func(current directory.Thing) (directory.Thing, error) {
				var c counter
				if err := json.Unmarshal(current.Document, &c); err != nil {
					return directory.Thing{}, err
				}
				c.Count++
				c.Writers = append(c.Writers, w)
				doc, err := json.Marshal(c)
				current.Document = doc
				return current, err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	var c counter
	if err := json.Unmarshal(get(t, s, th.ID, at(time.Second)).Document, &c); err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.Writers)
	everyone := make([]int, writers)
	for w := range everyone {
		everyone[w] = w
	}
	if c.Count != writers || !slices.Equal(c.Writers, everyone) {
		t.Fatalf("after %d concurrent Updates: count %d, writers %v; an Update was lost", writers, c.Count, c.Writers)
	}
}

// origin is an Origin as the directory makes one, with what a store must not normalize:
// member order, spacing, escapes and a number's spelling.
const origin = `{"via":"mdns", "instance":"Lampe K\u00fcche","href":"http://10.0.0.7:80/td","n":1.0e2}`

// fetched is a Thing the directory fetched itself, at a time with microseconds in another
// zone than UTC.
func fetched(id string, created time.Time) directory.Thing {
	th := newThing(id, created)
	th.Retrieved = created.Add(-1500 * time.Microsecond).In(time.FixedZone("CET", 3600))
	th.Origin = []byte(origin)
	return th
}

func testRetrievedAndOrigin(t *testing.T, s directory.Store) {
	mdns := expiring(fetched("urn:r:mdns", at(0)), at(time.Hour))
	mdns.TTL = 3600
	created := fetched("urn:r:created", at(0))
	created.Origin = []byte(`{"via":"mdns","href":"http://[fe80::1%25eth0]/td"}`)
	client := newThing("urn:r:client", at(0))
	put(t, s, mdns, at(0))
	if err := s.Create(ctx(t), created, at(0)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	put(t, s, client, at(0))

	// client reads back with a zero Retrieved and a nil Origin.
	want := []directory.Thing{client, created, mdns} // in id order
	for _, th := range want {
		sameThing(t, get(t, s, th.ID, at(0)), th)
	}
	listed := list(t, s, directory.Page{}, at(0))
	if got := ids(listed); !slices.Equal(got, ids(want)) {
		t.Fatalf("List = %q, want %q", got, ids(want))
	}
	for i, th := range listed {
		sameThing(t, th, want[i])
	}
	// The JSONPath pre-filter's listing reads the same columns its own way.
	q, err := pathquery.Compile("$[?@.title=='thing']", 0)
	if err != nil {
		t.Fatal(err)
	}
	passes := q.Passes()
	if len(passes) != 1 || passes[0].Cond == nil {
		t.Fatalf("no pre-filter for the title: %v", passes)
	}
	var filtered []directory.Thing
	err = s.List(ctx(t), directory.Page{Where: passes[0].Cond}, at(0), func(th directory.Thing) error {
		filtered = append(filtered, th)
		return nil
	})
	if err != nil {
		t.Fatalf("List with a condition: %v", err)
	}
	if got := ids(filtered); !slices.Equal(got, ids(want)) {
		t.Fatalf("List with a condition = %q, want %q", got, ids(want))
	}
	for i, th := range filtered {
		sameThing(t, th, want[i])
	}
}

func testUpdateKeepsRetrievedAndOrigin(t *testing.T, s directory.Store) {
	th := expiring(fetched("urn:r:u", at(0)), at(time.Minute))
	th.TTL = 60
	put(t, s, th, at(0))
	want := th
	// update checks that change is given want, lets edit change it as the directory's
	// changes do, and checks that the Thing is stored as edit left it.
	update := func(now time.Time, edit func(*directory.Thing)) {
		t.Helper()
		err := s.Update(ctx(t), th.ID, now, func(current directory.Thing) (directory.Thing, error) {
			sameThing(t, current, want)
			edit(&current)
			return current, nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		edit(&want)
		sameThing(t, get(t, s, th.ID, now), want)
	}

	// A renewal, which leaves the document.
	update(at(time.Second), func(next *directory.Thing) { next.Expires = at(2 * time.Minute) })
	// A change of the document.
	update(at(2*time.Second), func(next *directory.Thing) {
		next.Document = []byte(`{"id":"urn:r:u","title":"patched"}`)
		next.Modified = at(2 * time.Second)
	})
	// Zero and nil clear them: the Thing is then as a client's.
	update(at(3*time.Second), func(next *directory.Thing) { next.Retrieved, next.Origin = time.Time{}, nil })
	sameThing(t, listOnly(t, s, at(3*time.Second)), want)
	// And an Update can set them again.
	update(at(4*time.Second), func(next *directory.Thing) {
		next.Retrieved = at(4 * time.Second)
		next.Origin = []byte(`{"via":"mdns","href":"http://10.0.0.8/td"}`)
	})
	sameThing(t, listOnly(t, s, at(4*time.Second)), want)
}

func testReplaceTakesRetrievedAndOrigin(t *testing.T, s directory.Store) {
	th := fetched("urn:r:p", at(0))
	put(t, s, th, at(0))

	// A client's PUT over a fetched TD: the registration is the client's now.
	client := newThing(th.ID, at(time.Second))
	client.Document = []byte(`{"id":"urn:r:p","title":"the client's"}`)
	if put(t, s, client, at(time.Second)) {
		t.Fatal("Put over a live Thing reported a create")
	}
	want := client
	want.Created = th.Created
	sameThing(t, get(t, s, th.ID, at(time.Second)), want)
	sameThing(t, listOnly(t, s, at(time.Second)), want)

	// Fetched again, from elsewhere: the new Thing's values, not a mix.
	refetched := fetched(th.ID, at(2*time.Second))
	refetched.Origin = []byte(`{"via":"mdns","href":"http://10.0.0.9/td"}`)
	put(t, s, refetched, at(2*time.Second))
	want = refetched
	want.Created = th.Created
	sameThing(t, get(t, s, th.ID, at(2*time.Second)), want)

	// A Create in the place of an expired fetched TD.
	expired := expiring(fetched("urn:r:c", at(0)), at(time.Second))
	put(t, s, expired, at(0))
	fresh := newThing(expired.ID, at(time.Second))
	if err := s.Create(ctx(t), fresh, at(time.Second)); err != nil {
		t.Fatalf("Create over an expired Thing: %v", err)
	}
	sameThing(t, get(t, s, fresh.ID, at(time.Second)), fresh)
}

// listOnly lists the store, which must hold one live Thing at now, and returns it.
func listOnly(t *testing.T, s directory.Store, now time.Time) directory.Thing {
	t.Helper()
	listed := list(t, s, directory.Page{}, now)
	if len(listed) != 1 {
		t.Fatalf("List = %q, want one Thing", ids(listed))
	}
	return listed[0]
}

// orderIDs sort differently under a language's collation, by case, or as code units of
// UTF-16; the contract is code-point order, which for UTF-8 Go strings is < .
var orderIDs = []string{
	"urn:x:B", "urn:x:a", "urn:x:ä", "urn:x:Z", "urn:x:z", "urn:x:A", "urn:x:aa", "urn:x:a b",
	"urn:x:a/b", "urn:x:a%2Fb", "urn:x:a#b", "urn:x:a-b", "urn:x:a_b", "urn:x:a.b",
	"urn:x:😀", "urn:x:\uff5e", "urn:x:\U0001F600a", "urn:x:é", "urn:x:e\u0301", "urn:x:ß", "urn:x:ss",
	"urn:x:10", "urn:x:9", "urn:x:", "http://example.com/things/1", "https://example.com/a?b=c&d=e",
}

func testListOrder(t *testing.T, s directory.Store) {
	// Insert in an order that is neither sorted nor reverse-sorted.
	for i := range orderIDs {
		id := orderIDs[(i*7)%len(orderIDs)]
		put(t, s, newThing(id, at(0)), at(0))
	}
	want := slices.Clone(orderIDs)
	slices.Sort(want)
	if got := ids(list(t, s, directory.Page{}, at(0))); !slices.Equal(got, want) {
		t.Fatalf("List order:\n got %q\nwant %q", got, want)
	}
}

func testListWindows(t *testing.T, s directory.Store) {
	var all []string
	for i := range 10 {
		id := fmt.Sprintf("urn:x:%02d", i)
		all = append(all, id)
		th := newThing(id, at(0))
		if i%3 == 0 {
			th.Expires = at(time.Hour) // expiring but live: listed like the others
		}
		put(t, s, th, at(0))
	}
	window := func(offset, limit int) []string {
		if offset > len(all) {
			return nil
		}
		end := len(all)
		if limit > 0 && offset+limit < end {
			end = offset + limit
		}
		return all[offset:end]
	}
	for _, p := range []directory.Page{
		{}, {Limit: 3}, {Offset: 3}, {Offset: 3, Limit: 3}, {Offset: 8, Limit: 5}, {Offset: 9, Limit: 1},
		{Offset: 10}, {Offset: 10, Limit: 1}, {Offset: 25, Limit: 2}, {Limit: 10}, {Limit: 11}, {Limit: 1},
		{Limit: -1}, {Offset: 2, Limit: -5},
	} {
		got := ids(list(t, s, p, at(0)))
		if want := window(p.Offset, p.Limit); !slices.Equal(got, want) {
			t.Errorf("List(%+v) = %q, want %q", p, got, want)
		}
	}
	// Consecutive windows tile the listing.
	var tiled []string
	for offset := 0; offset < len(all)+3; offset += 3 {
		tiled = append(tiled, ids(list(t, s, directory.Page{Offset: offset, Limit: 3}, at(0)))...)
	}
	if !slices.Equal(tiled, all) {
		t.Fatalf("pages of 3 = %q, want %q", tiled, all)
	}
}

func testListSkipsExpired(t *testing.T, s directory.Store) {
	// Expired Things neither appear nor count towards the offset or the limit.
	for i := range 10 {
		th := newThing(fmt.Sprintf("urn:x:%02d", i), at(0))
		if i%2 == 0 {
			th.Expires = at(time.Duration(i+1) * time.Second)
		}
		put(t, s, th, at(0))
	}
	now := at(time.Minute)
	if got, want := ids(list(t, s, directory.Page{}, now)), []string{"urn:x:01", "urn:x:03", "urn:x:05", "urn:x:07", "urn:x:09"}; !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	if got, want := ids(list(t, s, directory.Page{Offset: 1, Limit: 2}, now)), []string{"urn:x:03", "urn:x:05"}; !slices.Equal(got, want) {
		t.Fatalf("List(offset 1, limit 2) = %q, want %q", got, want)
	}
	// At an earlier now, Things expired later are live again: expiry is relative to now.
	if got, want := ids(list(t, s, directory.Page{Offset: 2, Limit: 3}, at(6*time.Second))), []string{"urn:x:05", "urn:x:06", "urn:x:07"}; !slices.Equal(got, want) {
		t.Fatalf("List(offset 2, limit 3) at 6s = %q, want %q", got, want)
	}
}

func testListFnError(t *testing.T, s directory.Store) {
	for i := range 5 {
		put(t, s, newThing(fmt.Sprintf("urn:x:%d", i), at(0)), at(0))
	}
	stop := errors.New("stop listing")
	// More rounds than any sane pool has connections: a listing that did not release its
	// rows would make a later round hang.
	for round := range 40 {
		var seen []string
		err := s.List(ctx(t), directory.Page{}, at(0), func(th directory.Thing) error {
			seen = append(seen, th.ID)
			if len(seen) == 2 {
				return fmt.Errorf("round %d: %w", round, stop)
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Fatalf("List = %v, want fn's error", err)
		}
		if want := []string{"urn:x:0", "urn:x:1"}; !slices.Equal(seen, want) {
			t.Fatalf("fn saw %q, want %q then stop", seen, want)
		}
	}
	if got := list(t, s, directory.Page{}, at(0)); len(got) != 5 {
		t.Fatalf("List after stopped listings = %d Things, want 5", len(got))
	}
}

func testMembershipTag(t *testing.T, s directory.Store) {
	now := at(0)
	m := membership(t, s, now)
	if m.Total != 0 {
		t.Fatalf("empty store: Total = %d", m.Total)
	}
	tags := []string{m.Tag}
	step := func(what string, total int, changed bool) {
		t.Helper()
		m := membership(t, s, now)
		if m.Total != total {
			t.Fatalf("after %s: Total = %d, want %d", what, m.Total, total)
		}
		last := tags[len(tags)-1]
		if changed && m.Tag == last {
			t.Fatalf("after %s: tag %q did not change", what, m.Tag)
		}
		if !changed && m.Tag != last {
			t.Fatalf("after %s: tag changed from %q to %q", what, last, m.Tag)
		}
		tags = append(tags, m.Tag)
	}
	a, b, c := newThing("urn:x:a", now), newThing("urn:x:b", now), newThing("urn:x:c", now)
	put(t, s, a, now)
	step("creating a", 1, true)
	put(t, s, a, now)
	step("replacing a", 1, false)
	if err := s.Create(ctx(t), b, now); err != nil {
		t.Fatal(err)
	}
	step("creating b", 2, true)
	err := s.Update(ctx(t), a.ID, now, func(th directory.Thing) (directory.Thing, error) {
		th.Document = []byte(`{"id":"urn:x:a","title":"patched"}`)
		th.Modified = now.Add(time.Second)
		return th, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	step("patching a", 2, false)
	put(t, s, expiring(b, at(time.Hour)), now)
	step("replacing b with an expiring b", 2, false)
	if err := s.Delete(ctx(t), a.ID, now); err != nil {
		t.Fatal(err)
	}
	step("deleting a", 1, true)
	put(t, s, c, now)
	step("creating c", 2, true)
	// Same count, another set: the older member leaves, a newer one arrives.
	if err := s.Delete(ctx(t), b.ID, now); err != nil {
		t.Fatal(err)
	}
	put(t, s, a, now)
	step("deleting b and creating a", 2, true)
	// Same count, another set: the newest member leaves, another arrives.
	if err := s.Delete(ctx(t), a.ID, now); err != nil {
		t.Fatal(err)
	}
	put(t, s, b, now)
	step("deleting a and creating b", 2, true)
	if err := s.Delete(ctx(t), b.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx(t), c.ID, now); err != nil {
		t.Fatal(err)
	}
	step("deleting everything", 0, true)
}

func testMembershipExpiry(t *testing.T, s directory.Store) {
	put(t, s, newThing("urn:x:stays", at(0)), at(0))
	put(t, s, expiring(newThing("urn:x:goes", at(0)), at(time.Minute)), at(0))
	live := membership(t, s, at(time.Minute-time.Microsecond))
	if live.Total != 2 {
		t.Fatalf("before expiry: Total = %d, want 2", live.Total)
	}
	expired := membership(t, s, at(time.Minute))
	if expired.Total != 1 || expired.Tag == live.Tag {
		t.Fatalf("at expiry: %+v, want Total 1 and a tag other than %q", expired, live.Tag)
	}
	// Re-registering the expired id at a later now is a new arrival: the set changes again.
	put(t, s, newThing("urn:x:goes", at(time.Hour)), at(time.Hour))
	back := membership(t, s, at(time.Hour))
	if back.Total != 2 || back.Tag == expired.Tag {
		t.Fatalf("after re-registering: %+v, want Total 2 and a tag other than %q", back, expired.Tag)
	}
}

func testMembershipSwap(t *testing.T, s directory.Store) {
	// One id leaves and another arrives, so the count stays the same; whichever member
	// leaves (the oldest arrival, the newest, one in between) the tag must change, or a
	// client would keep a stale page.
	now := at(0)
	live := []string{"urn:s:0", "urn:s:1", "urn:s:2"} // in order of arrival
	spare := []string{"urn:s:3", "urn:s:4", "urn:s:5"}
	for _, id := range live {
		put(t, s, newThing(id, now), now)
	}
	prev := membership(t, s, now)
	for i := range 12 {
		k := []int{0, 2, 1}[i%3]
		out, in := live[k], spare[0]
		if err := s.Delete(ctx(t), out, now); err != nil {
			t.Fatal(err)
		}
		put(t, s, newThing(in, now), now)
		live = append(slices.Delete(live, k, k+1), in)
		spare = append(spare[1:], out)
		m := membership(t, s, now)
		if m.Total != 3 || m.Tag == prev.Tag {
			t.Fatalf("swap %d (%s out, %s in): %+v, before %+v; want Total 3 and another tag", i, out, in, m, prev)
		}
		prev = m
	}
}

func testPurgeExpired(t *testing.T, s directory.Store) {
	expired := []directory.Thing{
		expiring(newThing("urn:p:1", at(0)), at(time.Second)),
		expiring(newThing("urn:p:2", at(0)), at(time.Minute)),
		expiring(newThing("urn:p:3", at(0)), at(time.Hour)), // exactly at now: expired
	}
	livings := []directory.Thing{
		newThing("urn:p:forever", at(0)),
		expiring(newThing("urn:p:later", at(0)), at(time.Hour+time.Microsecond)),
	}
	for _, th := range append(slices.Clone(expired), livings...) {
		put(t, s, th, at(0))
	}
	n, err := s.PurgeExpired(ctx(t), at(time.Hour))
	if err != nil || n != len(expired) {
		t.Fatalf("PurgeExpired = %d, %v; want %d", n, err, len(expired))
	}
	for _, th := range expired {
		// Gone for good: not even an earlier now finds it.
		wantNotFound(t, s, th.ID, at(0))
		if !put(t, s, th, at(0)) {
			t.Fatalf("Put of purged %q reported a replace", th.ID)
		}
		if err := s.Delete(ctx(t), th.ID, at(0)); err != nil {
			t.Fatal(err)
		}
	}
	for _, th := range livings {
		sameThing(t, get(t, s, th.ID, at(time.Hour)), th)
	}
	if n, err := s.PurgeExpired(ctx(t), at(time.Hour)); err != nil || n != 0 {
		t.Fatalf("second PurgeExpired = %d, %v; want 0", n, err)
	}
	if n, err := s.PurgeExpired(ctx(t), at(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("PurgeExpired later = %d, %v; want 1", n, err)
	}
	sameThing(t, get(t, s, "urn:p:forever", at(24*time.Hour)), livings[0])
}

func testPurgeExpiredMany(t *testing.T, s directory.Store) {
	cx := ctx(t)
	// More than a store is likely to delete in one batch.
	const expired, live = 2345, 7
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < expired+live; i += 8 {
				th := newThing(fmt.Sprintf("urn:m:%05d", i), at(0))
				if i < expired {
					th.Expires = at(time.Duration(1+i%60) * time.Second)
				}
				if _, err := s.Put(cx, th, at(0)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, err := s.PurgeExpired(cx, at(time.Minute))
	if err != nil || n != expired {
		t.Fatalf("PurgeExpired = %d, %v; want %d", n, err, expired)
	}
	if m := membership(t, s, at(0)); m.Total != live {
		t.Fatalf("after purge, Total at an earlier now = %d, want %d", m.Total, live)
	}
}

func testConcurrentPutSameID(t *testing.T, s directory.Store) {
	cx := ctx(t)
	const writers = 32
	for round := range 5 {
		id := fmt.Sprintf("urn:x:same-%d", round)
		var wg sync.WaitGroup
		results := make(chan error, writers)
		var mu sync.Mutex
		var creators []int
		for w := range writers {
			wg.Go(func() {
				th := newThing(id, at(time.Duration(w)*time.Microsecond))
				th.Document = fmt.Appendf(nil, `{"id":%q,"writer":%d}`, id, w)
				created, err := s.Put(cx, th, at(time.Second))
				if created {
					mu.Lock()
					creators = append(creators, w)
					mu.Unlock()
				}
				results <- err
			})
		}
		wg.Wait()
		close(results)
		for err := range results {
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
		}
		if len(creators) != 1 {
			t.Fatalf("round %d: writers %v of %d concurrent Puts of one new id reported a create, want exactly 1", round, creators, writers)
		}
		// The stored Created is the creator's, kept by every replace; the document is
		// the last writer's, whole.
		got := get(t, s, id, at(time.Second))
		if want := at(time.Duration(creators[0]) * time.Microsecond); !got.Created.Equal(want) {
			t.Fatalf("round %d: Created = %v, want the creating writer's %v", round, got.Created, want)
		}
		var doc struct {
			ID     string
			Writer int
		}
		if err := json.Unmarshal(got.Document, &doc); err != nil || doc.ID != id || !bytes.Equal(got.Document, fmt.Appendf(nil, `{"id":%q,"writer":%d}`, id, doc.Writer)) {
			t.Fatalf("round %d: stored document %q is no writer's (%v)", round, got.Document, err)
		}
	}
	if m := membership(t, s, at(time.Second)); m.Total != 5 {
		t.Fatalf("Total = %d, want 5", m.Total)
	}
}

func testConcurrentPutDifferentIDs(t *testing.T, s directory.Store) {
	cx := ctx(t)
	const writers = 32
	var wg sync.WaitGroup
	type result struct {
		created bool
		err     error
	}
	results := make(chan result, writers)
	for w := range writers {
		wg.Go(func() {
			c, err := s.Put(cx, newThing(fmt.Sprintf("urn:x:%02d", w), at(0)), at(0))
			results <- result{c, err}
		})
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil || !r.created {
			t.Fatalf("concurrent Put of a new id = %v, %v; want a create", r.created, r.err)
		}
	}
	if got := list(t, s, directory.Page{}, at(0)); len(got) != writers {
		t.Fatalf("List = %d Things, want %d", len(got), writers)
	}
	if m := membership(t, s, at(0)); m.Total != writers {
		t.Fatalf("Total = %d, want %d", m.Total, writers)
	}
}

func testConcurrentCreateSameID(t *testing.T, s directory.Store) {
	cx := ctx(t)
	const writers = 32
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			th := newThing("urn:x:once", at(0))
			th.Document = fmt.Appendf(nil, `{"id":"urn:x:once","writer":%d}`, w)
			errs <- s.Create(cx, th, at(0))
		})
	}
	wg.Wait()
	close(errs)
	created := 0
	for err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, directory.ErrExists):
			t.Fatalf("Create = %v, want nil or ErrExists", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d concurrent Creates of one id succeeded, want exactly 1", created, writers)
	}
}

func testReady(t *testing.T, s directory.Store) {
	if err := s.Ready(ctx(t)); err != nil {
		t.Fatalf("Ready on a freshly opened store: %v", err)
	}
}

// testUnstorableIDs: ids that directory.StorableID refuses are refused on write and never
// found, whatever the store could physically keep, so both stores accept the same ids.
func testUnstorableIDs(t *testing.T, s directory.Store) {
	ctx := context.Background()
	for _, id := range []string{"urn:x:a\x00b", "urn:x:\xff"} {
		th := newThing("urn:x:placeholder", t0)
		th.ID = id
		var reqErr *directory.RequestError
		if _, err := s.Put(ctx, th, t0); !errors.As(err, &reqErr) || reqErr.Field != "$.id" {
			t.Errorf("Put(%q) = %v, want a RequestError on $.id", id, err)
		}
		if err := s.Create(ctx, th, t0); !errors.As(err, &reqErr) {
			t.Errorf("Create(%q) = %v, want a RequestError", id, err)
		}
		if _, err := s.Get(ctx, id, t0); !errors.Is(err, directory.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", id, err)
		}
		if err := s.Delete(ctx, id, t0); !errors.Is(err, directory.ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want ErrNotFound", id, err)
		}
		err := s.Update(ctx, id, t0, func(th directory.Thing) (directory.Thing, error) { return th, nil })
		if !errors.Is(err, directory.ErrNotFound) {
			t.Errorf("Update(%q) = %v, want ErrNotFound", id, err)
		}
	}
}
