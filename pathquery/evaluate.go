package pathquery

import (
	"context"
	"errors"
	"fmt"

	"github.com/theory/jsonpath/spec"
)

// Source is the root array as the directory streams it.
type Source interface {
	// Len returns the number of TDs in the root array.
	Len(ctx context.Context) (int, error)
	// Each calls fn for the TDs of the root array in order, each decoded with encoding/json
	// (map[string]any, []any, float64 or json.Number, string, bool, nil). When cond is non-nil the
	// source may skip TDs for which cond cannot hold (it never skips one for which it holds).
	// An error from fn stops the iteration and is returned.
	Each(ctx context.Context, cond *Condition, fn func(td any) error) error
}

// Options tunes Evaluate.
type Options struct {
	// MaxMaterialize is how many TDs may be held at once: all of them for a PassWholeRoot or
	// PassRootArray, the selected ones for a slice with a negative step, which comes out in
	// reverse order. Above it Evaluate fails with ErrNeedsWholeRoot. 0 or less: 10000.
	MaxMaterialize int
}

const defaultMaxMaterialize = 10000

// ErrNeedsWholeRoot is returned, wrapped with the limit and the size, when a query would
// hold more TDs at once than Options.MaxMaterialize allows.
var ErrNeedsWholeRoot = errors.New("JSONPath query would hold too many TDs in memory")

// Stats says what an evaluation did.
type Stats struct {
	// Scanned counts the TDs the source handed over, over all passes.
	Scanned int
	// Failed counts the TDs whose evaluation panicked and contributed nothing.
	Failed int
}

// Evaluate streams the query's result nodes to emit in order. An error from emit stops and
// is returned. ctx cancellation is honored between TDs.
func Evaluate(ctx context.Context, q *Query, src Source, opts Options, emit func(node any) error) (Stats, error) {
	limit := opts.MaxMaterialize
	if limit <= 0 {
		limit = defaultMaxMaterialize
	}
	e := &evaluation{ctx: ctx, q: q, src: src, limit: limit, emit: emit}
	for _, p := range q.passes {
		if err := ctx.Err(); err != nil {
			return e.stats, err
		}
		if err := e.run(p); err != nil {
			return e.stats, err
		}
	}
	return e.stats, nil
}

// evaluation is the state of one Evaluate call.
type evaluation struct {
	ctx   context.Context
	q     *Query
	src   Source
	limit int
	emit  func(node any) error
	stats Stats
	// emitErr is the error emit returned, handed back as is however the source wraps it.
	emitErr error
}

// errStop ends a source's iteration once a pass has seen all the TDs it needs.
var errStop = errors.New("pass complete")

func (e *evaluation) run(p Pass) error {
	switch p.Kind {
	case PassWholeRoot:
		return e.wholeRoot()
	case PassRootArray:
		all, err := e.materialize()
		if err != nil {
			return err
		}
		return e.emitAll([]any{all})
	case PassWildcard:
		return e.each(nil, func(_ int, td any) error { return e.contribute(td, e.selectRest) })
	case PassFilter:
		filter := p.sel.(*spec.FilterSelector)
		return e.each(p.Cond, func(_ int, td any) error {
			return e.contribute(td, func(td any) []any {
				if !filter.Eval(td, td) {
					return nil
				}
				return e.selectRest(td)
			})
		})
	case PassIndex:
		return e.index(int(p.sel.(spec.Index)))
	case PassSlice:
		return e.slice(p.sel.(spec.SliceSelector))
	case PassEachTD:
		return e.each(nil, func(_ int, td any) error {
			return e.contribute(td, func(td any) []any { return e.q.path.Select(nil, td) })
		})
	}
	return fmt.Errorf("pathquery: unknown pass kind %d", p.Kind)
}

func (e *evaluation) selectRest(td any) []any { return e.q.rest.Select(td, td) }

// each streams the TDs that may satisfy cond to visit with their position in the stream,
// which is their position in the root array when cond is nil.
func (e *evaluation) each(cond *Condition, visit func(pos int, td any) error) error {
	pos := 0
	err := e.src.Each(e.ctx, cond, func(td any) error {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		e.stats.Scanned++
		err := visit(pos, td)
		pos++
		return err
	})
	switch {
	case e.emitErr != nil:
		return e.emitErr
	case errors.Is(err, errStop):
		return nil
	}
	return err
}

