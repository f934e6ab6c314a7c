package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmosdir/lmosdir/directory"
)

// The search index and the expansion of a Thing live in tables of their own, keyed by
// things.num (see migration 000002). The writer replaces them in the transaction that
// writes the Thing, with explicit statements rather than triggers, so that each write says
// what it does to them.
const (
	deleteIndexSQL = `DELETE FROM thing_index WHERE thing = ?1`
	// When the Thing goes, its deleted event says what its index said of it.
	dropIndexSQL   = `DELETE FROM thing_index WHERE thing = ?1 RETURNING kind, vendor_name, vendor_url`
	deleteTermsSQL = `DELETE FROM thing_terms WHERE thing = ?1`
	deleteTextSQL  = `DELETE FROM thing_text WHERE rowid = ?1`

	insertIndexSQL = `INSERT INTO thing_index (thing, expires, kind, types, title, description, vendor_name, vendor_url)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`

	setIndexExpiresSQL = `UPDATE thing_index SET expires = ?2 WHERE thing = ?1`

	// One statement for all the terms of a Thing, each list a JSON array: a statement per
	// term would cost the writer a round trip each, and a Thing has dozens. OR IGNORE
	// drops repeats within a list.
	insertTermsSQL = `INSERT OR IGNORE INTO thing_terms (field, value, thing)
SELECT 'type_iri', value, ?1 FROM json_each(?2)
UNION ALL SELECT 'action', value, ?1 FROM json_each(?3)
UNION ALL SELECT 'property', value, ?1 FROM json_each(?4)
UNION ALL SELECT 'event', value, ?1 FROM json_each(?5)
UNION ALL SELECT 'capability', value, ?1 FROM json_each(?6)
UNION ALL SELECT 'protocol', value, ?1 FROM json_each(?7)
UNION ALL SELECT 'vendor_name', ?8, ?1 WHERE ?8 <> ''
UNION ALL SELECT 'vendor_url', ?9, ?1 WHERE ?9 <> ''`

	insertTextSQL = `INSERT INTO thing_text (rowid, titles, names, vendor, descriptions) VALUES (?1, ?2, ?3, ?4, ?5)`

	setExpansionSQL = `INSERT INTO thing_expansions (thing, done, problem, expanded) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (thing) DO UPDATE SET done = excluded.done, problem = excluded.problem, expanded = excluded.expanded`

	deleteExpansionSQL = `DELETE FROM thing_expansions WHERE thing = ?1`

	// Whether the Thing still has the document a derivation was made from. Any row, even
	// an expired one: what is stored for it is replaced when the id is registered again.
	findDocumentSQL = `SELECT num, expires FROM things WHERE id = ?1 AND document = ?2`

	// From the partial index of pending expansions: CROSS JOIN keeps SQLite from starting
	// with the live Things instead, which would read all of them to find none pending.
	unexpandedSQL = `SELECT t.id, t.document FROM thing_expansions AS e CROSS JOIN things AS t ON t.num = e.thing
WHERE e.done = 0 AND (t.expires IS NULL OR t.expires > ?1)
LIMIT ?2`

	expansionSQL = `SELECT coalesce(e.done, 0), e.expanded, e.problem FROM ` + thingTables + `
WHERE t.id = ?1 AND (t.expires IS NULL OR t.expires > ?2)`
)

// indexArgs are the parameters of the statements that write an Index, but for the Thing's
// num, which comes first in each. They are made on the caller's goroutine: the writer's
// time is what every write waits for.
type indexArgs struct {
	index, terms, text []any
}

// newIndexArgs returns the parameters that write ix, nil for a nil ix.
func newIndexArgs(ix *directory.Index) *indexArgs {
	if ix == nil {
		return nil
	}
	terms := make([]any, 0, 8)
	for _, list := range [][]string{ix.TypeIRIs, ix.Actions, ix.Properties, ix.Events, ix.Capabilities, lowerAll(ix.Protocols)} {
		terms = append(terms, jsonArray(list))
	}
	// Sorted, so that repeats are dropped: the facet counts a Thing once per type.
	types := slices.Compact(slices.Sorted(slices.Values(ix.Types)))
	return &indexArgs{
		index: []any{ix.Kind, jsonArray(types), ix.Title, ix.Description, ix.VendorName, ix.VendorURL},
		terms: append(terms, strings.ToLower(ix.VendorName), ix.VendorURL),
		text:  []any{ix.Text.Titles, ix.Text.Names, ix.Text.Vendor, ix.Text.Descriptions},
	}
}

// writeDerived stores what a Put or Create stores besides the Thing's row: its index, and
// an expansion pending for the new document. expires is the row's.
func (b *batch) writeDerived(num int64, expires any, ix *indexArgs) error {
	if err := b.writeIndex(num, expires, ix); err != nil {
		return err
	}
	return b.setExpansion(num, false, directory.Expansion{})
}

