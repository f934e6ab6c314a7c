package td

import (
	"crypto/sha256"
	"sync"
)

// verdictCache remembers documents that passed validation, by the SHA-256 of their bytes.
// JSON Schema validation is most of the cost of a registration, and Things re-register the
// same bytes again and again (restarts, periodic PUTs); identical bytes get the identical
// verdict, so the schema need not run again. Only successes are kept: a failure must be
// explained anew anyway. Two generations bound the memory: when the young one is full it
// becomes the old one, and what is still used is copied back on the next hit.
type verdictCache struct {
	mu       sync.Mutex
	young    map[[sha256.Size]byte]struct{}
	old      map[[sha256.Size]byte]struct{}
	capacity int
}

func newVerdictCache(capacity int) *verdictCache {
	return &verdictCache{young: make(map[[sha256.Size]byte]struct{}), capacity: capacity}
}

// valid reports whether key passed before; a nil cache remembers nothing.
func (c *verdictCache) valid(key [sha256.Size]byte) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.young[key]; ok {
		return true
	}
	if _, ok := c.old[key]; ok {
		c.addLocked(key)
		return true
	}
	return false
}

func (c *verdictCache) add(key [sha256.Size]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(key)
}

func (c *verdictCache) addLocked(key [sha256.Size]byte) {
	if len(c.young) >= c.capacity {
		c.old, c.young = c.young, make(map[[sha256.Size]byte]struct{}, c.capacity)
	}
	c.young[key] = struct{}{}
}
