package directory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/directory"
	"github.com/lmosdir/lmosdir/directory/sqlite"
	"github.com/lmosdir/lmosdir/td"
)

func cachedTD(title string) []byte {
	return fmt.Appendf(nil, `{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":"urn:x:cached","title":%q,"securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`, title)
}

// TestReadCacheNeverServesAnOverwrittenTD writes versions of one TD while readers read it:
// once a write has returned, no read that starts afterwards may see an older version.
func TestReadCacheNeverServesAnOverwrittenTD(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lmosdir.db"), sqlite.Options{MigrateOnOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	v, err := td.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	dir := directory.NewService(store, v, directory.Options{ReadCacheBytes: 1 << 20})
	if _, err := dir.Put(ctx, "urn:x:cached", cachedTD("v0000")); err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.RWMutex
		committed = 0
		done      = make(chan struct{})
		wg        sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.RLock()
				floor := committed
				mu.RUnlock()
				thing, err := dir.Get(ctx, "urn:x:cached")
				if err != nil {
					t.Error(err)
					return
				}
				var seen int
				doc := string(thing.Document)
				if _, err := fmt.Sscanf(doc[strings.Index(doc, `"title":"v`)+10:], "%04d", &seen); err != nil {
					t.Error(err)
					return
				}
				if seen < floor {
					t.Errorf("read version %d after version %d was acknowledged", seen, floor)
					return
				}
			}
		})
	}
	deadline := time.Now().Add(time.Second)
	for i := 1; time.Now().Before(deadline); i++ {
		if _, err := dir.Put(ctx, "urn:x:cached", cachedTD(fmt.Sprintf("v%04d", i))); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		committed = i
		mu.Unlock()
	}
	close(done)
	wg.Wait()
}
