package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/lmos/target"
)

// maxCachedThings bounds the cache of parsed TDs; past it the cache starts over, which
// costs one read and parse per Thing still in use.
const maxCachedThings = 10000

var errThingGone = errors.New("the Thing is not registered")

// cachedThing is a parsed TD and when its registration expires (zero: never).
type cachedThing struct {
	thing   *target.Thing
	expires time.Time
}

// thingCache keeps parsed TDs so that relaying a message reads nothing from the store.
// It is only filled while the gateway follows the directory's changes; a read that raced
// with a change must not put back what it read before it, which the generation, bumped by
// every change, tells.
type thingCache struct {
	mu         sync.Mutex
	enabled    bool
	generation uint64
	things     map[string]cachedThing
}

func newThingCache() *thingCache {
	return &thingCache{things: map[string]cachedThing{}}
}

func (c *thingCache) enable() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enabled = true
	c.generation++
}

func (c *thingCache) disable() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enabled = false
	c.generation++
	clear(c.things)
}

func (c *thingCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	delete(c.things, id)
}

func (c *thingCache) lookup(id string) (cachedThing, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.things[id]
	return t, c.generation, ok
}

func (c *thingCache) fill(id string, t cachedThing, generation uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.enabled || generation != c.generation {
		return
	}
	if len(c.things) >= maxCachedThings {
		clear(c.things)
	}
	c.things[id] = t
}

// thing returns the parsed TD of a live registration, or errThingGone.
func (g *Gateway) thing(ctx context.Context, id string) (*target.Thing, error) {
	now := g.dir.Now()
	cached, generation, ok := g.things.lookup(id)
	// A keep-alive renews a registration without an event, so an expiry the cache holds
	// may be out of date: past it, the directory decides.
	if ok && !cached.expires.IsZero() && !cached.expires.After(now) {
		ok = false
	}
	if !ok {
		t, err := g.dir.Get(ctx, id)
		if errors.Is(err, directory.ErrNotFound) {
			return nil, errThingGone
		}
		if err != nil {
			return nil, err
		}
		parsed, err := target.Parse(t.Document)
		if err != nil {
			return nil, err
		}
		cached = cachedThing{thing: parsed, expires: t.Expires}
		g.things.fill(id, cached, generation)
	}
	if !cached.expires.IsZero() && !cached.expires.After(now) {
		return nil, errThingGone
	}
	return cached.thing, nil
}
