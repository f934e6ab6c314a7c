package directory

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lmosdir/lmosdir/td"
)

// The expansion runs behind the writes: a write only wakes it, and the store's list of
// Things without an expansion is the queue. So writes never wait for json-gold, a burst
// of writes piles up in the table rather than in memory, and what was pending when the
// process stopped is picked up when it starts again.

// batchPerWorker is how many pending Things one round hands to each worker.
const batchPerWorker = 16

// wakeExpansion tells RunExpansion that there is new work, without ever blocking a write.
func (s *Service) wakeExpansion() {
	select {
	case s.expansionWake <- struct{}{}:
	default:
	}
}

// RunExpansion derives the index and JSON-LD expansion of every Thing that lacks them,
// with workers goroutines, until ctx ends. It looks for work when a write wakes it and
// every interval, for writes made by other processes sharing the database.
func (s *Service) RunExpansion(ctx context.Context, workers int, interval time.Duration, log *slog.Logger) {
	workers = max(workers, 1)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		done, err := s.expandPending(ctx, workers)
		if err != nil && ctx.Err() == nil {
			log.Error("expanding things", "error", err)
		}
		if done > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.expansionWake:
		case <-ticker.C:
		}
	}
}

// expandPending derives one batch of pending Things and returns how many it saved.
func (s *Service) expandPending(ctx context.Context, workers int) (int, error) {
	pending, err := s.store.Unexpanded(ctx, s.Now(), workers*batchPerWorker)
	if err != nil || len(pending) == 0 {
		return 0, err
	}
	jobs := make(chan Thing)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		saved    int
		firstErr error
	)
	for range min(workers, len(pending)) {
		wg.Go(func() {
			for th := range jobs {
				ix, x := s.derive(th.Document)
				err := s.store.SaveDerived(ctx, th.ID, th.Document, ix, x)
				s.forget(th.ID)
				mu.Lock()
				if err == nil {
					saved++
				} else if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, th := range pending {
		jobs <- th
	}
	close(jobs)
	wg.Wait()
	return saved, firstErr
}

// derive computes what search and JSON-LD clients need of a stored document.
func (s *Service) derive(document []byte) (Index, Expansion) {
	decoded, err := td.DecodeJSON(document)
	doc, _ := decoded.(map[string]any)
	if err != nil || doc == nil {
		// Stored documents were validated; this only happens to data written by hand.
		return Index{Kind: td.KindThing}, Expansion{Problem: "the stored document is not a JSON object"}
	}
	ix := indexOf(document, doc, s.expander)
	if s.expander == nil {
		return ix, Expansion{Problem: "this directory runs without a JSON-LD processor"}
	}
	expanded, incomplete, err := s.expander.ExpandPartial(document)
	if err != nil {
		problem := err.Error()
		if incomplete != "" {
			problem = incomplete + "; " + problem
		}
		return ix, Expansion{Problem: problem}
	}
	return ix, Expansion{Expanded: expanded, Problem: incomplete}
}

// Expanded returns the JSON-LD expansion of the live Thing id, computing (and storing) it
// now when the background expansion has not reached it yet.
func (s *Service) Expanded(ctx context.Context, id string) (Expansion, error) {
	x, err := s.store.Expansion(ctx, id, s.Now())
	if err != nil || x.Done {
		return x, err
	}
	th, err := s.store.Get(ctx, id, s.Now())
	if err != nil {
		return Expansion{}, err
	}
	ix, x := s.derive(th.Document)
	x.Done = true
	defer s.forget(id)
	return x, s.store.SaveDerived(ctx, id, th.Document, ix, x)
}
