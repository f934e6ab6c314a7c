// Package td holds the rules of W3C WoT Thing Descriptions: duplicate-aware
// decoding, JSON Schema validation against the bundled W3C schemas, the checks
// the schemas cannot express, and Thing Model detection.
package td

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Problem is one reason a document is not an acceptable Thing Description.
type Problem struct {
	Field       string `json:"field"`       // JSON path of the offending member, e.g. "$.properties.status.forms[0].href"; "$" for the root
	Description string `json:"description"` // a sentence a person can act on
}

// ValidationError reports a syntactically valid document that is not a valid TD.
type ValidationError struct {
	ThingModel bool      // the document is a Thing Model, not a TD
	Problems   []Problem // at least one; one entry per problem, stable order
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.ThingModel {
		b.WriteString("Thing Model, not a Thing Description")
	} else {
		b.WriteString("invalid Thing Description")
	}
	fmt.Fprintf(&b, " (%d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(")")
	// The full list belongs in Problems; a log line needs only the first few.
	const shown = 3
	for i, p := range e.Problems {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-shown)
			break
		}
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s: %s", sep, p.Field, p.Description)
	}
	return b.String()
}

//go:embed schemas/*.json
var schemaFiles embed.FS

// Where each bundled schema is registered. The TD 1.1 schema is known under
// its own $id (a raw.githubusercontent.com URL of the main branch, which now
// holds TD 2.0 work and must never be fetched) and under the URL the W3C
// publishes it at. The other two schemas have no $id; the .invalid host
// (RFC 2606) makes clear those names are local and can never be fetched.
const (
	td11SchemaID    = "https://raw.githubusercontent.com/w3c/wot-thing-description/main/validation/td-json-schema-validation.json"
	td11SchemaW3C   = "https://www.w3.org/2022/wot/td-schema/v1.1"
	td10SchemaURL   = "https://lmosdir.invalid/schemas/td-json-schema-validation-1.0.json"
	discoverySchema = "https://lmosdir.invalid/schemas/td-discovery-extensions-json-schema.json"
)

// Validator validates TDs offline. Safe for concurrent use; build once.
type Validator struct {
	td11, td10, discovery *jsonschema.Schema
	// raw holds the schema documents by registered URL, so problems can quote
	// what a failed "not" or "pattern" was about.
	raw map[string]any
	// passed skips the schema for bytes that already passed it.
	passed *verdictCache
}

// verdictCacheSize is the number of documents per cache generation: 2 × 16384 hashes are
// about 1.5 MiB, and cover the working set of re-registering Things of a large directory.
const verdictCacheSize = 16384

// offline is the compiler's URL loader: everything the validator needs is
// embedded, and a directory must not reach out to the network (or the file
// system) because a document or schema names a URL.
type offline struct{}

func (offline) Load(u string) (any, error) {
	return nil, fmt.Errorf("td: %s is not a bundled schema and is never fetched", u)
}

