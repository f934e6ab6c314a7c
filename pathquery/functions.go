package pathquery

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"

	"github.com/theory/jsonpath/registry"
	"github.com/theory/jsonpath/spec"
)

// newRegistry returns the library's functions plus match and search under their prefixed
// names, in versions that return LogicalFalse for Nothing as RFC 9535 requires (the
// library's dereference it). Each query gets its own registry, so a pattern cache lives as
// long as its query.
func newRegistry() *registry.Registry {
	reg := registry.New()
	patterns := &patternCache{compiled: map[string]*regexp.Regexp{}}
	for name, fn := range map[string]spec.Evaluator{
		"match":  patterns.match,
		"search": patterns.search,
	} {
		if err := reg.Register(funcPrefix+name, spec.FuncLogical, checkTwoValues, fn); err != nil {
			panic(fmt.Sprintf("pathquery: registering %s: %v", name, err))
		}
	}
	return reg
}

// checkTwoValues accepts the arguments match and search take, with the library's messages.
func checkTwoValues(args []spec.FuncExprArg) error {
	if len(args) != 2 {
		return fmt.Errorf("expected 2 arguments but found %d", len(args))
	}
	for i, arg := range args {
		if !arg.ConvertsTo(spec.FuncValue) {
			return fmt.Errorf("cannot convert argument %d to Value", i+1)
		}
	}
	return nil
}

// maxCachedPatterns bounds a query's cache: patterns can come from the TDs themselves.
const maxCachedPatterns = 256

// patternCache keeps the compiled patterns of one query, which otherwise every TD would
// compile again. A pattern that does not compile is kept as nil.
type patternCache struct {
	mu       sync.Mutex
	compiled map[string]*regexp.Regexp
}

// match anchors the pattern by concatenation, as the library does; so an alternation at the
// top of the pattern is anchored on one side only ("a|b" matches any string starting with a),
// which keeps results identical to the library's.
func (c *patternCache) match(args []spec.PathValue) spec.PathValue {
	return c.test(args, `\A`, `\z`)
}

func (c *patternCache) search(args []spec.PathValue) spec.PathValue {
	return c.test(args, "", "")
}

func (c *patternCache) test(args []spec.PathValue, before, after string) spec.PathValue {
	subject, ok := stringValue(args[0])
	if !ok {
		return spec.LogicalFalse
	}
	pattern, ok := stringValue(args[1])
	if !ok {
		return spec.LogicalFalse
	}
	re := c.compile(before + pattern + after)
	if re == nil {
		return spec.LogicalFalse
	}
	return spec.Logical(re.MatchString(subject))
}

// stringValue returns the string in a function argument; Nothing arrives as a nil value.
func stringValue(v spec.PathValue) (string, bool) {
	value, ok := v.(*spec.ValueType)
	if !ok || value == nil {
		return "", false
	}
	s, ok := value.Value().(string)
	return s, ok
}

func (c *patternCache) compile(pattern string) *regexp.Regexp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if re, ok := c.compiled[pattern]; ok {
		return re
	}
	re := compileIRegexp(pattern)
	if len(c.compiled) < maxCachedPatterns {
		c.compiled[pattern] = re
	}
	return re
}

// compileIRegexp reads pattern as the library does: Go (Perl) syntax, where "." is compiled
// to match any character but line feed and carriage return, as in I-Regexp (RFC 9485). Only
// the dot of the default flags changes; "(?-s:.)" keeps Go's meaning, which still matches
// a carriage return, as in the library. An invalid pattern yields nil.
func compileIRegexp(pattern string) *regexp.Regexp {
	tree, err := syntax.Parse(pattern, syntax.Perl|syntax.DotNL)
	if err != nil {
		return nil
	}
	excludeLineBreaksFromDot(tree)
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil
	}
	return re
}

// notLineBreak is the class [^\n\r] as rune ranges.
var notLineBreak = []rune{0, '\n' - 1, '\n' + 1, '\r' - 1, '\r' + 1, 0x10FFFF}

func excludeLineBreaksFromDot(re *syntax.Regexp) {
	if re.Op == syntax.OpAnyChar {
		re.Op = syntax.OpCharClass
		re.Rune = append([]rune(nil), notLineBreak...)
		return
	}
	for _, sub := range re.Sub {
		excludeLineBreaksFromDot(sub)
	}
}
