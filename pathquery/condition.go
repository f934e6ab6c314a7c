package pathquery

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/theory/jsonpath/spec"
)

// CondKind says what a Condition tests.
type CondKind int

const (
	// CondAnd holds when all Operands hold.
	CondAnd CondKind = iota + 1
	// CondOr holds when one of Operands holds.
	CondOr
	// CondExists holds when Path selects something in the TD.
	CondExists
	// CondEquals holds when Path selects a value equal to Value.
	CondEquals
)

// Condition is a necessary condition for a TD to contribute to a filter pass: whenever the
// exact filter holds for a TD, the condition holds for it too (the converse need not be
// true). It is evaluated on the TD as stored, which has no registration member.
type Condition struct {
	Kind CondKind
	// Operands of CondAnd and CondOr; at least two, none of the same kind as the parent.
	Operands []*Condition
	// Path of CondExists (never empty) and CondEquals, from the TD.
	Path []Step
	// Value of CondEquals: a string, a bool or nil (JSON null). Strings hold valid UTF-8
	// without U+0000.
	Value any
}

// StepKind says what a Step selects.
type StepKind int

const (
	// StepName selects the member Name of an object.
	StepName StepKind = iota + 1
	// StepIndex selects element Index of an array; a negative Index counts from the end
	// (-1 is the last element).
	StepIndex
	// StepWildcard selects every member of an object and every element of an array.
	StepWildcard
)

// Step is one step of a Condition's path. Names are not empty and hold valid UTF-8 without
// U+0000; indexes fit in 32 bits.
type Step struct {
	Kind  StepKind
	Name  string
	Index int
}

// conditionOf translates a filter on the TDs into a necessary condition, or nil when
// nothing useful is implied.
func conditionOf(filter *spec.FilterSelector) *Condition {
	return orCondition(filter.LogicalOr)
}

func orCondition(or spec.LogicalOr) *Condition {
	alternatives := make([]*Condition, 0, len(or))
	for _, and := range or {
		c := andCondition(and)
		if c == nil {
			// This alternative may hold for any TD, and so may the disjunction.
			return nil
		}
		alternatives = append(alternatives, c)
	}
	return combine(CondOr, alternatives)
}

func andCondition(and spec.LogicalAnd) *Condition {
	var conjuncts []*Condition
	for _, expr := range and {
		if c := exprCondition(expr); c != nil {
			conjuncts = append(conjuncts, c)
		}
	}
	return combine(CondAnd, conjuncts)
}

// combine joins parts under kind, flattening nested parts of the same kind.
func combine(kind CondKind, parts []*Condition) *Condition {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	c := &Condition{Kind: kind}
	for _, p := range parts {
		if p.Kind == kind {
			c.Operands = append(c.Operands, p.Operands...)
		} else {
			c.Operands = append(c.Operands, p)
		}
	}
	return c
}

// exprCondition translates one operand of && or ||. Negations imply no presence, and
// function results depend on values a path condition cannot express, so neither yields one.
func exprCondition(expr spec.BasicExpr) *Condition {
	switch expr := expr.(type) {
	case *spec.ParenExpr:
		return orCondition(expr.LogicalOr)
	case *spec.ExistExpr:
		return existsCondition(expr.PathQuery)
	case *spec.CompExpr:
		return comparisonCondition(expr)
	}
	return nil
}

func existsCondition(q *spec.PathQuery) *Condition {
	if !strings.HasPrefix(q.String(), "@") {
		return nil
	}
	var path []Step
	for _, seg := range q.Segments() {
		if seg.IsDescendant() || len(seg.Selectors()) != 1 {
			return nil
		}
		step, ok := stepOf(seg.Selectors()[0])
		if !ok {
			return nil
		}
		path = append(path, step)
	}
	if len(path) == 0 || !storedPath(path) {
		return nil
	}
	return &Condition{Kind: CondExists, Path: path}
}

