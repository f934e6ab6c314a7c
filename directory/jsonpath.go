package directory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/lmosdir/lmosdir/pathquery"
	"github.com/lmosdir/lmosdir/td"
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
		if raw := src.rawOf(v); raw != nil {
			node.Write(raw)
		} else if err := enc.Encode(v); err != nil {
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
	// current is the TD being evaluated, decoded from enriched.
	current  map[string]any
	enriched []byte
}

// rawOf returns the served bytes of v when v is the TD being evaluated, the node most
// queries select: encoding a decoded TD again would cost as much as decoding it did.
func (src *storeSource) rawOf(v any) []byte {
	m, ok := v.(map[string]any)
	if !ok || src.current == nil || reflect.ValueOf(m).UnsafePointer() != reflect.ValueOf(src.current).UnsafePointer() {
		return nil
	}
	return src.enriched
}

func (src *storeSource) Len(ctx context.Context) (int, error) {
	m, err := src.store.Membership(ctx, src.now)
	return m.Total, err
}

func (src *storeSource) Each(ctx context.Context, cond *pathquery.Condition, fn func(any) error) error {
	defer func() { src.current = nil }()
	return src.store.List(ctx, Page{Where: cond}, src.now, func(t Thing) error {
		src.enriched = t.AppendEnriched(src.enriched[:0], src.now)
		// td's decoder, because decoding every candidate is most of a query's time and it
		// is about twice as fast as encoding/json here. Its numbers are json.Number, so they
		// keep their spelling in the answer; RFC 9535 compares them by value either way.
		v, err := td.DecodeJSON(src.enriched)
		if err != nil {
			return fmt.Errorf("decoding %s: %w", t.ID, err)
		}
		src.current, _ = v.(map[string]any)
		return fn(v)
	})
}