// contribute emits what sel selects from td.
func (e *evaluation) contribute(td any, sel func(td any) []any) error {
	return e.emitAll(e.selectTD(td, sel))
}

// selectTD runs sel on td. A panic (a library bug on some data) costs this TD's
// contribution, and is counted, rather than the request.
func (e *evaluation) selectTD(td any, sel func(td any) []any) []any {
	nodes, panicked := selectRecovering(td, sel)
	if panicked != nil {
		e.stats.Failed++
	}
	return nodes
}

// selectRecovering runs sel on v and returns what it panicked with, if it did.
func selectRecovering(v any, sel func(v any) []any) (nodes []any, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			nodes, panicked = nil, r
		}
	}()
	return sel(v), nil
}

func (e *evaluation) emitAll(nodes []any) error {
	for _, n := range nodes {
		if err := e.emit(n); err != nil {
			e.emitErr = err
			return err
		}
	}
	return nil
}

// index streams up to the TD at index i of the root array (negative: from the end).
func (e *evaluation) index(i int) error {
	n, err := e.src.Len(e.ctx)
	if err != nil {
		return err
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil
	}
	return e.each(nil, func(pos int, td any) error {
		if pos < i {
			return nil
		}
		if err := e.contribute(td, e.selectRest); err != nil {
			return err
		}
		return errStop
	})
}

// slice streams the TDs a slice selects. A positive step selects them in stream order; a
// negative one in reverse, so their contributions are held until the stream ends.
func (e *evaluation) slice(s spec.SliceSelector) error {
	n, err := e.src.Len(e.ctx)
	if err != nil {
		return err
	}
	lower, upper := s.Bounds(n)
	step := s.Step()
	switch {
	case step > 0 && lower < upper:
		return e.each(nil, func(pos int, td any) error {
			if pos >= upper {
				return errStop
			}
			if pos < lower || (pos-lower)%step != 0 {
				return nil
			}
			return e.contribute(td, e.selectRest)
		})
	case step < 0 && lower < upper:
		return e.reverseSlice(lower, upper, -step)
	}
	return nil
}

// reverseSlice selects upper, upper-stride, … down to just above lower.
func (e *evaluation) reverseSlice(lower, upper, stride int) error {
	count := (upper-lower-1)/stride + 1
	if count > e.limit {
		return e.tooMany(count)
	}
	held := make([][]any, count)
	err := e.each(nil, func(pos int, td any) error {
		if pos > upper {
			return errStop
		}
		if pos <= lower || (upper-pos)%stride != 0 {
			return nil
		}
		held[(upper-pos)/stride] = e.selectTD(td, e.selectRest)
		return nil
	})
	if err != nil {
		return err
	}
	for _, nodes := range held {
		if err := e.emitAll(nodes); err != nil {
			return err
		}
	}
	return nil
}

// materialize loads the whole root array within the limit.
func (e *evaluation) materialize() ([]any, error) {
	n, err := e.src.Len(e.ctx)
	if err != nil {
		return nil, err
	}
	if n > e.limit {
		return nil, e.tooMany(n)
	}
	all := make([]any, 0, n)
	err = e.each(nil, func(_ int, td any) error {
		if len(all) == e.limit {
			// The array grew since Len.
			return e.tooMany(len(all) + 1)
		}
		all = append(all, td)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

func (e *evaluation) tooMany(n int) error {
	return fmt.Errorf("%w: %d TDs at once, the limit is %d", ErrNeedsWholeRoot, n, e.limit)
}

// wholeRoot runs the query on the loaded array. A panic here cannot be pinned on one TD,
// so it fails the evaluation.
func (e *evaluation) wholeRoot() error {
	all, err := e.materialize()
	if err != nil {
		return err
	}
	nodes, panicked := selectRecovering(all, func(root any) []any { return e.q.path.Select(nil, root) })
	if panicked != nil {
		return fmt.Errorf("pathquery: evaluating %q on all %d TDs panicked: %v", e.q.text, len(all), panicked)
	}
	return e.emitAll(nodes)
}