// NewValidator compiles the bundled schemas.
func NewValidator() (*Validator, error) {
	v := &Validator{raw: map[string]any{}, passed: newVerdictCache(verdictCacheSize)}
	c := jsonschema.NewCompiler()
	// The 1.0 and discovery schemas misspell "$schema " (trailing space), so
	// they declare no draft; without this v6 would assume 2020-12 and reject
	// the 1.0 schema's "items" arrays.
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(offline{})
	// Format assertions stay on (v6 asserts "format" for draft-07 by default):
	// the schemas use them only where the directory depends on the value —
	// "id" must be an absolute URI (it is the directory key and the
	// registration URL), "created"/"modified" and the registration times must
	// be RFC 3339 date-times (they are parsed and compared), and TD 1.0's
	// "iri-reference" on URLs. The W3C playground asserts the same formats.
	for _, r := range []struct{ file, url string }{
		{"td-json-schema-validation.json", td11SchemaID},
		{"td-json-schema-validation.json", td11SchemaW3C},
		{"td-json-schema-validation-1.0.json", td10SchemaURL},
		{"td-discovery-extensions-json-schema.json", discoverySchema},
	} {
		b, err := schemaFiles.ReadFile("schemas/" + r.file)
		if err != nil {
			return nil, fmt.Errorf("td: read bundled schema: %w", err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("td: parse bundled schema %s: %w", r.file, err)
		}
		if err := c.AddResource(r.url, doc); err != nil {
			return nil, fmt.Errorf("td: add schema %s: %w", r.url, err)
		}
		v.raw[r.url] = doc
	}
	var err error
	if v.td11, err = c.Compile(td11SchemaW3C); err != nil {
		return nil, fmt.Errorf("td: compile TD 1.1 schema: %w", err)
	}
	if v.td10, err = c.Compile(td10SchemaURL); err != nil {
		return nil, fmt.Errorf("td: compile TD 1.0 schema: %w", err)
	}
	if v.discovery, err = c.Compile(discoverySchema); err != nil {
		return nil, fmt.Errorf("td: compile discovery extension schema: %w", err)
	}
	return v, nil
}

// Validate checks raw as a TD and returns its decoded top-level object
// (numbers as json.Number). Errors are *SyntaxError or *ValidationError; the
// map is nil whenever the error is not.
func (v *Validator) Validate(raw []byte) (map[string]any, error) {
	val, problems, err := decode(raw)
	if err != nil {
		return nil, err
	}
	doc, ok := val.(map[string]any)
	if !ok {
		problems = append(problems, Problem{
			Field:       "$",
			Description: fmt.Sprintf("a Thing Description must be a JSON object, not %s", jsonTypeOf(val)),
		})
		return nil, &ValidationError{Problems: sortProblems(problems)}
	}
	key := sha256.Sum256(raw)
	if v.passed.valid(key) {
		return doc, nil
	}
	if p, ok := declaredThingModel(doc); ok {
		return nil, &ValidationError{ThingModel: true, Problems: []Problem{p}}
	}

	schema := v.td11
	if isTD10(doc) {
		schema = v.td10
	}
	schemaErr := schema.Validate(doc)
	if schemaErr != nil {
		problems = append(problems, v.explain(doc, schemaErr)...)
	}
	// The discovery extension schema constrains nothing but "registration".
	if _, ok := doc["registration"]; ok {
		if err := v.discovery.Validate(doc); err != nil {
			problems = append(problems, v.explain(doc, err)...)
		}
	}
	problems = append(problems, checkSecurityNames(doc)...)
	problems = append(problems, checkTypeLinks(doc)...)

	// Thing Models written without "@type": "tm:ThingModel" are recognized by
	// their traits, but only once the TD schema has failed: a valid TD that
	// happens to mention "{{x}}" in a description is still a TD.
	if schemaErr != nil {
		if p, ok := thingModelTraits(doc); ok {
			return nil, &ValidationError{ThingModel: true, Problems: sortProblems(append(problems, p))}
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: sortProblems(problems)}
	}
	v.passed.add(key)
	return doc, nil
}

// sortProblems orders by field then description and drops exact repeats,
// which arise when sibling schema alternatives report the same fault.
func sortProblems(ps []Problem) []Problem {
	slices.SortFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Description, b.Description)
	})
	return slices.Compact(ps)
}

// issueKind groups the JSON Schema failures that are explained (and merged
// across oneOf/anyOf alternatives) the same way.
type issueKind int

const (
	issueType     issueKind = iota // wrong JSON type
	issueValue                     // not one of the allowed values or patterns
	issueRequired                  // a member is missing
	issueOther                     // everything else, already phrased
)

// issue is one leaf failure of a schema, in a form that can be merged with
// the failures of sibling alternatives before it becomes a Problem.
type issue struct {
	loc      []string
	kind     issueKind
	types    []string // issueType: the JSON types allowed
	got      any      // the offending value (issueType: its JSON type name)
	values   []any    // issueValue: allowed values
	patterns []string // issueValue: patterns a string may match instead
	members  []string // issueRequired: missing member; several mean "one of"
	text     string   // issueOther: description without the subject
	// single marks a const or one-valued enum: how the TD schema tells the
	// alternatives of a oneOf apart (e.g. "scheme": "basic").
	single bool
	// lang marks the BCP 47 pattern, which is too long to quote to a person.
	lang bool
}

