package td

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// The directory extracts these fields on every write, so extraction reads the decoded map
// directly: no JSON-LD processing (json-gold manages a few hundred expansions a second), no
// regular expressions, and few allocations beyond what the Index keeps.

// Index is what the directory indexes of a TD for search and filters.
type Index struct {
	Kind                        string            // "agent", "tool", "directory", "link" or "thing"
	Types                       []string          // @type values as written, in document order, deduplicated
	Vendor                      Vendor            // from lmos:metadata / lmos:vendor; zero if absent
	Titles                      map[string]string // language → title, the plain "title" under the TD's default language
	Descriptions                map[string]string // language → description, likewise
	Actions, Properties, Events []Affordance      // see ExtractIndex and ExtractIndexFrom for the order
	Capabilities                []Capability      // lmos:capabilities of lmos:metadata, then of the TD itself
	Schemes                     []string          // lower-case URI schemes of all form hrefs resolved against base, sorted, unique
	Subprotocols                []string          // form "subprotocol" values, sorted, unique
	Text                        TextFields        // what full-text search weights
}

// Vendor is who offers an agent or tool.
type Vendor struct{ Name, URL string }

// Affordance is one property, action or event with its plain (not language-mapped) title
// and description.
type Affordance struct{ Name, Title, Description string }

// Capability is one entry of lmos:capabilities.
type Capability struct{ ID, Version string }

// TextFields is the text full-text search ranks, one field per weight.
type TextFields struct {
	Titles       string // TD titles in all languages (weight A)
	Names        string // affordance names split into lower-case words, and affordance titles (weight B)
	Descriptions string // TD and affordance descriptions in all languages (weight C)
	Vendor       string // vendor name (weight B)
}

// Kinds of Thing.
const (
	KindAgent     = "agent"
	KindTool      = "tool"
	KindDirectory = "directory"
	KindLink      = "link"
	KindThing     = "thing"
)

const (
	// lmosNamespace is the IRI of the LMOS vocabulary. It ends in neither "/" nor "#", so
	// JSON-LD 1.1 does not use "lmos" as a prefix and "lmos:Agent" survives expansion as
	// written; TDs in the wild also spell the expansion with a "/" or "#" before the term.
	lmosNamespace      = "https://eclipse.dev/lmos/protocol/v1"
	discoveryNamespace = DiscoveryContext + "#"
	defaultLanguage    = "en"
)

// ExtractIndex reads the index fields of a TD decoded by Validate (numbers as json.Number).
// It never fails: what is absent or malformed is left empty. A decoded object does not
// remember the order of its members, so affordances come sorted by name; ExtractIndexFrom
// keeps the order of the document.
func ExtractIndex(doc map[string]any) Index {
	return extract(doc, nil)
}

// ExtractIndexFrom is ExtractIndex for a doc that Validate decoded from raw: it lists
// affordances in the order raw writes them. Where raw does not match doc, that affordance
// map falls back to sorted names.
func ExtractIndexFrom(raw []byte, doc map[string]any) Index {
	return extract(doc, raw)
}

func extract(doc map[string]any, raw []byte) Index {
	ctx := readContext(doc["@context"])
	var ix Index
	ix.Types, ix.Kind = ctx.types(doc["@type"])

	meta, _ := ctx.lmosValue(doc, "lmos:metadata").(map[string]any)
	if v, ok := ctx.lmosValue(meta, "lmos:vendor").(map[string]any); ok {
		ix.Vendor = Vendor{Name: ctx.lmosString(v, "lmos:name"), URL: ctx.lmosString(v, "lmos:url")}
	}
	ix.Capabilities = ctx.capabilities(ix.Capabilities, ctx.lmosValue(meta, "lmos:capabilities"))
	ix.Capabilities = ctx.capabilities(ix.Capabilities, ctx.lmosValue(doc, "lmos:capabilities"))

	lang := ctx.language
	if lang == "" {
		lang = defaultLanguage
	}
	ix.Titles = languageMap(doc["title"], doc["titles"], lang)
	ix.Descriptions = languageMap(doc["description"], doc["descriptions"], lang)

	t := scratchPool.Get().(*scratch)
	defer t.release()
	t.titles = appendLanguageValues(t.titles, ix.Titles)
	t.descriptions = appendLanguageValues(t.descriptions, ix.Descriptions)

	var e endpoints
	if base, ok := doc["base"].(string); ok {
		// base must be absolute; one without a scheme resolves nothing.
		e.baseScheme = hrefScheme(base)
	}
	e.addForms(doc["forms"])

	if raw != nil {
		t.readAffordanceOrder(raw)
	}
	ix.Actions = affordances(doc["actions"], t.actions, t, &e)
	ix.Properties = affordances(doc["properties"], t.properties, t, &e)
	ix.Events = affordances(doc["events"], t.events, t, &e)

	slices.Sort(e.schemes)
	slices.Sort(e.subprotocols)
	ix.Schemes, ix.Subprotocols = e.schemes, e.subprotocols
	ix.Text = TextFields{
		Titles:       string(t.titles),
		Names:        string(t.names),
		Descriptions: string(t.descriptions),
		Vendor:       ix.Vendor.Name,
	}
	return ix
}

