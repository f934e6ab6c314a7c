package directory

import (
	"fmt"
	"testing"
)

func TestThingCacheRefusesFillAfterForget(t *testing.T) {
	c := newThingCache(1 << 20)
	_, generation, ok := c.lookup("urn:x")
	if ok {
		t.Fatal("hit in an empty cache")
	}
	// A write lands between the store read and the fill: what was read is stale.
	c.forget("urn:x")
	c.fill(Thing{ID: "urn:x", Document: []byte("{}")}, generation)
	if _, _, ok := c.lookup("urn:x"); ok {
		t.Error("a read that raced with a write was cached")
	}
	_, generation, _ = c.lookup("urn:x")
	c.fill(Thing{ID: "urn:x", Document: []byte("{}")}, generation)
	if _, _, ok := c.lookup("urn:x"); !ok {
		t.Error("an undisturbed read was not cached")
	}
}

func TestThingCacheIsBoundedByBytes(t *testing.T) {
	c := newThingCache(100)
	doc := make([]byte, 30)
	for i := range 20 {
		_, generation, _ := c.lookup(fmt.Sprint(i))
		c.fill(Thing{ID: fmt.Sprint(i), Document: doc}, generation)
	}
	total := 0
	for _, m := range []map[string]Thing{c.young, c.old} {
		for _, thing := range m {
			total += len(thing.Document)
		}
	}
	if total > 200 {
		t.Errorf("cache holds %d bytes, more than two generations of 100", total)
	}
	if _, _, ok := c.lookup("19"); !ok {
		t.Error("the newest entry is missing")
	}
	if _, _, ok := c.lookup("0"); ok {
		t.Error("the oldest entry survived")
	}
}

func TestThingCacheOff(t *testing.T) {
	if newThingCache(0) != nil {
		t.Error("a zero capacity must turn the cache off")
	}
}
