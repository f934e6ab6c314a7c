package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmosdir/lmosdir/internal/tdgen"
)

// maxImportLine bounds one TD of an NDJSON import, like the HTTP body limit bounds one
// registration.
const maxImportLine = 16 << 20

// runImport is `lmosdir import`: register many TDs straight into the configured store,
// validated like any registration but without HTTP in between — to load a directory from
// a dump, or to preload a benchmark. The store must not be served meanwhile when it is
// the embedded one (its file belongs to one process).
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		generate int
		seed     int64
		workers  int
	)
	cfg, err := parseConfig("import", args, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&generate, "generate", 0, "register this many generated agent and tool TDs (ids urn:lmosdir:gen:<seed>:<i>) instead of reading NDJSON")
		fs.Int64Var(&seed, "seed", 1, "seed of the generated TDs")
		// Many at once, so that the embedded store commits them in groups sharing one sync.
		fs.IntVar(&workers, "workers", 32, "TDs validated and written at once")
	})
	if err != nil {
		return err
	}
	tuneGC()
	if workers <= 0 || generate < 0 {
		return errors.New("workers must be positive and generate not negative")
	}
	// The read cache would only hold what nobody reads here.
	cfg.ReadCacheMiB = 0
	dir, backend, store, err := openDirectory(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()

	tds := make(chan importItem, workers)
	var produceErr error
	go func() {
		defer close(tds)
		if generate > 0 {
			gen := tdgen.New(seed)
			for i := range generate {
				select {
				case tds <- importItem{where: fmt.Sprintf("generated TD %d", i), raw: gen.TD(i)}:
				case <-ctx.Done():
					return
				}
			}
			return
		}
		produceErr = readNDJSON(ctx, os.Stdin, tds)
	}()

	start := time.Now()
	var imported, failed atomic.Int64
	var (
		mu       sync.Mutex
		failures []error
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for item := range tds {
				if id, err := dir.Import(ctx, item.raw); err != nil {
					err = fmt.Errorf("%s%s: %w", item.where, idNote(id), err)
					failed.Add(1)
					mu.Lock()
					if len(failures) < 10 {
						failures = append(failures, err)
					}
					mu.Unlock()
					continue
				}
				imported.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "imported %d Things in %.1fs (%.0f/s) into %s, %d failed\n",
		imported.Load(), elapsed.Seconds(), float64(imported.Load())/elapsed.Seconds(), backend.describe(), failed.Load())
	for _, f := range failures {
		fmt.Fprintln(stderr, "lmosdir import:", f)
	}
	if err := errors.Join(produceErr, ctx.Err()); err != nil {
		return err
	}
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d TDs were not imported", failed.Load(), failed.Load()+imported.Load())
	}
	return nil
}

// importItem is one TD to import and where it came from, for error messages.
type importItem struct {
	where string
	raw   []byte
}

// idNote names the Thing in an error when its id is known (it is not when the TD failed
// before its id was read).
func idNote(id string) string {
	if id == "" {
		return ""
	}
	return " (" + id + ")"
}

// readNDJSON sends each non-empty line of r to tds.
func readNDJSON(ctx context.Context, r io.Reader, tds chan<- importItem) error {
	reader := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		raw, err := reader.ReadBytes('\n')
		if len(raw) > maxImportLine {
			return fmt.Errorf("line %d is longer than %d bytes", line, maxImportLine)
		}
		if raw = bytes.TrimSpace(raw); len(raw) > 0 {
			select {
			case tds <- importItem{where: fmt.Sprintf("line %d", line), raw: raw}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading line %d: %w", line, err)
		}
	}
}