// scratch holds the buffers of one extraction. They are pooled because growing them from
// nothing on every write would be most of the allocations extraction makes.
type scratch struct {
	titles, names, descriptions []byte
	// The affordance names of raw in document order.
	properties, actions, events []string
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// The pool does not hold on to the buffers of a rare huge TD.
const (
	maxPooledText  = 64 << 10
	maxPooledNames = 1024
)

func (t *scratch) release() {
	if cap(t.titles)+cap(t.names)+cap(t.descriptions) > maxPooledText ||
		cap(t.properties)+cap(t.actions)+cap(t.events) > maxPooledNames {
		return
	}
	t.titles, t.names, t.descriptions = t.titles[:0], t.names[:0], t.descriptions[:0]
	// The Index keeps the names; the pool must not keep them alive too.
	clear(t.properties)
	clear(t.actions)
	clear(t.events)
	t.properties, t.actions, t.events = t.properties[:0], t.actions[:0], t.events[:0]
	scratchPool.Put(t)
}

// ldContext is what extraction needs of a TD's @context: its inline term definitions
// (remote contexts are not fetched) and its default language.
type ldContext struct {
	terms    map[string]any // the inline term definitions, later contexts overriding earlier ones
	language string         // the last "@language" of an inline context
	lmos     string         // the IRI "lmos" is bound to without a final "/" or "#", or lmosNamespace
	// prefixes are terms other than "lmos" bound to the LMOS namespace; they spell LMOS
	// members too ("ns:metadata"). Almost always empty.
	prefixes []string
}

// maxLMOSPrefixes bounds the spellings tried for each LMOS member, whatever a hostile
// context binds.
const maxLMOSPrefixes = 4

func readContext(v any) ldContext {
	c := ldContext{lmos: lmosNamespace}
	entries, ok := v.([]any)
	if !ok {
		entries = []any{v}
	}
	merged := false
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if l, ok := m["@language"].(string); ok {
			c.language = l
		}
		switch {
		case c.terms == nil:
			// The usual single inline context is used as it is, without a copy.
			c.terms = m
		case !merged:
			c.terms = maps.Clone(c.terms)
			merged = true
			fallthrough
		default:
			maps.Copy(c.terms, m)
		}
	}
	// An empty namespace would make every IRI an LMOS term.
	if iri, ok := c.binding("lmos"); ok && trimNamespace(iri) != "" {
		c.lmos = trimNamespace(iri)
	}
	for term := range c.terms {
		// Keywords such as "@vocab" are no prefixes.
		if strings.HasPrefix(term, "@") || term == "lmos" {
			continue
		}
		if iri, ok := c.binding(term); ok && c.isLMOSNamespace(iri) {
			c.prefixes = append(c.prefixes, term)
		}
	}
	// Map iteration order must not leak into which spelling wins.
	slices.Sort(c.prefixes)
	c.prefixes = c.prefixes[:min(len(c.prefixes), maxLMOSPrefixes)]
	return c
}

// binding returns the IRI term is bound to.
func (c *ldContext) binding(term string) (string, bool) {
	switch d := c.terms[term].(type) {
	case string:
		return d, true
	case map[string]any:
		id, ok := d["@id"].(string)
		return id, ok
	}
	return "", false
}

// isLMOSNamespace accepts the default LMOS namespace and whatever "lmos" is bound to, each
// with or without a trailing "/" or "#".
func (c *ldContext) isLMOSNamespace(iri string) bool {
	iri = trimNamespace(iri)
	return iri == lmosNamespace || iri == c.lmos
}

