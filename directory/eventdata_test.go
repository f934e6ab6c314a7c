package directory

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

func TestUpdatePatch(t *testing.T) {
	for _, tc := range []struct {
		name, before, after, want string
	}{
		{"unchanged", `{"id":"urn:x","a":1}`, `{"id":"urn:x","a":1}`, `{"id":"urn:x"}`},
		{"changed and added", `{"id":"urn:x","a":1}`, `{"id":"urn:x","a":2,"b":"<&>"}`, `{"id":"urn:x","a":2,"b":"<&>"}`},
		{"removed", `{"id":"urn:x","a":1,"b":2}`, `{"id":"urn:x","b":2}`, `{"id":"urn:x","a":null}`},
		{"nested objects patched", `{"id":"urn:x","o":{"k":1,"l":2,"m":{"n":1}}}`, `{"id":"urn:x","o":{"k":1,"l":3,"m":{}}}`, `{"id":"urn:x","o":{"l":3,"m":{"n":null}}}`},
		{"arrays replaced whole", `{"id":"urn:x","a":[1,2]}`, `{"id":"urn:x","a":[1]}`, `{"id":"urn:x","a":[1]}`},
		{"object becomes a value", `{"id":"urn:x","a":{"b":1}}`, `{"id":"urn:x","a":"s"}`, `{"id":"urn:x","a":"s"}`},
		{"numbers keep their spelling", `{"id":"urn:x","n":1}`, `{"id":"urn:x","n":12345678901234567890.5e3}`, `{"id":"urn:x","n":12345678901234567890.5e3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Event{ID: 1, Type: EventUpdated, ThingID: "urn:x", Previous: []byte(tc.before), Document: []byte(tc.after)}
			got, err := updatePatch(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch = %s, want %s", got, tc.want)
			}
			// Applying the patch to the old TD gives the new one.
			merged, err := jsonpatch.MergePatch([]byte(tc.before), got)
			if err != nil {
				t.Fatal(err)
			}
			var m, a any
			if err := json.Unmarshal(merged, &m); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.after), &a); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, a) {
				t.Errorf("old TD patched = %s, want %s", merged, tc.after)
			}
		})
	}
}

func TestEventDataIsComputedOncePerEvent(t *testing.T) {
	s := &Service{}
	e := &Event{ID: 7, Type: EventUpdated, ThingID: "urn:x", Previous: []byte(`{"id":"urn:x","a":1}`), Document: []byte(`{"id":"urn:x","a":2}`)}
	first, err := s.EventData(e, true)
	if err != nil {
		t.Fatal(err)
	}
	e.Document, e.ThingID = []byte(`{"id":"urn:x","a":3}`), "urn:y" // a second computation would show it
	second, err := s.EventData(e, true)
	if err != nil || string(second) != string(first) {
		t.Fatalf("second EventData = %s, %v; want the cached %s", second, err, first)
	}
	if plain, err := s.EventData(e, false); err != nil || string(plain) != `{"id":"urn:y"}` {
		t.Fatalf("EventData without diff = %s, %v", plain, err)
	}
	for i, tc := range []struct {
		typ  EventType
		diff bool
		want string
	}{
		{EventCreated, false, `{"id":"urn:x"}`},
		{EventCreated, true, `{"id":"urn:x","a":3}`},
		{EventUpdated, false, `{"id":"urn:x"}`},
		{EventDeleted, true, `{"id":"urn:x"}`},
	} {
		e := &Event{ID: int64(100 + i), Type: tc.typ, ThingID: "urn:x", Document: []byte(`{"id":"urn:x","a":3}`)}
		if got, err := s.EventData(e, tc.diff); err != nil || string(got) != tc.want {
			t.Errorf("EventData(%s, diff %v) = %s, %v; want %s", tc.typ, tc.diff, got, err, tc.want)
		}
	}
}