// writeIndex replaces the index of the Thing num, whose row expires at expires, with ix;
// nil leaves it without one.
func (b *batch) writeIndex(num int64, expires any, ix *indexArgs) error {
	if err := b.deleteIndex(num); err != nil || ix == nil {
		return err
	}
	for _, w := range []struct {
		stmt *sql.Stmt
		args []any
	}{
		{b.stmts.insertIndex, append([]any{num, expires}, ix.index...)},
		{b.stmts.insertTerms, append([]any{num}, ix.terms...)},
		{b.stmts.insertText, append([]any{num}, ix.text...)},
	} {
		if _, err := w.stmt.ExecContext(b.ctx, w.args...); err != nil {
			return err
		}
	}
	return nil
}

func (b *batch) deleteIndex(num int64) error {
	for _, stmt := range []*sql.Stmt{b.stmts.deleteIndex, b.stmts.deleteTerms, b.stmts.deleteText} {
		if _, err := stmt.ExecContext(b.ctx, num); err != nil {
			return err
		}
	}
	return nil
}

// setExpansion stores x as the expansion of the Thing num, Done or pending.
func (b *batch) setExpansion(num int64, done bool, x directory.Expansion) error {
	var problem, expanded any // NULL when absent
	if x.Problem != "" {
		problem = x.Problem
	}
	if x.Expanded != nil {
		expanded = x.Expanded
	}
	_, err := b.stmts.setExpansion.ExecContext(b.ctx, num, done, problem, expanded)
	return err
}

// deleteDerived removes all that is stored for the Thing num besides its row, and returns
// the subject of its index (nil when it had none) for its deleted event.
func (b *batch) deleteDerived(num int64) (*directory.Index, error) {
	var sub subject
	err := b.stmts.dropIndex.QueryRowContext(b.ctx, num).Scan(sub.dest()...)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	for _, stmt := range []*sql.Stmt{b.stmts.deleteTerms, b.stmts.deleteText, b.stmts.deleteExpansion} {
		if _, err := stmt.ExecContext(b.ctx, num); err != nil {
			return nil, err
		}
	}
	return sub.index(), nil
}

// jsonArray encodes list for json_each, which reads JSON null as one NULL value rather
// than as no values.
func jsonArray(list []string) string {
	if len(list) == 0 {
		return "[]"
	}
	encoded, _ := json.Marshal(list) // a []string always encodes
	return string(encoded)
}

func lowerAll(list []string) []string {
	lower := make([]string, len(list))
	for i, s := range list {
		lower[i] = strings.ToLower(s)
	}
	return lower
}