// trimNamespace drops the "/" or "#" that ends a vocabulary IRI, so that a namespace
// compares equal however it is spelled; the term then follows with or without it.
func trimNamespace(iri string) string {
	if n := len(iri); n > 0 && (iri[n-1] == '/' || iri[n-1] == '#') {
		return iri[:n-1]
	}
	return iri
}

// types returns the string @type values in document order without repeats, and the kind
// they make the Thing.
func (c *ldContext) types(v any) ([]string, string) {
	var list []string
	switch t := v.(type) {
	case string:
		list = []string{t}
	case []any:
		var seen set[string]
		for _, e := range t {
			if s, ok := e.(string); ok && seen.add(s) {
				list = append(list, s)
			}
		}
	}
	kind, rank := KindThing, len(kindPrecedence)
	for _, t := range list {
		if k, ok := c.kindOf(t); ok {
			if r := slices.Index(kindPrecedence, k); r < rank {
				kind, rank = k, r
			}
		}
	}
	return list, kind
}

// kindPrecedence decides between @types naming different kinds: an agent is also a tool
// to its callers, but it is listed as what it most is.
var kindPrecedence = []string{KindAgent, KindTool, KindDirectory, KindLink}

func (c *ldContext) kindOf(t string) (string, bool) {
	switch t {
	case "lmos:Agent":
		return KindAgent, true
	case "lmos:Tool":
		return KindTool, true
	case "ThingDirectory":
		return KindDirectory, true
	case "ThingLink":
		return KindLink, true
	}
	iri := c.expand(t)
	if rest, ok := strings.CutPrefix(iri, discoveryNamespace); ok {
		switch rest {
		case "ThingDirectory":
			return KindDirectory, true
		case "ThingLink":
			return KindLink, true
		}
		return "", false
	}
	for _, ns := range [2]string{lmosNamespace, c.lmos} {
		rest, ok := strings.CutPrefix(iri, ns)
		if !ok {
			continue
		}
		if rest != "" && (rest[0] == '/' || rest[0] == '#') {
			rest = rest[1:]
		}
		switch rest {
		case "Agent":
			return KindAgent, true
		case "Tool":
			return KindTool, true
		}
	}
	return "", false
}

// expand turns a compact IRI into the IRI it stands for, by the inline context alone. An
// unbound "lmos" prefix still means LMOS: TDs often rely on a remote LMOS context for it.
func (c *ldContext) expand(t string) string {
	prefix, suffix, ok := strings.Cut(t, ":")
	if !ok || strings.HasPrefix(suffix, "//") {
		// A term, or an absolute IRI: JSON-LD never reads "https://…" as a compact IRI.
		return t
	}
	if iri, ok := c.binding(prefix); ok {
		return iri + suffix
	}
	if prefix == "lmos" {
		return lmosNamespace + suffix
	}
	return t
}

// lmosValue returns the member of m named key ("lmos:…") or the same term under another
// prefix bound to the LMOS namespace.
func (c *ldContext) lmosValue(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	local := key[len("lmos:"):]
	for _, p := range c.prefixes {
		if v, ok := m[p+":"+local]; ok {
			return v
		}
	}
	return nil
}

// lmosString reads a string member of an LMOS object, where the LMOS examples write
// prefixed names ("lmos:name") and generated TDs plain ones ("name").
func (c *ldContext) lmosString(m map[string]any, key string) string {
	v := c.lmosValue(m, key)
	if v == nil {
		v = m[key[len("lmos:"):]]
	}
	s, _ := v.(string)
	return s
}

// capabilities appends the capabilities of v (an array, or a single entry) that have an
// id and are not listed yet.
func (c *ldContext) capabilities(list []Capability, v any) []Capability {
	var seen set[Capability]
	for _, e := range list {
		seen.add(e)
	}
	add := func(e any) {
		var entry Capability
		switch e := e.(type) {
		case string:
			entry.ID = e
		case map[string]any:
			entry = Capability{ID: c.lmosString(e, "lmos:id"), Version: c.lmosString(e, "lmos:version")}
		}
		if entry.ID != "" && seen.add(entry) {
			list = append(list, entry)
		}
	}
	if a, ok := v.([]any); ok {
		for _, e := range a {
			add(e)
		}
	} else {
		add(v)
	}
	return list
}

