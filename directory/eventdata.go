package directory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/lmosdir/lmosdir/td"
)

// EventData is the data of e as WoT Discovery sends it: {"id": …} alone; with diff, the
// Enriched TD of a created Thing and the merge patch of an updated one (Event.Patch). A
// deleted Thing is {"id": …} either way.
func EventData(e *Event, diff bool) []byte {
	switch {
	case diff && e.Type == EventCreated:
		return e.Document
	case diff && e.Type == EventUpdated:
		return e.Patch
	case e.idData != nil:
		return e.idData
	default:
		return appendIDObject(nil, e.ThingID)
	}
}

func appendIDObject(dst []byte, id string) []byte {
	quoted, _ := encodeJSON(id) // a string always encodes
	dst = append(dst, `{"id":`...)
	dst = append(dst, quoted...)
	return append(dst, '}')
}

// updatePatch is the merge patch from before to after as Enriched TDs retrieved at now, with
// the id first. A re-registration of the same bytes, the common case, only changes the
// registration, and only that is compared. A member whose new value is null comes out as
// null, which a merge patch reads as "remove": RFC 7396 has no way to set a member to
// null, and TDs do not use null values.
func updatePatch(before, after Thing, now time.Time) ([]byte, error) {
	var old, changed []byte
	if bytes.Equal(before.Document, after.Document) {
		old = append(append([]byte(`{"registration":`), before.appendRegistration(nil, now)...), '}')
		changed = append(append([]byte(`{"registration":`), after.appendRegistration(nil, now)...), '}')
	} else {
		old, changed = before.Enriched(now), after.Enriched(now)
	}
	oldObject, err := decodeObject(old)
	if err != nil {
		return nil, fmt.Errorf("the TD before: %w", err)
	}
	newObject, err := decodeObject(changed)
	if err != nil {
		return nil, fmt.Errorf("the TD after: %w", err)
	}
	patch := mergePatch(oldObject, newObject)
	delete(patch, "id")
	out := appendIDObject(nil, after.ID)
	if len(patch) == 0 {
		return out, nil
	}
	rest, err := encodeJSON(patch)
	if err != nil {
		return nil, err
	}
	out[len(out)-1] = ','
	return append(out, rest[1:]...), nil // the members after the opening brace
}

func decodeObject(raw []byte) (map[string]any, error) {
	v, err := td.DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	object, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return object, nil
}

// mergePatch returns the RFC 7396 merge patch that turns before into after: removed members
// are null, objects present on both sides are patched member by member, and every other
// changed value, arrays included, is replaced whole.
func mergePatch(before, after map[string]any) map[string]any {
	patch := map[string]any{}
	for name := range before {
		if _, ok := after[name]; !ok {
			patch[name] = nil
		}
	}
	for name, value := range after {
		old, ok := before[name]
		switch {
		case !ok:
			patch[name] = value
		case reflect.DeepEqual(old, value):
		default:
			oldObject, wasObject := old.(map[string]any)
			newObject, isObject := value.(map[string]any)
			if wasObject && isObject {
				patch[name] = mergePatch(oldObject, newObject)
			} else {
				patch[name] = value
			}
		}
	}
	return patch
}

// encodeJSON encodes v without escaping <, > and &, which TD texts often hold.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
