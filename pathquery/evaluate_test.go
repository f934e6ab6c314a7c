package pathquery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/pathquery"
)

func TestMatchAndSearchTreatNothingAsFalse(t *testing.T) {
	tds := []any{
		map[string]any{"id": "1", "title": "alpha"},
		map[string]any{"id": "2"},
		map[string]any{"id": "3", "title": 7.0},
		map[string]any{"id": "4", "title": "beta\nalpha"},
		map[string]any{"id": "5", "title": "alpha", "pattern": "al.*"},
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{`$[?match(@.title, 'a.*')].id`, []string{"1", "5"}},
		{`$[?search(@.title, 'alpha')].id`, []string{"1", "4", "5"}},
		{`$[?search(@.title, '^alpha$')].id`, []string{"1", "5"}},
		{`$[?match(@.title, 'beta.alpha')].id`, nil}, // . does not match a line break
		{`$[?match(@.title, @.pattern)].id`, []string{"5"}},
		{`$[?!match(@.title, 'a.*')].id`, []string{"2", "3", "4"}},
		{`$[?match(@.title, '(')].id`, nil}, // an invalid pattern matches nothing
	} {
		t.Run(tc.query, func(t *testing.T) {
			if _, panicked := librarySelect(tc.query, tds); !panicked {
				t.Error("the library no longer panics here; the test may be pointless")
			}
			got, stats := collect(t, mustCompile(t, tc.query), &memSource{tds: tds}, pathquery.Options{})
			if stats.Failed != 0 {
				t.Errorf("Stats.Failed = %d", stats.Failed)
			}
			if strings.Join(asStrings(got), ",") != strings.Join(tc.want, ",") {
				t.Errorf("selected %v, want %v", got, tc.want)
			}
		})
	}
}

func asStrings(nodes []any) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i], _ = n.(string)
	}
	return out
}

func TestEvaluateLimitsWhatItHolds(t *testing.T) {
	tds := make([]any, 5)
	for i := range tds {
		tds[i] = map[string]any{"id": string(rune('a' + i))}
	}
	for _, tc := range []struct {
		query string
		limit int
		fails bool
	}{
		{`$[?@.id == $[0].id]`, 4, true},
		{`$[?@.id == $[0].id]`, 5, false},
		{`$`, 4, true},
		{`$`, 5, false},
		{`$[::-1]`, 4, true},
		{`$[::-2]`, 4, false}, // three TDs
		{`$[::1]`, 1, false},  // streamed
		{`$[*]`, 1, false},
		{`$..id`, 1, false},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var emitted int
			_, err := pathquery.Evaluate(context.Background(), mustCompile(t, tc.query), &memSource{tds: tds},
				pathquery.Options{MaxMaterialize: tc.limit}, func(any) error { emitted++; return nil })
			if !tc.fails {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, pathquery.ErrNeedsWholeRoot) {
				t.Fatalf("error %v, want ErrNeedsWholeRoot", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "5 TDs") || !strings.Contains(msg, "limit is 4") {
				t.Errorf("error %q does not state the size and the limit", msg)
			}
			if emitted != 0 {
				t.Errorf("emitted %d nodes before failing", emitted)
			}
		})
	}
}

// countSource claims to hold n TDs, a small object each, and counts what it hands over.
type countSource struct {
	n, yield int
}

func (s *countSource) Len(context.Context) (int, error) { return s.n, nil }

func (s *countSource) Each(_ context.Context, _ *pathquery.Condition, fn func(td any) error) error {
	for i := range s.yield {
		if err := fn(map[string]any{"i": float64(i)}); err != nil {
			return err
		}
	}
	return nil
}

func TestEvaluateDefaultLimitAndGrowingSource(t *testing.T) {
	_, err := pathquery.Evaluate(context.Background(), mustCompile(t, `$`), &countSource{n: 10001}, pathquery.Options{},
		func(any) error { return nil })
	if !errors.Is(err, pathquery.ErrNeedsWholeRoot) || !strings.Contains(err.Error(), "limit is 10000") {
		t.Errorf("10,001 TDs under the default limit: %v", err)
	}
	// The array grew between Len and Each.
	_, err = pathquery.Evaluate(context.Background(), mustCompile(t, `$`), &countSource{n: 3, yield: 6},
		pathquery.Options{MaxMaterialize: 4}, func(any) error { return nil })
	if !errors.Is(err, pathquery.ErrNeedsWholeRoot) {
		t.Errorf("a source yielding more than the limit: %v", err)
	}
}

func TestEvaluateReadsOnlyAsFarAsNeeded(t *testing.T) {
	for _, tc := range []struct {
		query   string
		scanned int
		want    []float64
	}{
		{`$[2].i`, 3, []float64{2}},
		{`$[-8].i`, 3, []float64{2}},
		{`$[10]`, 0, nil},
		{`$[1:4:2].i`, 5, []float64{1, 3}},
		{`$[3:0:-1].i`, 5, []float64{3, 2, 1}},
		{`$[2, 0].i`, 3 + 1, []float64{2, 0}},
		{`$.i`, 0, nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			got, stats := collect(t, mustCompile(t, tc.query), &countSource{n: 10, yield: 10}, pathquery.Options{})
			if stats.Scanned != tc.scanned {
				t.Errorf("scanned %d TDs, want %d", stats.Scanned, tc.scanned)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("selected %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("selected %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestEvaluateStopsOnEmitErrorAndCancellation(t *testing.T) {
	q := mustCompile(t, `$[*].i`)
	errFull := errors.New("response full")
	emitted := 0
	stats, err := pathquery.Evaluate(context.Background(), q, &countSource{n: 10, yield: 10}, pathquery.Options{},
		func(any) error {
			emitted++
			if emitted == 3 {
				return errFull
			}
			return nil
		})
	if !errors.Is(err, errFull) || emitted != 3 || stats.Scanned != 3 {
		t.Errorf("emit error: err %v after %d nodes and %d TDs", err, emitted, stats.Scanned)
	}

	ctx, cancel := context.WithCancel(context.Background())
	emitted = 0
	stats, err = pathquery.Evaluate(ctx, q, &countSource{n: 10, yield: 10}, pathquery.Options{},
		func(any) error {
			emitted++
			cancel()
			return nil
		})
	if !errors.Is(err, context.Canceled) || emitted != 1 || stats.Scanned != 1 {
		t.Errorf("cancellation: err %v after %d nodes and %d TDs", err, emitted, stats.Scanned)
	}
}

// failingSource fails Len or Each.
type failingSource struct{ lenErr, eachErr error }

func (s failingSource) Len(context.Context) (int, error) { return 3, s.lenErr }

func (s failingSource) Each(context.Context, *pathquery.Condition, func(any) error) error {
	return s.eachErr
}

func TestEvaluateReturnsSourceErrors(t *testing.T) {
	errDB := errors.New("database gone")
	for _, tc := range []struct {
		query    string
		callsLen bool
	}{
		{`$`, true},
		{`$[0]`, true},
		{`$[0:2]`, true},
		{`$[?@ == $[0]]`, true},
		{`$[*]`, false},
		{`$[?@.a]`, false},
		{`$..a`, false},
	} {
		sources := []failingSource{{eachErr: errDB}}
		if tc.callsLen {
			sources = append(sources, failingSource{lenErr: errDB})
		}
		for _, src := range sources {
			_, err := pathquery.Evaluate(context.Background(), mustCompile(t, tc.query), src, pathquery.Options{},
				func(any) error { return nil })
			if !errors.Is(err, errDB) {
				t.Errorf("%s with %+v: error %v", tc.query, src, err)
			}
		}
	}
}