// languageMap merges a plain value into its language map under lang, unless the map has
// that language already; nil when there is no text at all.
func languageMap(plain, byLanguage any, lang string) map[string]string {
	src, _ := byLanguage.(map[string]any)
	s, hasPlain := plain.(string)
	var m map[string]string
	for l, v := range src {
		if v, ok := v.(string); ok {
			if m == nil {
				m = make(map[string]string, len(src)+1)
			}
			m[l] = v
		}
	}
	if hasPlain {
		if _, ok := m[lang]; !ok {
			if m == nil {
				m = make(map[string]string, 1)
			}
			m[lang] = s
		}
	}
	return m
}

// appendLanguageValues appends the values of m in language order, each text once.
func appendLanguageValues(dst []byte, m map[string]string) []byte {
	if len(m) == 1 {
		for _, v := range m {
			return appendWord(dst, v)
		}
	}
	var buf [8]string
	langs := buf[:0]
	for l := range m {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	var seen set[string]
	for _, l := range langs {
		if v := m[l]; seen.add(v) {
			dst = appendWord(dst, v)
		}
	}
	return dst
}

// appendAnyLanguageValues is appendLanguageValues for a language map as decoded, skipping
// texts equal to plain, which the caller has appended already.
func appendAnyLanguageValues(dst []byte, plain string, v any) []byte {
	src, _ := v.(map[string]any)
	if len(src) == 0 {
		return dst
	}
	var buf [8]string
	langs := buf[:0]
	for l, v := range src {
		if s, ok := v.(string); ok && s != plain {
			langs = append(langs, l)
		}
	}
	slices.Sort(langs)
	var seen set[string]
	for _, l := range langs {
		if s := src[l].(string); seen.add(s) {
			dst = appendWord(dst, s)
		}
	}
	return dst
}

// appendWord appends s to a space-separated text.
func appendWord(dst []byte, s string) []byte {
	if s == "" {
		return dst
	}
	if len(dst) > 0 {
		dst = append(dst, ' ')
	}
	return append(dst, s...)
}

// appendNameWords appends an affordance name as lower-case words: "createInvoice",
// "create_invoice" and "CreateInvoice" all become "create invoice", "getHTTPStatus" becomes
// "get http status". Only ASCII letters have case here; other bytes stay inside words.
func appendNameWords(dst []byte, name string) []byte {
	inWord := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isWordByte(c) {
			inWord = false
			continue
		}
		if inWord && isUpper(c) {
			prev := name[i-1]
			nextLower := i+1 < len(name) && isLower(name[i+1])
			if !isUpper(prev) || nextLower {
				inWord = false
			}
		}
		if !inWord {
			if len(dst) > 0 {
				dst = append(dst, ' ')
			}
			inWord = true
		}
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isWordByte(c byte) bool {
	return isUpper(c) || isLower(c) || '0' <= c && c <= '9' || c >= 0x80
}

// endpoints collects the schemes and subprotocols of forms, unique, in the order met.
type endpoints struct {
	baseScheme                 string
	schemes, subprotocols      []string
	seenSchemes, seenProtocols set[string]
}

func (e *endpoints) addForms(v any) {
	forms, _ := v.([]any)
	for _, f := range forms {
		form, ok := f.(map[string]any)
		if !ok {
			continue
		}
		if href, ok := form["href"].(string); ok {
			// Resolving a reference against base keeps the reference's scheme if it has one
			// and takes base's otherwise, so the scheme is all the resolution decides here.
			s := hrefScheme(href)
			if s == "" {
				s = e.baseScheme
			}
			if s != "" && e.seenSchemes.add(s) {
				e.schemes = append(e.schemes, s)
			}
		}
		if p, ok := form["subprotocol"].(string); ok && p != "" && e.seenProtocols.add(p) {
			e.subprotocols = append(e.subprotocols, p)
		}
	}
}

// hrefScheme returns the lower-cased scheme of an absolute URI reference (RFC 3986:
// a letter, then letters, digits, "+", "-" or ".", then ":"), or "" for a relative one.
// It allocates only for a scheme written in upper case.
func hrefScheme(href string) string {
	for i := 0; i < len(href); i++ {
		c := href[i]
		switch {
		case isLower(c) || isUpper(c):
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(href[:i])
		default:
			return ""
		}
	}
	return ""
}

// affordances reads one affordance map, feeding the text and endpoint collectors on the way.
// order is the names as the document writes them; nil or not matching the map, names are
// sorted instead.
func affordances(v any, order []string, t *scratch, e *endpoints) []Affordance {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	if !sameNames(order, m) {
		order = make([]string, 0, len(m))
		for name := range m {
			order = append(order, name)
		}
		slices.Sort(order)
	}
	list := make([]Affordance, len(order))
	for i, name := range order {
		a, _ := m[name].(map[string]any)
		title, _ := a["title"].(string)
		desc, _ := a["description"].(string)
		list[i] = Affordance{Name: name, Title: title, Description: desc}

		t.names = appendNameWords(t.names, name)
		t.names = appendWord(t.names, title)
		t.names = appendAnyLanguageValues(t.names, title, a["titles"])
		t.descriptions = appendWord(t.descriptions, desc)
		t.descriptions = appendAnyLanguageValues(t.descriptions, desc, a["descriptions"])
		e.addForms(a["forms"])
	}
	return list
}

// sameNames reports whether names lists every member of m exactly once.
func sameNames(names []string, m map[string]any) bool {
	if len(names) != len(m) {
		return false
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return false
		}
	}
	// Equal lengths and all present still allow a repeat that hides another member.
	var seen set[string]
	for _, n := range names {
		if !seen.add(n) {
			return false
		}
	}
	return true
}

// set tells repeats apart: by comparing with each value while there are few, as there
// nearly always are, and in a map past that, so that a hostile document listing thousands
// costs linear time.
type set[T comparable] struct {
	few  [8]T
	n    int
	many map[T]struct{}
}

// add reports whether v is new, and remembers it.
func (s *set[T]) add(v T) bool {
	if s.many == nil {
		if slices.Contains(s.few[:s.n], v) {
			return false
		}
		if s.n < len(s.few) {
			s.few[s.n] = v
			s.n++
			return true
		}
		s.many = make(map[T]struct{}, 2*len(s.few))
		for _, x := range s.few {
			s.many[x] = struct{}{}
		}
	}
	if _, ok := s.many[v]; ok {
		return false
	}
	s.many[v] = struct{}{}
	return true
}

// readAffordanceOrder scans raw for the names of the top-level "properties", "actions" and
// "events" members. Malformed input yields what was read before the fault.
func (t *scratch) readAffordanceOrder(raw []byte) {
	eachMember(raw, skipSpace(raw, 0), func(start, end, val int) int {
		var dst *[]string
		// Converting in the switch compares without allocating; a name with escapes is
		// decoded first.
		key := raw[start+1 : end-1]
		if slices.Contains(key, '\\') {
			key = []byte(memberName(raw, start, end))
		}
		switch string(key) {
		case "properties":
			dst = &t.properties
		case "actions":
			dst = &t.actions
		case "events":
			dst = &t.events
		default:
			return -1
		}
		// A repeated member replaces the earlier one, as it does in the decoded map.
		*dst = (*dst)[:0]
		return eachMember(raw, val, func(start, end, _ int) int {
			*dst = append(*dst, memberName(raw, start, end))
			return -1
		})
	})
}

// eachMember calls fn with the offsets of each member of the object at raw[i], in order:
// raw[start:end] is its quoted name and val where its value begins. fn returns the index
// just past the value if it read the value, or -1 to have it skipped. eachMember returns
// the index just past the object, or -1 at the first syntax fault.
func eachMember(raw []byte, i int, fn func(start, end, val int) int) int {
	if i >= len(raw) || raw[i] != '{' {
		return -1
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		if i < len(raw) && raw[i] == '}' {
			return i + 1
		}
		if i >= len(raw) || raw[i] != '"' {
			return -1
		}
		start := i
		end, err := skipString(raw, i)
		if err != nil {
			return -1
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return -1
		}
		val := skipSpace(raw, i+1)
		next := fn(start, end, val)
		if next < 0 {
			if next, err = skipValue(raw, val); err != nil {
				return -1
			}
		}
		i = next
	}
}

// memberName decodes the JSON string raw[start:end], slicing it directly when it has no
// escapes, as nearly all member names do.
func memberName(raw []byte, start, end int) string {
	body := raw[start+1 : end-1]
	if !slices.Contains(body, '\\') {
		return string(body)
	}
	s := scanner{data: raw, pos: start}
	name, err := s.str()
	if err != nil {
		return string(body)
	}
	return name
}
