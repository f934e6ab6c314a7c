package directory

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

func TestUpdatePatch(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := created.Add(time.Hour)
	for _, tc := range []struct {
		name, before, after, want string
	}{
		{"same document", `{"id":"urn:x","a":1}`, `{"id":"urn:x","a":1}`, `{"id":"urn:x","registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"changed and added", `{"id":"urn:x","a":1}`, `{"id":"urn:x","a":2,"b":"<&>"}`, `{"id":"urn:x","a":2,"b":"<&>","registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"removed", `{"id":"urn:x","a":1,"b":2}`, `{"id":"urn:x","b":2}`, `{"id":"urn:x","a":null,"registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"nested objects patched", `{"id":"urn:x","o":{"k":1,"l":2,"m":{"n":1}}}`, `{"id":"urn:x","o":{"k":1,"l":3,"m":{}}}`, `{"id":"urn:x","o":{"l":3,"m":{"n":null}},"registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"arrays replaced whole", `{"id":"urn:x","a":[1,2]}`, `{"id":"urn:x","a":[1]}`, `{"id":"urn:x","a":[1],"registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"object becomes a value", `{"id":"urn:x","a":{"b":1}}`, `{"id":"urn:x","a":"s"}`, `{"id":"urn:x","a":"s","registration":{"modified":"2026-01-02T03:34:05Z"}}`},
		{"numbers keep their spelling", `{"id":"urn:x","n":1}`, `{"id":"urn:x","n":12345678901234567890.5e3}`, `{"id":"urn:x","n":12345678901234567890.5e3,"registration":{"modified":"2026-01-02T03:34:05Z"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := Thing{ID: "urn:x", Document: []byte(tc.before), Created: created, Modified: created}
			after := Thing{ID: "urn:x", Document: []byte(tc.after), Created: created, Modified: created.Add(30 * time.Minute)}
			got, err := updatePatch(before, after, now)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch = %s, want %s", got, tc.want)
			}
			// Applied to the old Enriched TD, the patch gives the new one.
			merged, err := jsonpatch.MergePatch(before.Enriched(now), got)
			if err != nil {
				t.Fatal(err)
			}
			var m, a any
			if err := json.Unmarshal(merged, &m); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(after.Enriched(now), &a); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, a) {
				t.Errorf("old TD patched = %s, want %s", merged, after.Enriched(now))
			}
		})
	}
}

func TestUpdateEventsLeaveOutRenewals(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	current := Thing{ID: "urn:x", Document: []byte(`{"id":"urn:x"}`), Created: created, Modified: created, TTL: 60, Expires: created.Add(time.Minute)}
	renewed := current
	renewed.Expires = created.Add(2 * time.Minute)
	if events, err := UpdateEvents(current, renewed, created.Add(time.Minute)); err != nil || len(events) != 0 {
		t.Fatalf("a renewal recorded %v, %v", events, err)
	}
	// A change at the same microsecond (a frozen or coarse clock) is still a change.
	changed := current
	changed.Document = []byte(`{"id":"urn:x","title":"t"}`)
	events, err := UpdateEvents(current, changed, created)
	if err != nil || len(events) != 1 || events[0].Type != EventUpdated || string(events[0].Patch) != `{"id":"urn:x","title":"t"}` {
		t.Fatalf("a change recorded %+v, %v", events, err)
	}
}

func TestEventData(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		diff bool
		want string
	}{
		{Event{Type: EventCreated, ThingID: "urn:x", Document: []byte(`{"id":"urn:x","a":3}`)}, false, `{"id":"urn:x"}`},
		{Event{Type: EventCreated, ThingID: "urn:x", Document: []byte(`{"id":"urn:x","a":3}`)}, true, `{"id":"urn:x","a":3}`},
		{Event{Type: EventUpdated, ThingID: "urn:x", Patch: []byte(`{"id":"urn:x","a":4}`)}, false, `{"id":"urn:x"}`},
		{Event{Type: EventUpdated, ThingID: "urn:x", Patch: []byte(`{"id":"urn:x","a":4}`)}, true, `{"id":"urn:x","a":4}`},
		{Event{Type: EventDeleted, ThingID: "urn:<x>"}, true, `{"id":"urn:<x>"}`},
		{Event{Type: EventDeleted, ThingID: "urn:x", idData: []byte(`{"id":"shared"}`)}, false, `{"id":"shared"}`},
	} {
		if got := EventData(&tc.e, tc.diff); string(got) != tc.want {
			t.Errorf("EventData(%s, diff %v) = %s, want %s", tc.e.Type, tc.diff, got, tc.want)
		}
	}
}
