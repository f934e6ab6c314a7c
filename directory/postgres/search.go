package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lmosdir/lmosdir/directory"
)

// Full-text search uses PostgreSQL's english configuration on both sides, so that a word
// finds its inflections ("invoices" finds "invoice"). The configuration drops English stop
// words ("the", "on", "it", ...) from documents and queries alike: a text of several words
// needs only those that are not stop words to occur, and a text of stop words alone filters
// nothing, as a text without words does. Finding nothing instead would tell a user that no
// Thing contains "on" when the truth is that the index cannot tell.

const (
	// hitIndexColumns are the Index fields a hit carries.
	hitIndexColumns = `kind, vendor_name, vendor_url, title, description`

	// stopWordsOnlySQL tells whether the english configuration drops every word of $1.
	stopWordsOnlySQL = `SELECT numnode(plainto_tsquery('english', $1)) = 0`
)

// Search returns one page of the live, indexed Things that match q, and facets over all of
// them.
func (s *Store) Search(ctx context.Context, q directory.SearchQuery, now time.Time) (directory.SearchResult, error) {
	words := strings.Join(directory.SearchWords(q.Text), " ")
	res, err := s.search(ctx, q, words, now)
	// Every match has a kind, so no kind facet means no match. Only then is it worth asking
	// whether the words were all stop words, which happens rarely enough that the extra
	// round trip costs less than testing for it on every search.
	if err != nil || words == "" || len(res.Facets.Kind) > 0 {
		return res, err
	}
	var stopWordsOnly bool
	if err := s.pool.QueryRow(ctx, stopWordsOnlySQL, words).Scan(&stopWordsOnly); err != nil {
		return directory.SearchResult{}, fmt.Errorf("searching: %w", err)
	}
	if !stopWordsOnly {
		return res, nil
	}
	return s.search(ctx, q, "", now)
}

// search runs the statements for the hits and the facets in one round trip.
func (s *Store) search(ctx context.Context, q directory.SearchQuery, words string, now time.Time) (directory.SearchResult, error) {
	st := searchStatements(q, words, now)
	var res directory.SearchResult
	batch := &pgx.Batch{}
	batch.Queue(st.hits, st.hitArgs...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var r thingRow
			var h directory.SearchHit
			var score float32
			dest := append(r.dest(), &h.Index.Kind, &h.Index.VendorName, &h.Index.VendorURL, &h.Index.Title, &h.Index.Description, &score)
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			h.Thing = r.thing()
			h.Score = float64(score)
			res.Hits = append(res.Hits, h)
		}
		return rows.Err()
	})
	batch.Queue(st.facets, st.facetArgs...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var facet string
			var c directory.FacetCount
			if err := rows.Scan(&facet, &c.Value, &c.Count); err != nil {
				return err
			}
			switch facet {
			case "kind":
				res.Facets.Kind = append(res.Facets.Kind, c)
			case "vendor":
				res.Facets.Vendor = append(res.Facets.Vendor, c)
			case "type":
				res.Facets.Type = append(res.Facets.Type, c)
			}
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return directory.SearchResult{}, fmt.Errorf("searching: %w", err)
	}
	if len(res.Hits) > q.Limit {
		res.Hits, res.More = res.Hits[:q.Limit], true
	}
	return res, nil
}

// statements are the SQL of one search and their arguments.
type statements struct {
	hits, facets       string
	hitArgs, facetArgs []any
}

// searchStatements builds the statements of a search for words. They share the conditions
// that select the matches; only the hits continue after the cursor.
func searchStatements(q directory.SearchQuery, words string, now time.Time) statements {
	var p params
	from := `things`
	where := []string{`kind IS NOT NULL`, `(expires IS NULL OR expires > ` + p.add(now) + `)`}
	if words != "" {
		// In FROM, the query is parsed once, whatever plan PostgreSQL chooses.
		from = `things, plainto_tsquery('english', ` + p.add(words) + `) AS query`
		where = append(where, `search @@ query`)
	}
	if q.Kind != "" {
		where = append(where, `kind = `+p.add(storable(q.Kind)))
	}
	if q.Type != "" {
		where = append(where, `type_iris @> ARRAY[`+p.add(storable(q.Type))+`::text]`)
	}
	if q.Vendor != "" {
		vendor := p.add(storable(q.Vendor))
		where = append(where, `(lower(vendor_name) = lower(`+vendor+`) OR vendor_url = `+vendor+`)`)
	}
	// The array filters are written as containment, which the GIN index answers.
	for _, f := range []struct{ column, value string }{
		{`actions`, q.Action},
		{`properties`, q.Property},
		{`events`, q.Event},
		{`capabilities`, q.Capability},
		// Lowered as the directory lowers protocols, in Go: PostgreSQL's lower() depends
		// on the database's locale.
		{`protocols`, strings.ToLower(q.Protocol)},
	} {
		if f.value != "" {
			where = append(where, f.column+` @> ARRAY[`+p.add(storable(f.value))+`::text]`)
		}
	}
	matches := `
FROM ` + from + `
WHERE ` + strings.Join(where, ` AND `)
	// The facets take the arguments so far and their own; the hits' come after.
	facetArgs := slices.Concat(p, params{directory.MaxFacetValues})
	facets := facetsSQL(matches, "$"+strconv.Itoa(len(facetArgs)))

	score, order := `0::real`, `id`
	if words != "" {
		score, order = `ts_rank(search, query)`, `score DESC, id`
	}
	if q.After != nil {
		if words == "" {
			matches += ` AND id > ` + p.add(storable(q.After.ID))
		} else {
			// ts_rank is a real; a cursor's score came from one, so comparing in real finds
			// the cursor's place exactly. Negating the score, which is exact, turns the
			// order (score descending, id ascending) into one row comparison.
			matches += ` AND (-ts_rank(search, query), id) > (-` + p.add(float32(q.After.Score)) + `::real, ` + p.add(storable(q.After.ID)) + `)`
		}
	}
	hitsSQL := `SELECT ` + thingColumns + `, ` + hitIndexColumns + `, ` + score + ` AS score` + matches + `
ORDER BY ` + order + `
LIMIT ` + p.add(q.Limit+1)

	return statements{hits: hitsSQL, facets: facets, hitArgs: p, facetArgs: facetArgs}
}

// facetsSQL counts the matches of the FROM and WHERE clauses matches by kind, vendor name
// and type, keeping the limit largest counts of each. The matches are read once, and
// grouped first by all three: there are far fewer such groups than matches, so the @type
// arrays are unnested per group rather than per Thing. Values sort in code-point order,
// whatever the database's locale.
func facetsSQL(matches, limit string) string {
	return `WITH groups AS (SELECT kind, vendor_name, types, count(*) AS n` + matches + `
	GROUP BY kind, vendor_name, types)
(SELECT 'kind', kind, sum(n)::bigint FROM groups
	GROUP BY kind ORDER BY sum(n) DESC, kind COLLATE "C" LIMIT ` + limit + `)
UNION ALL
(SELECT 'vendor', vendor_name, sum(n)::bigint FROM groups WHERE vendor_name <> ''
	GROUP BY vendor_name ORDER BY sum(n) DESC, vendor_name COLLATE "C" LIMIT ` + limit + `)
UNION ALL
(SELECT 'type', type.value, sum(n)::bigint FROM groups, unnest(types) AS type(value)
	GROUP BY type.value ORDER BY sum(n) DESC, type.value COLLATE "C" LIMIT ` + limit + `)`
}