// explainer turns one schema error tree into Problems for one document.
type explainer struct {
	v   *Validator
	doc map[string]any
}

func (v *Validator) explain(doc map[string]any, err error) []Problem {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Problem{{Field: "$", Description: "the document could not be checked against the TD schema: " + err.Error()}}
	}
	x := explainer{v: v, doc: doc}
	issues := x.flatten(verr)
	out := make([]Problem, 0, len(issues))
	for _, is := range issues {
		out = append(out, x.problem(is))
	}
	// A failed schema must never come back without a problem, or Validate
	// would accept the document.
	if len(out) == 0 {
		out = append(out, Problem{Field: "$", Description: "the document does not match the TD schema: " + verr.Error()})
	}
	return out
}

// flatten reduces the error tree to the leaf issues a person should fix,
// replacing every failed oneOf/anyOf by the alternative the document most
// likely meant.
func (x explainer) flatten(e *jsonschema.ValidationError) []issue {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		var out []issue
		for _, c := range e.Causes {
			out = append(out, x.flatten(c)...)
		}
		return out
	case *kind.AnyOf:
		return x.choose(e)
	case *kind.OneOf:
		if k.Subschemas == nil {
			return x.choose(e)
		}
	}
	return x.leaf(e)
}

func (x explainer) choose(e *jsonschema.ValidationError) []issue {
	loc := e.InstanceLocation
	alts := make([][]issue, 0, len(e.Causes))
	for _, c := range e.Causes {
		alts = append(alts, x.flatten(c))
	}

	// An alternative for another JSON type (string vs array of strings) says
	// nothing about what is wrong with the value as written.
	var types []string
	var got any
	kept := alts[:0:0]
	for _, a := range alts {
		if t := typeIssueAt(a, loc); t != nil {
			types = appendNew(types, t.types...)
			got = t.got
			continue
		}
		kept = append(kept, a)
	}
	if len(kept) == 0 {
		return []issue{{loc: loc, kind: issueType, types: types, got: got}}
	}
	alts = kept

	// Alternatives that reject a discriminating member ("scheme", "rel") are
	// for a different kind of object than the one written, unless all of them
	// reject it: then that member itself is what must change.
	if _, isObject := valueAt(x.doc, loc).(map[string]any); isObject {
		disc := map[string]bool{}
		for _, a := range alts {
			for _, is := range a {
				if is.single && len(is.loc) == len(loc)+1 {
					disc[is.loc[len(loc)]] = true
				}
			}
		}
		if len(disc) > 0 {
			var clean [][]issue
			for _, a := range alts {
				if !rejectsAny(a, loc, disc) {
					clean = append(clean, a)
				}
			}
			switch {
			case len(clean) > 0:
				alts = clean
			case len(disc) == 1:
				var child []string
				for member := range disc {
					child = append(slices.Clip(loc), member)
				}
				var at []issue
				for _, a := range alts {
					for _, is := range a {
						if slices.Equal(is.loc, child) {
							at = append(at, is)
						}
					}
				}
				return mergeIssues(at)
			}
		}
	}

	fewest := len(alts[0])
	for _, a := range alts[1:] {
		fewest = min(fewest, len(a))
	}
	var best [][]issue
	for _, a := range alts {
		if len(a) == fewest {
			best = append(best, a)
		}
	}
	// Tied alternatives that each miss one member of the same object (combo's
	// "oneOf" or "allOf") want any one of those members.
	if len(best) > 1 && fewest == 1 {
		first := best[0][0]
		same := first.kind == issueRequired
		for _, a := range best[1:] {
			same = same && a[0].kind == issueRequired && slices.Equal(a[0].loc, first.loc)
		}
		if same {
			is := issue{loc: first.loc, kind: issueRequired}
			for _, a := range best {
				is.members = appendNew(is.members, a[0].members...)
			}
			return []issue{is}
		}
	}
	var all []issue
	for _, a := range best {
		all = append(all, a...)
	}
	out := mergeIssues(all)
	// The context alternatives differ in which URL comes first; unless one
	// precise item is at fault, stating the rule helps more than merging them.
	if len(loc) == 1 && loc[0] == "@context" && (len(out) > 1 || len(out) == 1 && len(out[0].loc) == 1) {
		return []issue{{loc: loc, kind: issueOther, text: contextAdvice}}
	}
	return out
}

