package pathquery

import (
	"math"
	"strconv"
	"strings"
)

// The library does not expose the operands of a comparison, only its rendering: the left
// operand, the operator between single spaces, the right operand. Singular queries render
// as @ or $ followed by [name] or [index] steps, names and string literals quoted with
// strconv.Quote, other literals as Go prints them. readComparison reads that rendering
// back for the operands a Condition can use and reports !ok for anything else, which only
// costs a pre-filter; it never guesses.

// operand is one side of a comparison that a Condition can use.
type operand struct {
	isPath    bool
	path      []Step // relative to @
	isLiteral bool
	literal   any // string, bool or nil
}

// comparisonOps are the operators as the library renders them, longest first.
var comparisonOps = [...]string{"==", "!=", "<=", ">=", "<", ">"}

func readComparison(rendered string) (left operand, op string, right operand, ok bool) {
	left, rest, ok := readOperand(rendered)
	if !ok {
		return operand{}, "", operand{}, false
	}
	for _, candidate := range comparisonOps {
		if after, found := strings.CutPrefix(rest, " "+candidate+" "); found {
			op, rest = candidate, after
			break
		}
	}
	if op == "" {
		return operand{}, "", operand{}, false
	}
	right, rest, ok = readOperand(rest)
	if !ok || rest != "" {
		return operand{}, "", operand{}, false
	}
	return left, op, right, true
}

// readOperand reads a relative singular query or a string, boolean or null literal from
// the start of s and returns the rest of s.
func readOperand(s string) (operand, string, bool) {
	switch {
	case strings.HasPrefix(s, `"`):
		text, rest, ok := readQuoted(s)
		return operand{isLiteral: true, literal: text}, rest, ok && translatableString(text)
	case strings.HasPrefix(s, "@"):
		return readRelativePath(s[1:])
	}
	for _, word := range [...]string{"true", "false", "null"} {
		if rest, ok := strings.CutPrefix(s, word); ok && (rest == "" || rest[0] == ' ') {
			var literal any
			if word != "null" {
				literal = word == "true"
			}
			return operand{isLiteral: true, literal: literal}, rest, true
		}
	}
	return operand{}, "", false
}

func readRelativePath(s string) (operand, string, bool) {
	var path []Step
	for strings.HasPrefix(s, "[") {
		inside := s[1:]
		var step Step
		if strings.HasPrefix(inside, `"`) {
			name, rest, ok := readQuoted(inside)
			if !ok || !translatableName(name) {
				return operand{}, "", false
			}
			step, inside = Step{Kind: StepName, Name: name}, rest
		} else {
			end := strings.IndexByte(inside, ']')
			if end < 0 {
				return operand{}, "", false
			}
			index, err := strconv.Atoi(inside[:end])
			if err != nil || index < math.MinInt32 || index > math.MaxInt32 {
				return operand{}, "", false
			}
			step, inside = Step{Kind: StepIndex, Index: index}, inside[end:]
		}
		rest, ok := strings.CutPrefix(inside, "]")
		if !ok {
			return operand{}, "", false
		}
		path, s = append(path, step), rest
	}
	return operand{isPath: true, path: path}, s, true
}

// readQuoted reads a strconv.Quote rendering from the start of s.
func readQuoted(s string) (text, rest string, ok bool) {
	quoted, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", false
	}
	text, err = strconv.Unquote(quoted)
	if err != nil {
		return "", "", false
	}
	return text, s[len(quoted):], true
}
