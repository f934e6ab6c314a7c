package directory

import "sync"

// thingCache keeps recently read Things in memory so that a GET does not go to the store.
// It is only correct when every write to the store passes through this process's Service
// (the embedded store, which one process owns): the Service forgets an id after each
// write to it. A read that raced with a write must not put back what it read before the
// write; the generation, bumped by every forget, tells fill that a write happened in
// between. Two generations of maps bound the memory by bytes of documents.
type thingCache struct {
	mu         sync.Mutex
	generation uint64
	young, old map[string]Thing
	youngBytes int
	capacity   int // bytes of documents per generation
}

func newThingCache(capacityBytes int) *thingCache {
	if capacityBytes <= 0 {
		return nil
	}
	return &thingCache{young: map[string]Thing{}, capacity: capacityBytes}
}

// lookup returns the cached Thing with id and, for a miss, the generation to pass to fill.
func (c *thingCache) lookup(id string) (Thing, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.young[id]; ok {
		return t, 0, true
	}
	if t, ok := c.old[id]; ok {
		c.addLocked(t)
		return t, 0, true
	}
	return Thing{}, c.generation, false
}

// fill caches t, read from the store when the cache was at generation.
func (c *thingCache) fill(t Thing, generation uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == generation {
		c.addLocked(t)
	}
}

func (c *thingCache) addLocked(t Thing) {
	if c.youngBytes+len(t.Document) > c.capacity {
		c.old, c.young, c.youngBytes = c.young, map[string]Thing{}, 0
	}
	c.young[t.ID] = t
	c.youngBytes += len(t.Document)
}

// forget drops id after a write to it.
func (c *thingCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	if t, ok := c.young[id]; ok {
		c.youngBytes -= len(t.Document)
		delete(c.young, id)
	}
	delete(c.old, id)
}
