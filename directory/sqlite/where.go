package sqlite

import (
	"strconv"
	"strings"

	"github.com/lmosdir/lmosdir/pathquery"
)

// The JSONPath pre-filter on the embedded store: SQLite's JSON functions test the
// condition on each stored document, so that only the candidates are decoded and evaluated
// in Go. Parsing JSON in SQLite costs a fraction of decoding it into Go values, and the
// equalities the search index can answer (title, @type) need no parsing at all.

// documentOf is the stored TD of the things row alias as JSON text: as a BLOB, SQLite's
// JSON functions would read it as SQLite's binary JSON format.
func documentOf(alias string) string { return "CAST(" + alias + ".document AS TEXT)" }

// whereSQL renders cond as an SQL condition on things AS t, with numbered parameters from
// ?first on, and returns it with their values. What it cannot render it takes as true,
// which costs only candidates, never results.
func whereSQL(cond *pathquery.Condition, first int) (string, []any) {
	w := &where{next: first}
	sql, ok := w.render(cond)
	if !ok {
		return "1", nil
	}
	return sql, w.args
}

type where struct {
	next int
	args []any
}

func (w *where) param(v any) string {
	w.args = append(w.args, v)
	w.next++
	return "?" + strconv.Itoa(w.next-1)
}

// render returns the SQL of c, or !ok when c may hold for any document as far as SQL can
// tell.
func (w *where) render(c *pathquery.Condition) (string, bool) {
	switch c.Kind {
	case pathquery.CondAnd:
		var parts []string
		for _, op := range c.Operands {
			if sql, ok := w.render(op); ok {
				parts = append(parts, sql)
			}
		}
		if len(parts) == 0 {
			return "", false
		}
		return "(" + strings.Join(parts, " AND ") + ")", true
	case pathquery.CondOr:
		parts := make([]string, 0, len(c.Operands))
		for _, op := range c.Operands {
			sql, ok := w.render(op)
			if !ok {
				return "", false
			}
			parts = append(parts, sql)
		}
		return "(" + strings.Join(parts, " OR ") + ")", true
	case pathquery.CondExists:
		path, ok := jsonPath(c.Path)
		if !ok {
			return "", false
		}
		return "json_type(" + documentOf("t") + ", " + w.param(path) + ") IS NOT NULL", true
	case pathquery.CondEquals:
		if lookup := w.indexed(c); lookup != "" {
			// The index answers for the Things that have one. Those without (not derived
			// yet) are always pending expansion, so the pending index finds them, and only
			// their documents are parsed.
			unindexed, ok := w.equals(c, "u")
			if !ok {
				return "", false
			}
			return "t.num IN (" + lookup + ` UNION ALL SELECT e.thing FROM thing_expansions AS e JOIN things AS u ON u.num = e.thing
WHERE e.done = 0 AND NOT EXISTS (SELECT 1 FROM thing_index AS x WHERE x.thing = e.thing) AND ` + unindexed + ")", true
		}
		return w.equals(c, "t")
	}
	return "", false
}

// equals renders an equality on the document of the things row alias.
func (w *where) equals(c *pathquery.Condition, alias string) (string, bool) {
	path, ok := jsonPath(c.Path)
	if !ok {
		return "", false
	}
	doc, p := documentOf(alias), w.param(path)
	switch v := c.Value.(type) {
	case string:
		// json_extract gives objects and arrays as JSON text too; the type test keeps them
		// from equaling a string that spells them.
		return "(json_type(" + doc + ", " + p + ") = 'text' AND json_extract(" + doc + ", " + p + ") = " + w.param(v) + ")", true
	case bool:
		return "json_type(" + doc + ", " + p + ") = '" + strconv.FormatBool(v) + "'", true
	case nil:
		return "json_type(" + doc + ", " + p + ") = 'null'", true
	}
	return "", false
}

// indexed returns a query of the Things whose index answers an equality without parsing
// their documents, or "": the plain title and the @type values are in the index as the TD
// writes them.
func (w *where) indexed(c *pathquery.Condition) string {
	v, ok := c.Value.(string)
	if !ok || len(c.Path) != 1 || c.Path[0].Kind != pathquery.StepName {
		return ""
	}
	var lookup string
	switch c.Path[0].Name {
	case "title":
		lookup = "SELECT thing FROM thing_index WHERE title = " + w.param(v)
	case "@type":
		lookup = "SELECT thing FROM thing_terms WHERE field = 'type_iri' AND value = " + w.param(v)
	default:
		return ""
	}
	return lookup
}

// jsonPath renders steps as an SQLite JSON path. SQLite's paths have no wildcard and no
// escape inside a quoted member name, so such steps are not rendered.
func jsonPath(steps []pathquery.Step) (string, bool) {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range steps {
		switch s.Kind {
		case pathquery.StepName:
			if strings.ContainsAny(s.Name, `"\`) {
				return "", false
			}
			b.WriteString(`."`)
			b.WriteString(s.Name)
			b.WriteByte('"')
		case pathquery.StepIndex:
			b.WriteByte('[')
			if s.Index < 0 {
				b.WriteString("#")
			}
			b.WriteString(strconv.Itoa(s.Index))
			b.WriteByte(']')
		default:
			return "", false
		}
	}
	return b.String(), true
}
