package directory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lmosdir/lmosdir/pathquery"
)

// SearchJSONPath evaluates an RFC 9535 JSONPath query over the array of all live Enriched
// TDs in id order (WoT Discovery's JSONPath search) and returns the JSON array of the
// nodes it selects. Stats.Failed counts TDs the query could not be evaluated on; they
// contribute nothing, and the others are unaffected.
func (s *Service) SearchJSONPath(ctx context.Context, query string) ([]byte, pathquery.Stats, error) {
	q, err := pathquery.Compile(query, s.limits.MaxQueryBytes)
	if err != nil {
		return nil, pathquery.Stats{}, &RequestError{Field: "query", Detail: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, s.limits.Timeout)
	defer cancel()
	out := []byte{'['}
	var node bytes.Buffer
	enc := json.NewEncoder(&node)
	enc.SetEscapeHTML(false)
	src := &storeSource{store: s.store, now: s.Now()}
	stats, err := pathquery.Evaluate(ctx, q, src, pathquery.Options{MaxMaterialize: s.limits.MaxWholeRoot}, func(v any) error {
		node.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		if len(out)+node.Len() > s.limits.MaxResultBytes {
			return &LimitError{Detail: fmt.Sprintf("the result is larger than this directory's limit of %d bytes; narrow the query", s.limits.MaxResultBytes)}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, bytes.TrimSuffix(node.Bytes(), []byte{'\n'})...)
		return nil
	})
	switch {
	case errors.Is(err, pathquery.ErrNeedsWholeRoot):
		return nil, stats, &LimitError{Detail: err.Error()}
	case err != nil:
		return nil, stats, s.timeoutError(ctx, err)
	}
	return append(out, ']'), stats, nil
}

// storeSource is the root array of a JSONPath query: the live Things at now, as served.
type storeSource struct {
	store Store
	now   time.Time
}

func (src *storeSource) Len(ctx context.Context) (int, error) {
	m, err := src.store.Membership(ctx, src.now)
	return m.Total, err
}

func (src *storeSource) Each(ctx context.Context, cond *pathquery.Condition, fn func(any) error) error {
	var enriched []byte
	return src.store.List(ctx, Page{Where: cond}, src.now, func(t Thing) error {
		enriched = t.AppendEnriched(enriched[:0], src.now)
		dec := json.NewDecoder(bytes.NewReader(enriched))
		// Numbers keep their spelling in the answer, and RFC 9535 compares them by value
		// either way.
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("decoding %s: %w", t.ID, err)
		}
		return fn(v)
	})
}