const contextAdvice = `must be "https://www.w3.org/2022/wot/td/v1.1", or an array that starts with it (optionally preceded by the TD 1.0 URL "https://www.w3.org/2019/wot/td/v1") followed by other context URLs or objects`

// mergeIssues joins issues about the same value: allowed types and allowed
// values of sibling alternatives add up; identical issues collapse.
func mergeIssues(in []issue) []issue {
	var out []issue
next:
	for _, is := range in {
		for i := range out {
			o := &out[i]
			if !slices.Equal(o.loc, is.loc) || o.kind != is.kind {
				continue
			}
			switch is.kind {
			case issueType:
				o.types = appendNew(o.types, is.types...)
				continue next
			case issueValue:
				for _, v := range is.values {
					if !slices.ContainsFunc(o.values, func(w any) bool { return fmt.Sprint(w) == fmt.Sprint(v) }) {
						o.values = append(o.values, v)
					}
				}
				o.patterns = appendNew(o.patterns, is.patterns...)
				o.lang = o.lang || is.lang
				continue next
			case issueRequired:
				if slices.Equal(o.members, is.members) {
					continue next
				}
			case issueOther:
				if o.text == is.text {
					continue next
				}
			}
		}
		out = append(out, is)
	}
	return out
}

func typeIssueAt(a []issue, loc []string) *issue {
	for i := range a {
		if a[i].kind == issueType && slices.Equal(a[i].loc, loc) {
			return &a[i]
		}
	}
	return nil
}

func rejectsAny(a []issue, loc []string, members map[string]bool) bool {
	for _, is := range a {
		if len(is.loc) == len(loc)+1 && members[is.loc[len(loc)]] && is.kind != issueRequired {
			return true
		}
	}
	return false
}