func stepOf(sel spec.Selector) (Step, bool) {
	switch sel := sel.(type) {
	case spec.Name:
		return Step{Kind: StepName, Name: string(sel)}, translatableName(string(sel))
	case spec.Index:
		return Step{Kind: StepIndex, Index: int(sel)}, math.MinInt32 <= sel && sel <= math.MaxInt32
	case spec.WildcardSelector:
		return Step{Kind: StepWildcard}, true
	}
	return Step{}, false
}

// storedPath tells whether path reads the same in the TD the filter sees and in the TD as
// stored. The directory adds registration to the former, so a path into registration, or a
// wildcard that may pass through it, selects things the stored TD lacks.
func storedPath(path []Step) bool {
	first := path[0]
	return first.Kind != StepWildcard && (first.Kind != StepName || first.Name != "registration")
}

// translatableString excludes strings PostgreSQL cannot hold in jsonb or a jsonpath.
func translatableString(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// translatableName also excludes the empty name: whether PostgreSQL reads ."" as a member
// accessor is not worth a failing query.
func translatableName(name string) bool {
	return name != "" && translatableString(name)
}

// comparisonCondition translates path == literal for strings, booleans and null. Numbers
// are left out: the library compares them as float64, PostgreSQL as numeric, and the two
// can disagree on equality.
func comparisonCondition(ce *spec.CompExpr) *Condition {
	left, op, right, ok := readComparison(ce.String())
	if !ok || op != "==" {
		return nil
	}
	if right.isPath {
		left, right = right, left
	}
	if !left.isPath || !right.isLiteral || !storedPathOrRoot(left.path) {
		return nil
	}
	return &Condition{Kind: CondEquals, Path: left.path, Value: right.literal}
}

// storedPathOrRoot is storedPath allowing the empty path, the TD itself.
func storedPathOrRoot(path []Step) bool {
	return len(path) == 0 || storedPath(path)
}

// SQLJSONPath renders c as a PostgreSQL jsonpath for `doc @? path` in lax mode. Lax mode
// makes a name step look into arrays and an index step treat a non-array as a one-element
// array; both only let more TDs through, which a necessary condition may. A wildcard step
// is rendered as .**{1}, which selects object members and array elements alike, since .*
// in lax mode would look into the members of array elements instead of the elements.
func (c *Condition) SQLJSONPath() string {
	var b strings.Builder
	b.WriteString("$ ? (")
	c.writeSQL(&b, false)
	b.WriteString(")")
	return b.String()
}

func (c *Condition) writeSQL(b *strings.Builder, nested bool) {
	switch c.Kind {
	case CondAnd, CondOr:
		op := " && "
		if c.Kind == CondOr {
			op = " || "
		}
		if nested {
			b.WriteByte('(')
		}
		for i, operand := range c.Operands {
			if i > 0 {
				b.WriteString(op)
			}
			operand.writeSQL(b, true)
		}
		if nested {
			b.WriteByte(')')
		}
	case CondExists:
		b.WriteString("exists(")
		writeSQLPath(b, c.Path)
		b.WriteByte(')')
	case CondEquals:
		writeSQLPath(b, c.Path)
		b.WriteString(" == ")
		writeSQLLiteral(b, c.Value)
	}
}

func writeSQLPath(b *strings.Builder, path []Step) {
	b.WriteByte('@')
	for _, step := range path {
		switch step.Kind {
		case StepName:
			b.WriteByte('.')
			writeSQLString(b, step.Name)
		case StepIndex:
			switch {
			case step.Index >= 0:
				fmt.Fprintf(b, "[%d]", step.Index)
			case step.Index == -1:
				b.WriteString("[last]")
			default:
				fmt.Fprintf(b, "[last - %d]", -step.Index-1)
			}
		case StepWildcard:
			b.WriteString(".**{1}")
		}
	}
}

func writeSQLLiteral(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		writeSQLString(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
}

// writeSQLString writes s as a jsonpath string literal.
func writeSQLString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
