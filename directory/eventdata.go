package directory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/lmosdir/lmosdir/td"
)

// EventData is the data of e as WoT Discovery sends it: {"id": …} alone; with diff, the
// Enriched TD of a created Thing and the RFC 7396 merge patch from the old Enriched TD to
// the new one, always with id, of an updated Thing. A deleted Thing is {"id": …} either way.
// Every subscriber gets the same bytes for the same event: they are computed once.
func (s *Service) EventData(e *Event, diff bool) ([]byte, error) {
	if diff && e.Type == EventCreated {
		return e.Document, nil
	}
	entry := e.data
	if entry == nil {
		entry = s.eventData.entry(e.ID)
	}
	if !diff || e.Type == EventDeleted {
		entry.idOnce.Do(func() { entry.id = appendIDObject(nil, e.ThingID) })
		return entry.id, nil
	}
	entry.patchOnce.Do(func() { entry.patch, entry.err = updatePatch(e) })
	return entry.patch, entry.err
}

func appendIDObject(dst []byte, id string) []byte {
	quoted, _ := encodeJSON(id) // a string always encodes
	dst = append(dst, `{"id":`...)
	dst = append(dst, quoted...)
	return append(dst, '}')
}

// updatePatch is the merge patch of an update event, with id first. A member whose new
// value is null comes out as null, which a merge patch reads as "remove": RFC 7396 has no
// way to set a member to null, and TDs do not use null values.
func updatePatch(e *Event) ([]byte, error) {
	before, err := decodeObject(e.Previous)
	if err != nil {
		return nil, fmt.Errorf("event %d: the TD before the update: %w", e.ID, err)
	}
	after, err := decodeObject(e.Document)
	if err != nil {
		return nil, fmt.Errorf("event %d: the TD after the update: %w", e.ID, err)
	}
	patch := mergePatch(before, after)
	delete(patch, "id")
	var buf bytes.Buffer
	buf.Write(appendIDObject(nil, e.ThingID))
	if len(patch) == 0 {
		return buf.Bytes(), nil
	}
	buf.Truncate(buf.Len() - 1)
	buf.WriteByte(',')
	rest, err := encodeJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", e.ID, err)
	}
	buf.Write(rest[1:]) // the members after the opening brace
	return buf.Bytes(), nil
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

// eventDataCache keeps the data of recent events, which every subscriber sends: computed
// once, not once per subscriber, even when all of them ask at the same moment. Two
// generations of maps bound it by count.
type eventDataCache struct {
	mu         sync.Mutex
	young, old map[int64]*eventDataEntry
}

type eventDataEntry struct {
	idOnce    sync.Once
	id        []byte
	patchOnce sync.Once
	patch     []byte
	err       error
}

const eventDataCacheSize = 1024

// entry returns the cache entry of event id, new and empty on a miss.
func (c *eventDataCache) entry(id int64) *eventDataEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.young[id]; ok {
		return p
	}
	if c.young == nil || len(c.young) >= eventDataCacheSize {
		c.old, c.young = c.young, map[int64]*eventDataEntry{}
	}
	p, ok := c.old[id]
	if !ok {
		p = &eventDataEntry{}
	}
	c.young[id] = p
	return p
}
