package sqlite

import (
	"context"
	"sync"
)

// keyedMutex serializes the writes to one id within the process: Put, Create, Delete and
// Update hold the id's lock from before they read or submit until their write is
// committed. Writes to different ids do not wait for each other and share group commits.
//
// Update needs it. Its write applies only if the row is still the version it read, and
// any other write to the id landing in between sends it back to read again: with Puts of
// the id arriving as fast as commits (a client re-registering in a loop), most attempts
// would lose, and n concurrent Updates of one id would need n rounds, one winner per
// commit, exhausting any bound on retries. Holding the lock, an Update reads the version
// the previous write left and nothing else can interleave.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	held  chan struct{} // holds a token while the lock is held
	users int           // holders and waiters; the entry goes when none are left
}

// lock waits for the id's lock, or for ctx to end, and returns the function that unlocks.
func (k *keyedMutex) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyLock)
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()

	select {
	case l.held <- struct{}{}:
		return func() {
			<-l.held
			k.leave(key, l)
		}, nil
	case <-ctx.Done():
		k.leave(key, l)
		return nil, ctx.Err()
	}
}

func (k *keyedMutex) leave(key string, l *keyLock) {
	k.mu.Lock()
	if l.users--; l.users == 0 {
		delete(k.locks, key)
	}
	k.mu.Unlock()
}
