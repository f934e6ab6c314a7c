package sqlite

import (
	"strconv"
	"strings"

	"github.com/lmosdir/lmosdir/pathquery"
)

// The JSONPath pre-filter on the embedded store: SQLite's JSON functions test the
// condition on each stored document, so that only the candidates are decoded and evaluated
// in Go. There is no index to use, but parsing JSON in SQLite costs a fraction of decoding
// it into Go values.

// document is the stored TD as JSON text: as a BLOB, SQLite's JSON functions would read it
// as SQLite's binary JSON format.
const document = `CAST(t.document AS TEXT)`

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
		return "json_type(" + document + ", " + w.param(path) + ") IS NOT NULL", true
	case pathquery.CondEquals:
		path, ok := jsonPath(c.Path)
		if !ok {
			return "", false
		}
		p := w.param(path)
		switch v := c.Value.(type) {
		case string:
			// json_extract gives objects and arrays as JSON text too; the type test keeps
			// them from equaling a string that spells them.
			return "(json_type(" + document + ", " + p + ") = 'text' AND json_extract(" + document + ", " + p + ") = " + w.param(v) + ")", true
		case bool:
			return "json_type(" + document + ", " + p + ") = '" + strconv.FormatBool(v) + "'", true
		case nil:
			return "json_type(" + document + ", " + p + ") = 'null'", true
		}
	}
	return "", false
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