// Unexpanded returns up to limit live Things whose expansion is pending.
func (s *Store) Unexpanded(ctx context.Context, now time.Time, limit int) ([]directory.Thing, error) {
	if s.notReady != nil {
		return nil, s.notReady
	}
	if limit <= 0 {
		return nil, nil // LIMIT -1 would be no limit
	}
	rows, err := s.unexpanded.QueryContext(ctx, micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("listing unexpanded things: %w", err)
	}
	defer rows.Close()
	var things []directory.Thing
	for rows.Next() {
		var t directory.Thing
		if err := rows.Scan(&t.ID, &t.Document); err != nil {
			return nil, fmt.Errorf("listing unexpanded things: %w", err)
		}
		things = append(things, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing unexpanded things: %w", err)
	}
	return things, nil
}

// SaveDerived stores ix and x for the Thing id if it still has document.
func (s *Store) SaveDerived(ctx context.Context, id string, document []byte, ix directory.Index, x directory.Expansion) error {
	if s.notReady != nil {
		return s.notReady
	}
	if !directory.StorableID(id) {
		return nil // no such Thing can have been stored
	}
	// No lock on id: the comparison with the stored document, in the writer's transaction,
	// is what keeps a derivation from overwriting a newer write.
	args := newIndexArgs(&ix)
	err := s.w.submit(ctx, func(b *batch) error {
		var num int64
		var expires sql.NullInt64
		err := b.stmts.findDocument.QueryRowContext(b.ctx, id, document).Scan(&num, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := b.writeIndex(num, expires, args); err != nil {
			return err
		}
		return b.setExpansion(num, true, x)
	})
	if err != nil {
		return fmt.Errorf("saving the derived data of thing %q: %w", id, err)
	}
	return nil
}

// Expansion returns the stored expansion of the live Thing id.
func (s *Store) Expansion(ctx context.Context, id string, now time.Time) (directory.Expansion, error) {
	if s.notReady != nil {
		return directory.Expansion{}, s.notReady
	}
	if !directory.StorableID(id) {
		return directory.Expansion{}, directory.ErrNotFound
	}
	var x directory.Expansion
	var problem sql.NullString
	err := s.expansion.QueryRowContext(ctx, id, micros(now)).Scan(&x.Done, &x.Expanded, &problem)
	if errors.Is(err, sql.ErrNoRows) {
		return directory.Expansion{}, directory.ErrNotFound
	}
	if err != nil {
		return directory.Expansion{}, fmt.Errorf("reading the expansion of thing %q: %w", id, err)
	}
	x.Problem = problem.String
	return x, nil
}

// Search finds the live, indexed Things that match q. The page and the facets are read in
// one transaction, so that they count the same Things.
func (s *Store) Search(ctx context.Context, q directory.SearchQuery, now time.Time) (directory.SearchResult, error) {
	if s.notReady != nil {
		return directory.SearchResult{}, s.notReady
	}
	m := matchSQL(q, now)
	tx, err := s.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return directory.SearchResult{}, fmt.Errorf("searching: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // it only read
	var res directory.SearchResult
	if res.Hits, err = searchHits(ctx, tx, m, q); err != nil {
		return directory.SearchResult{}, fmt.Errorf("searching: %w", err)
	}
	if len(res.Hits) > q.Limit {
		res.Hits, res.More = res.Hits[:q.Limit], true
	}
	if res.Facets, err = searchFacets(ctx, tx, m); err != nil {
		return directory.SearchResult{}, fmt.Errorf("counting the facets of a search: %w", err)
	}
	return res, nil
}

// match is the part of a search's statements that selects the matching Things: with
// (common table expressions, each followed by a comma), from (giving i, thing_index), where
// and score. It does not read things, whose rows are a page each: thing_index has all it
// needs. Its SQL depends on which filters are set, so that each filter set is an index
// lookup and each one not set costs nothing.
type match struct {
	with, from, where, score string
	text                     bool
	args                     []any
}

// arg adds a parameter and returns its placeholder.
func (m *match) arg(v any) string {
	m.args = append(m.args, v)
	return "?" + strconv.Itoa(len(m.args))
}

func (m *match) and(cond string) {
	m.where += "\n\tAND " + cond
}

// term restricts the match to the Things with value in the list field of thing_terms.
func (m *match) term(field, value string) {
	if value != "" {
		m.and(`i.thing IN (SELECT thing FROM thing_terms WHERE field = '` + field + `' AND value = ` + m.arg(value) + `)`)
	}
}

func matchSQL(q directory.SearchQuery, now time.Time) *match {
	m := &match{}
	m.where = `(i.expires IS NULL OR i.expires > ` + m.arg(micros(now)) + `)`
	// A text without words, only punctuation say, does not filter: it has no word that
	// could be missing.
	if words := directory.SearchWords(q.Text); len(words) > 0 {
		m.text = true
		m.with = textMatchSQL(m.arg(jsonArray(words))) + ",\n"
		m.from = `text_matches AS x JOIN thing_index AS i ON i.thing = x.thing`
		m.score = `x.score`
	} else {
		m.from = `thing_index AS i`
		m.score = `0`
	}
	if q.Kind != "" {
		m.and(`i.kind = ` + m.arg(q.Kind))
	}
	m.term("type_iri", q.Type)
	if q.Vendor != "" {
		m.and(`i.thing IN (SELECT thing FROM thing_terms WHERE field = 'vendor_name' AND value = ` + m.arg(strings.ToLower(q.Vendor)) + `
		UNION ALL SELECT thing FROM thing_terms WHERE field = 'vendor_url' AND value = ` + m.arg(q.Vendor) + `)`)
	}
	m.term("action", q.Action)
	m.term("property", q.Property)
	m.term("event", q.Event)
	m.term("capability", q.Capability)
	m.term("protocol", strings.ToLower(q.Protocol))
	return m
}

// Text scores. bm25 cannot be the score: it weighs a word by how many Things have it and
// a Thing's text by the average length, so every write changes the score of every Thing,
// and a cursor taken before a write would no longer find its place. The score of a Thing
// depends on its own text only: for each word, 4 when it is in the titles, plus 2 when it
// is in the names or the vendor, plus 1 when it is in the descriptions. So a word in the
// title outranks one in every other field together, and one in the names or the vendor
// outranks one in the descriptions. The scores are small integers, exact as float64.
//
// Each word is one FTS5 phrase query per weight, on those columns, driven by json_each:
// the statement is the same for any number of words. A word is a run of letters and
// digits, so quoting it leaves nothing for FTS5 to read as syntax (AND, NEAR, a column
// name, a *) and never needs a quote escaped. A Thing matches when it has every word.
func textMatchSQL(words string) string {
	return `words (word, phrase) AS (SELECT key, '"' || value || '"' FROM json_each(` + words + `)),
tiers (columns, weight) AS (VALUES ('titles', 4), ('names vendor', 2), ('descriptions', 1)),
text_matches (thing, score) AS (
	SELECT f.rowid, sum(tiers.weight)
	FROM words CROSS JOIN tiers JOIN thing_text AS f ON f.thing_text MATCH '{' || tiers.columns || '} : ' || words.phrase
	GROUP BY f.rowid
	HAVING count(DISTINCT words.word) = json_array_length(` + words + `)
)`
}

// searchHits reads up to q.Limit+1 hits, the last telling that there are more. The page is
// chosen first, on thing numbers, ids and scores, and only its rows are read: a sort of
// every match with its document would read every document.
func searchHits(ctx context.Context, tx *sql.Tx, m *match, q directory.SearchQuery) ([]directory.SearchHit, error) {
	query, args := hitsSQL(m, q)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []directory.SearchHit
	for rows.Next() {
		var h directory.SearchHit
		ix := &h.Index
		if h.Thing, err = scanThing(rows, &ix.Kind, &ix.VendorName, &ix.VendorURL, &ix.Title, &ix.Description, &h.Score); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

func hitsSQL(m *match, q directory.SearchQuery) (string, []any) {
	args := append([]any(nil), m.args...)
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	where, order := m.where, `t.id`
	if m.text {
		order = `x.score DESC, t.id`
	}
	if a := q.After; a != nil {
		switch {
		case m.text:
			score := arg(a.Score)
			where += "\n\tAND (x.score < " + score + " OR (x.score = " + score + " AND t.id > " + arg(a.ID) + "))"
		case a.Score == 0:
			where += "\n\tAND t.id > " + arg(a.ID)
		case a.Score > 0: // every Thing has score 0, so all come after
		default:
			where += "\n\tAND false"
		}
	}
	query := `WITH ` + m.with + `page (thing, score, id) AS MATERIALIZED (
	SELECT i.thing, ` + m.score + `, t.id FROM ` + m.from + ` JOIN things AS t ON t.num = i.thing
	WHERE ` + where + `
	ORDER BY ` + order + `
	LIMIT ` + arg(q.Limit+1) + `
)
SELECT ` + thingColumns + `, i.kind, i.vendor_name, i.vendor_url, i.title, i.description, p.score
FROM page AS p
JOIN things AS t ON t.num = p.thing
LEFT JOIN thing_expansions AS e ON e.thing = p.thing
JOIN thing_index AS i ON i.thing = p.thing
ORDER BY p.score DESC, p.id`
	return query, args
}

// searchFacets counts the matches by kind, vendor name and type as written, the largest
// counts first, equal ones by value (BINARY, the code-point order).
func searchFacets(ctx context.Context, tx *sql.Tx, m *match) (directory.Facets, error) {
	query, args := facetsSQL(m)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return directory.Facets{}, err
	}
	defer rows.Close()
	var facets directory.Facets
	for rows.Next() {
		var facet string
		var c directory.FacetCount
		if err := rows.Scan(&facet, &c.Value, &c.Count); err != nil {
			return directory.Facets{}, err
		}
		switch facet {
		case "kind":
			facets.Kind = append(facets.Kind, c)
		case "vendor":
			facets.Vendor = append(facets.Vendor, c)
		default:
			facets.Type = append(facets.Type, c)
		}
	}
	return facets, rows.Err()
}

// found is materialized because the three counts read it.
func facetsSQL(m *match) (string, []any) {
	args := append([]any(nil), m.args...)
	args = append(args, directory.MaxFacetValues)
	limit := "?" + strconv.Itoa(len(args))
	query := `WITH ` + m.with + `found (kind, vendor_name, types) AS MATERIALIZED (
	SELECT i.kind, i.vendor_name, i.types FROM ` + m.from + `
	WHERE ` + m.where + `
)
SELECT 'kind', value, n FROM (
	SELECT kind AS value, count(*) AS n FROM found
	GROUP BY kind ORDER BY n DESC, value LIMIT ` + limit + `
)
UNION ALL
SELECT 'vendor', value, n FROM (
	SELECT vendor_name AS value, count(*) AS n FROM found WHERE vendor_name <> ''
	GROUP BY vendor_name ORDER BY n DESC, value LIMIT ` + limit + `
)
UNION ALL
SELECT 'type', value, n FROM (
	SELECT y.value AS value, count(*) AS n FROM found AS f, json_each(f.types) AS y
	GROUP BY y.value ORDER BY n DESC, y.value LIMIT ` + limit + `
)`
	return query, args
}
