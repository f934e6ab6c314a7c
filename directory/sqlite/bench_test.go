package sqlite

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

// benchParallel is the number of goroutines calling the store at once, as many HTTP
// requests would.
const benchParallel = 32

// agentDocument returns td/testdata/agent-4k.json as the parts before and after its id,
// so that a benchmark can register it under many ids without searching it every time.
func agentDocument(b *testing.B) (before, after []byte) {
	b.Helper()
	doc, err := os.ReadFile("../../td/testdata/agent-4k.json")
	if err != nil {
		b.Fatal(err)
	}
	before, after, found := bytes.Cut(doc, []byte(`"urn:uuid:9a3c2f4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"`))
	if !found {
		b.Fatal("agent-4k.json no longer has the id this benchmark replaces")
	}
	return before, after
}

func agentThing(before, after []byte, id string, now time.Time) directory.Thing {
	doc := make([]byte, 0, len(before)+len(id)+2+len(after))
	doc = append(strconv.AppendQuote(append(doc, before...), id), after...)
	return directory.Thing{ID: id, Document: doc, Created: now, Modified: now}
}

func setParallel(b *testing.B) {
	b.SetParallelism((benchParallel + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkPut registers a new 4 KB Thing per operation from 32 goroutines, without a
// search index and with one as the directory derives it.
func BenchmarkPut(b *testing.B) {
	for _, bc := range []struct {
		name    string
		indexed bool
	}{{"plain", false}, {"indexed", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := open(b)
			before, after := agentDocument(b)
			now := time.Now()
			var n atomic.Int64
			commits := s.w.commits.Load()
			setParallel(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := b.Context()
				for pb.Next() {
					th := agentThing(before, after, fmt.Sprintf("urn:bench:%09d", n.Add(1)), now)
					if bc.indexed {
						th.Index = agentIndex()
					}
					if _, err := s.Put(ctx, th, now); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRate(b)
			b.ReportMetric(float64(b.N)/float64(s.w.commits.Load()-commits), "writes/commit")
		})
	}
}

// BenchmarkGet reads random Things of 10,000 from 32 goroutines.
func BenchmarkGet(b *testing.B) {
	s, _ := open(b)
	before, after := agentDocument(b)
	now := time.Now()
	const things = 10000
	var wg sync.WaitGroup
	for w := range benchParallel {
		wg.Go(func() {
			for i := w; i < things; i += benchParallel {
				if _, err := s.Put(b.Context(), agentThing(before, after, fmt.Sprintf("urn:bench:%05d", i), now), now); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var n atomic.Int64
	setParallel(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := b.Context()
		i := n.Add(7919)
		for pb.Next() {
			i = (i + 7919) % things
			th, err := s.Get(ctx, fmt.Sprintf("urn:bench:%05d", i), now)
			if err != nil || len(th.Document) < 4000 {
				b.Errorf("Get: %v (%d bytes)", err, len(th.Document))
				return
			}
		}
	})
	reportRate(b)
}