func appendNew(list []string, items ...string) []string {
	for _, s := range items {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// leaf converts one failed keyword of the kinds the bundled schemas can
// produce.
func (x explainer) leaf(e *jsonschema.ValidationError) []issue {
	loc := e.InstanceLocation
	other := func(format string, args ...any) []issue {
		return []issue{{loc: loc, kind: issueOther, text: fmt.Sprintf(format, args...)}}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return []issue{{loc: loc, kind: issueType, types: k.Want, got: k.Got}}
	case *kind.Enum:
		return []issue{{loc: loc, kind: issueValue, values: k.Want, got: k.Got, single: len(k.Want) == 1}}
	case *kind.Const:
		return []issue{{loc: loc, kind: issueValue, values: []any{k.Want}, got: k.Got, single: true}}
	case *kind.Pattern:
		return []issue{{loc: loc, kind: issueValue, patterns: []string{k.Want}, got: k.Got, lang: strings.Contains(e.SchemaURL, "bcp47")}}
	case *kind.Required:
		out := make([]issue, 0, len(k.Missing))
		for _, m := range k.Missing {
			out = append(out, issue{loc: loc, kind: issueRequired, members: []string{m}})
		}
		return out
	case *kind.Format:
		return other("%s", formatAdvice(k))
	case *kind.MinItems:
		return other("must have at least %s (it has %d)", plural(k.Want, "item"), k.Got)
	case *kind.MinProperties:
		return other("must have at least %s (it has %d)", plural(k.Want, "member"), k.Got)
	case *kind.UniqueItems:
		return other("must not repeat items: items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.Minimum:
		return other("must be at least %s (got %s)", ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		return other("must be greater than %s (got %s)", ratString(k.Want), ratString(k.Got))
	case *kind.Not:
		return other("%s", x.notAdvice(e))
	case *kind.OneOf:
		return other("matches more than one of the shapes the TD schema allows for it; make it match exactly one")
	}
	// No other keyword of the bundled schemas fails on its own; should a
	// schema update add one, it still gets a sentence naming it.
	return other("does not satisfy the %q keyword of the TD schema", strings.Join(e.ErrorKind.KeywordPath(), "/"))
}

// notAdvice explains a failed "not" from the schema text: its description
// when the schema gives one, else what it forbids.
func (x explainer) notAdvice(e *jsonschema.ValidationError) string {
	owner, _ := x.v.schemaAt(e.SchemaURL).(map[string]any)
	not, _ := owner["not"].(map[string]any)
	if ref, ok := not["$ref"].(string); ok {
		base, _, _ := strings.Cut(e.SchemaURL, "#")
		not, _ = x.v.schemaAt(base + ref).(map[string]any)
	}
	if d, ok := not["description"].(string); ok && d != "" {
		return "breaks a rule of the TD schema: " + strings.ToLower(d[:1]) + d[1:]
	}
	switch {
	case not["const"] != nil:
		return fmt.Sprintf("must not be %s", display(not["const"]))
	case not["required"] != nil:
		if names, ok := not["required"].([]any); ok {
			var s []string
			for _, n := range names {
				s = append(s, fmt.Sprint(n))
			}
			return fmt.Sprintf("must not have %s", quoteList(s, "or"))
		}
	}
	return "has a form the TD schema forbids here"
}

// schemaAt returns the raw schema value at an absolute schema location.
func (v *Validator) schemaAt(loc string) any {
	base, frag, _ := strings.Cut(loc, "#")
	cur, ok := v.raw[base]
	if !ok {
		return nil
	}
	if frag == "" {
		return cur
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func formatAdvice(k *kind.Format) string {
	switch k.Want {
	case "date-time":
		return fmt.Sprintf(`must be an RFC 3339 date-time such as "2025-01-31T12:00:00Z" (got %s)`, display(k.Got))
	case "uri":
		return fmt.Sprintf(`must be an absolute URI such as "urn:uuid:0b6b4e0e-7f7c-4c36-9f8a-1d2e3f4a5b6c" or "https://example.com/things/1" (got %s)`, display(k.Got))
	case "iri-reference", "uri-reference":
		return fmt.Sprintf("must be a URI reference (got %s: %v)", display(k.Got), k.Err)
	}
	return fmt.Sprintf("must be a valid %s (got %s: %v)", k.Want, display(k.Got), k.Err)
}

// problem phrases one issue for a person.
func (x explainer) problem(is issue) Problem {
	field := fieldPath(x.doc, is.loc)
	subject := subjectOf(x.doc, is.loc)
	switch is.kind {
	case issueType:
		return Problem{field, fmt.Sprintf("%s must be %s, not %s", subject, typeList(is.types), withArticle(fmt.Sprint(is.got)))}
	case issueValue:
		return Problem{field, fmt.Sprintf("%s %s (got %s)", subject, allowedValues(is), display(is.got))}
	case issueRequired:
		if len(is.members) == 1 {
			m := is.members[0]
			return Problem{field + keyStep(m), fmt.Sprintf("missing %q: %s", m, x.requiredAdvice(is.loc, m))}
		}
		return Problem{field, fmt.Sprintf("%s must have %s", subject, quoteList(is.members, "or"))}
	}
	return Problem{field, subject + " " + is.text}
}

func allowedValues(is issue) string {
	if is.lang {
		return `must be a BCP 47 language tag such as "en" or "de-CH"`
	}
	var alts []string
	for _, v := range is.values {
		alts = append(alts, display(v))
	}
	for _, p := range is.patterns {
		alts = append(alts, fmt.Sprintf("a string matching the pattern %q", p))
	}
	if len(alts) == 1 {
		return "must be " + alts[0]
	}
	return "must be one of " + strings.Join(alts[:len(alts)-1], ", ") + " or " + alts[len(alts)-1]
}

// nosecAdvice is the smallest security setup that makes a TD valid; the
// wording keeps the real scheme in view, since nosec is rarely what a
// deployment should publish.
const nosecAdvice = `add "securityDefinitions": {"nosec_sc": {"scheme": "nosec"}} and "security": "nosec_sc" (or your real security scheme)`

// requiredAdvice says how to add member m, missing from the object at loc.
func (x explainer) requiredAdvice(loc []string, m string) string {
	parent := ""
	if len(loc) > 0 {
		parent = loc[len(loc)-1]
	}
	if len(loc) == 0 {
		switch m {
		case "securityDefinitions":
			if names := securityNames(x.doc["security"]); len(names) > 0 {
				return fmt.Sprintf(`define the scheme named by "security", e.g. "securityDefinitions": {%q: {"scheme": "nosec"}} (or your real security scheme)`, names[0])
			}
			return nosecAdvice
		case "security":
			if defs, ok := x.doc["securityDefinitions"].(map[string]any); ok && len(defs) > 0 {
				names := sortedKeys(defs)
				return fmt.Sprintf(`add "security": %q to apply a scheme defined in "securityDefinitions" (defined: %s)`, names[0], quoteList(names, "and"))
			}
			return nosecAdvice
		case "title":
			return `add a human-readable "title" for the Thing, e.g. "title": "Weather Agent"`
		case "@context":
			return `add "@context": "https://www.w3.org/2022/wot/td/v1.1"`
		}
	}
	switch m {
	case "forms":
		example := "https://example.com/things/1"
		if len(loc) == 2 {
			example += "/" + loc[0] + "/" + url.PathEscape(loc[1])
		}
		return fmt.Sprintf(`every property, action and event needs at least one form saying how to reach it, e.g. "forms": [{"href": %q}]`, example)
	case "href":
		return `every form and link needs the URL of its target in "href"`
	case "op":
		if len(loc) == 2 && loc[0] == "forms" {
			return `forms at the top level of a TD must say which operation they offer; use one of "readallproperties", "writeallproperties", "readmultipleproperties", "writemultipleproperties", "observeallproperties", "unobserveallproperties", "queryallactions", "subscribeallevents" or "unsubscribeallevents"`
		}
	case "scheme":
		return `every security definition needs a "scheme" such as "nosec", "basic", "digest", "apikey", "bearer", "psk", "oauth2" or "combo"`
	case "instance":
		if parent == "version" {
			return `"version" must give the version of this instance, e.g. "version": {"instance": "1.0.0"}`
		}
	case "contentType":
		if parent == "response" {
			return `a form's "response" must state its media type, e.g. "contentType": "application/json"`
		}
	}
	return fmt.Sprintf("%s must have the member %q", subjectOf(x.doc, loc), m)
}

// fieldPath renders a schema instance location (strings for both members and
// indexes) in the Problem.Field notation, using the document to tell an array
// index from a member named like a number.
func fieldPath(doc any, loc []string) string {
	var b strings.Builder
	b.WriteByte('$')
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			writeIndex(&b, i)
			if i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			writeKey(&b, tok)
			cur = c[tok]
		default:
			writeKey(&b, tok)
			cur = nil
		}
	}
	return b.String()
}

func keyStep(name string) string {
	var b strings.Builder
	writeKey(&b, name)
	return b.String()
}

func valueAt(doc any, loc []string) any {
	cur := doc
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		case map[string]any:
			cur = c[tok]
		default:
			return nil
		}
	}
	return cur
}

// subjectOf names the value at loc for a sentence: "the Thing Description",
// "title", or "item 2 of op".
func subjectOf(doc any, loc []string) string {
	if len(loc) == 0 {
		return "the Thing Description"
	}
	last := loc[len(loc)-1]
	if _, isArray := valueAt(doc, loc[:len(loc)-1]).([]any); isArray {
		if len(loc) == 1 {
			return "item " + last
		}
		return fmt.Sprintf("item %s of %s", last, subjectOf(doc, loc[:len(loc)-1]))
	}
	return strconv.Quote(last)
}

func typeList(types []string) string {
	var s []string
	for _, t := range types {
		s = append(s, withArticle(t))
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func withArticle(jsonType string) string {
	switch jsonType {
	case "object", "array", "integer":
		return "an " + jsonType
	case "null":
		return "null"
	case "boolean":
		return "a boolean (true or false)"
	}
	return "a " + jsonType
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// display renders a JSON value for a message, strings quoted.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprint(v)
}

func quoteList(items []string, conj string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
