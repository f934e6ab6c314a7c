// Package tdgen generates realistic, valid Thing Descriptions of LMOS agents and tools from
// a seed, for benchmarks that preload a directory and for tests that need a corpus to search
// and list. The i-th TD of a seed is always the same bytes, whatever else was generated,
// within one version of this package: editing the vocabulary changes the corpus, so compare
// benchmark results only across runs of the same generator.
package tdgen

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Generator makes TDs from a seed. TD(i) depends only on the seed and i (not on call order),
// so many goroutines may generate disjoint ranges concurrently; the Generator is safe for
// concurrent use.
type Generator struct {
	prefix  string // the id up to the index
	seedKey uint64
	scratch sync.Pool
}

// Info describes the i-th TD for tests that need to know what they search for.
type Info struct {
	ID, Kind                    string   // Kind "agent" or "tool"
	Title                       string   // the English title
	Vendor                      string   // vendor name
	Types                       []string // @type values as written
	Actions, Properties, Events []string // affordance names, in document order
	Capabilities                []string // lmos capability ids
	Languages                   []string // languages of titles/descriptions, "en" first
	Size                        int      // len(TD(i))
}

// New returns the generator of seed.
func New(seed int64) *Generator {
	g := &Generator{
		prefix:  "urn:lmosdir:gen:" + strconv.FormatInt(seed, 10) + ":",
		seedKey: mix(uint64(seed)),
	}
	g.scratch.New = func() any { return new(scratch) }
	return g
}

// ID is the id of the i-th Thing: "urn:lmosdir:gen:<seed>:<i>", i zero-padded to 7 digits so
// that ids sort in i order (up to 9,999,999). i must not be negative.
func (g *Generator) ID(i int) string { return string(g.appendID(nil, i)) }

func (g *Generator) appendID(b []byte, i int) []byte {
	if i < 0 {
		panic("tdgen: negative index " + strconv.Itoa(i))
	}
	b = append(b, g.prefix...)
	for d := 1_000_000; d > 1 && i < d; d /= 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(i), 10)
}

// TD returns the i-th TD (with its ID) as compact JSON. The caller owns the bytes.
func (g *Generator) TD(i int) []byte { return g.build(i, nil) }

// Info describes the i-th TD. It generates the TD to find out, so it costs as much as TD(i).
func (g *Generator) Info(i int) Info {
	var info Info
	info.Size = len(g.build(i, &info))
	return info
}

// Every ten consecutive indexes hold exactly four small, three medium, two large and one huge
// TD, interleaved so that short ranges see every class, and the mix a benchmark loads does
// not depend on luck.
var sizeClassOf = [10]uint8{0, 1, 0, 2, 1, 0, 3, 1, 0, 2}

// sizeBounds are the smallest and largest size of each class in bytes.
var sizeBounds = [4][2]int{{1024, 2048}, {3072, 5120}, {6144, 10240}, {12288, 16384}}

// headroom keeps the target this far below the class maximum, so that the affordance that
// crosses the target has room to overshoot it.
const headroom = 600

// Percentages by size class of TDs whose data schemas describe every field: bigger TDs
// are bigger partly because they document more.
var detailPercent = [4]int{20, 50, 70, 80}

const (
	tdContext = "https://www.w3.org/2022/wot/td/v1.1"
	lmosNS    = "https://eclipse.dev/lmos/protocol/v1"
	schemaNS  = "https://schema.org/"
	// createdEpoch is 2023-01-01T00:00:00Z; creation times fall in the 2.5 years after it.
	createdEpoch = 1672531200
	createdSpan  = 912 * 24 * 3600
	modifiedSpan = 200 * 24 * 3600
)

// The security schemes a TD may use; the index is also the scheme's position in the tables.
const (
	secNosec = iota
	secBasic
	secBearer
	secAPIKey
	secOAuth2
)

var (
	schemeNames = [...]string{"nosec_sc", "basic_sc", "bearer_sc", "apikey_sc", "oauth2_sc"}
	schemeWords = [...]string{"nosec", "basic", "bearer", "apikey", "oauth2"}
)

// sectionKeys open the affordance maps when the TD is assembled.
var sectionKeys = [3]string{`,"properties":{`, `,"actions":{`, `,"events":{`}

// scratch holds the buffers of one generation; they are pooled because a 16 KB TD would
// otherwise grow four buffers from nothing.
type scratch struct {
	head     out
	sections [3]out
	pool     []*affordance
	written  []*affordance
}

// thing holds the choices made for one TD. Every choice comes from r in a fixed order, which
// is what makes the output a function of (seed, i) alone.
type thing struct {
	r        rng
	info     *Info // nil unless Info asked
	agent    bool
	class    uint8
	dom      *domain
	ven      *vendor
	brand    string
	langs    [4]uint8 // language indexes, langs[0] is English
	nLangs   int
	twoTypes bool
	other    string // the second @type
	relative bool   // https hrefs are relative to "base"
	wss      bool   // affordances also offer the lmosprotocol WebSocket
	mqtt     bool   // events are also published over MQTT
	coap     bool   // actions can also be invoked over CoAP
	scheme   int
	nosec    bool // a nosec_sc scheme exists beside the main one, used to read "health"
	detail   bool // data schemas carry descriptions
	titled   bool // affordances carry a title
}

func (g *Generator) build(i int, info *Info) []byte {
	s := g.scratch.Get().(*scratch)
	defer g.scratch.Put(s)
	s.head.b = s.head.b[:0]
	for k := range s.sections {
		s.sections[k].b = s.sections[k].b[:0]
	}
	s.written = s.written[:0]

	t := thing{info: info, class: sizeClassOf[i%len(sizeClassOf)]}
	t.r.pcg.Seed(g.seedKey, mix(uint64(i)+0x9e3779b97f4a7c15))
	t.choose()
	lo, hi := sizeBounds[t.class][0], sizeBounds[t.class][1]
	target := lo + t.r.intn(hi-lo-headroom)

	t.writeHead(&s.head, g, i)
	t.fillPool(s)
	t.writeAffordances(s, target, hi)

	size := s.size()
	doc := make([]byte, 0, size)
	doc = append(doc, s.head.b...)
	for k := range s.sections {
		if len(s.sections[k].b) > 0 {
			doc = append(doc, sectionKeys[k]...)
			doc = append(doc, s.sections[k].b...)
			doc = append(doc, '}')
		}
	}
	doc = append(doc, '}')
	if info != nil {
		for _, a := range s.written {
			switch a.sec {
			case propSec:
				info.Properties = append(info.Properties, a.name)
			case actionSec:
				info.Actions = append(info.Actions, a.name)
			case eventSec:
				info.Events = append(info.Events, a.name)
			}
		}
	}
	return doc
}

// size is the length the assembled TD will have.
func (s *scratch) size() int {
	n := len(s.head.b) + 1
	for k := range s.sections {
		if l := len(s.sections[k].b); l > 0 {
			n += len(sectionKeys[k]) + l + 1
		}
	}
	return n
}

func (t *thing) choose() {
	r := &t.r
	t.agent = r.chance(60)
	t.dom = &domains[r.intn(len(domains))]
	t.ven = &vendors[r.intn(len(vendors))]
	t.brand = brands[r.intn(len(brands))]

	// Small TDs keep to two languages so that the header leaves room for affordances.
	extra := r.intn(2)
	if t.class > 0 {
		extra = pickWeighted(r, 30, 30, 25, 15)
	}
	t.nLangs = 1
	for l := 1; l < nLang && extra > 0; l++ {
		if r.intn(nLang-l) < extra {
			t.langs[t.nLangs] = uint8(l)
			t.nLangs++
			extra--
		}
	}

	t.twoTypes = r.chance(35)
	if t.twoTypes {
		t.other = otherTypes[r.intn(len(otherTypes))]
	}
	t.relative = r.chance(55)
	if t.agent {
		t.wss = r.chance(35)
	} else {
		t.wss = r.chance(15)
	}
	t.mqtt = r.chance(8)
	t.coap = r.chance(5)
	t.scheme = pickWeighted(r, 15, 15, 30, 20, 20)
	t.nosec = t.scheme != secNosec && r.chance(40)
	t.detail = r.chance(detailPercent[t.class])
	t.titled = r.chance(50)
}

// pickWeighted returns an index into weights (percentages summing to 100).
func pickWeighted(r *rng, weights ...int) int {
	n := r.intn(100)
	for k, w := range weights {
		if n < w {
			return k
		}
		n -= w
	}
	return len(weights) - 1
}

func (t *thing) kind() int {
	if t.agent {
		return 0
	}
	return 1
}

// host is the vendor subdomain serving the Thing.
func (t *thing) host() string {
	if t.agent {
		return "agents."
	}
	return "api."
}

// addRoot appends the URL of the Thing's own directory on its vendor's server.
func (t *thing) addRoot(o *out, scheme, port string) {
	o.add(scheme)
	o.add("://")
	o.add(t.host())
	o.add(t.ven.host)
	o.add(port)
	o.add("/")
	o.add(t.dom.key)
	o.add("/")
	o.addLower(t.brand)
	o.add("/")
}

func (t *thing) addTitle(o *out, l int) {
	noun, kind := t.dom.noun[l], kindWords[t.kind()][l]
	o.add(t.brand)
	o.add(" ")
	switch l {
	case 0:
		o.add(noun)
		o.add(" ")
		o.add(kind)
	case langDE:
		o.add(noun)
		o.add("-")
		o.add(kind)
	case langFR, langIT:
		o.add(kind)
		o.add(" ")
		o.add(noun)
	case langES:
		o.add(kind)
		o.add(" de ")
		o.add(noun)
	default: // Japanese and Chinese compounds take no space
		o.add(noun)
		o.add(kind)
	}
}

func (t *thing) addDescription(o *out, l int, sentences int) {
	o.add(t.dom.desc[0][l])
	if sentences > 1 {
		if l < langJA { // Japanese and Chinese sentences follow each other without a space
			o.add(" ")
		}
		o.add(t.dom.desc[1][l])
	}
}

func (t *thing) writeHead(o *out, g *Generator, i int) {
	r := &t.r
	o.b = append(o.b, '{')
	o.key("@context")
	o.open('[')
	o.str(tdContext)
	o.open('{')
	o.field("lmos", lmosNS)
	if (t.twoTypes && t.other[0] == 's') || r.chance(15) {
		o.field("schema", schemaNS)
	}
	o.close('}')
	o.close(']')

	o.key("id")
	idAt := len(o.b)
	o.begin()
	o.b = g.appendID(o.b, i)
	o.end()
	idEnd := len(o.b)

	kindType := "lmos:Tool"
	if t.agent {
		kindType = "lmos:Agent"
	}
	o.key("@type")
	if t.twoTypes {
		o.open('[')
		o.str(kindType)
		o.str(t.other)
		o.close(']')
	} else {
		o.str(kindType)
	}

	o.key("title")
	titleAt := len(o.b)
	o.begin()
	t.addTitle(o, 0)
	o.end()
	if t.info != nil {
		t.info.ID = string(o.b[idAt+1 : idEnd-1])
		t.info.Title = string(o.b[titleAt+1 : len(o.b)-1])
		t.info.Kind = "tool"
		if t.agent {
			t.info.Kind = "agent"
		}
		t.info.Types = append(t.info.Types, kindType)
		if t.twoTypes {
			t.info.Types = append(t.info.Types, t.other)
		}
		t.info.Vendor = t.ven.name
		for _, l := range t.langs[:t.nLangs] {
			t.info.Languages = append(t.info.Languages, languages[l])
		}
	}
	if t.nLangs > 1 {
		o.key("titles")
		o.open('{')
		for _, l := range t.langs[:t.nLangs] {
			o.key(languages[l])
			o.begin()
			t.addTitle(o, int(l))
			o.end()
		}
		o.close('}')
	}

	sentences := 1
	if t.class > 0 {
		sentences += r.intn(2)
	}
	o.key("description")
	o.begin()
	t.addDescription(o, 0, sentences)
	o.end()
	if t.nLangs > 1 {
		o.key("descriptions")
		o.open('{')
		for _, l := range t.langs[:t.nLangs] {
			o.key(languages[l])
			o.begin()
			t.addDescription(o, int(l), sentences)
			o.end()
		}
		o.close('}')
	}

	if r.chance(80) {
		o.key("version")
		o.open('{')
		o.key("instance")
		o.begin()
		o.b = strconv.AppendInt(o.b, int64(r.intn(5)), 10)
		o.add(".")
		o.b = strconv.AppendInt(o.b, int64(r.intn(20)), 10)
		o.add(".")
		o.b = strconv.AppendInt(o.b, int64(r.intn(10)), 10)
		o.end()
		o.close('}')
	}
	if r.chance(50) {
		created := int64(createdEpoch + r.intn(createdSpan))
		modified := created + int64(r.intn(modifiedSpan))
		o.key("created")
		o.begin()
		o.b = time.Unix(created, 0).UTC().AppendFormat(o.b, time.RFC3339)
		o.end()
		o.key("modified")
		o.begin()
		o.b = time.Unix(modified, 0).UTC().AppendFormat(o.b, time.RFC3339)
		o.end()
	}
	if r.chance(30) {
		o.key("support")
		o.begin()
		o.add("mailto:support@")
		o.add(t.ven.host)
		o.end()
	}
	if t.relative || r.chance(30) {
		o.key("base")
		o.begin()
		t.addRoot(o, "https", "")
		o.end()
	}

	o.key("lmos:metadata")
	o.open('{')
	o.key("lmos:vendor")
	o.open('{')
	o.field("lmos:name", t.ven.name)
	o.key("lmos:url")
	o.begin()
	o.add("https://")
	o.add(t.ven.host)
	o.end()
	o.close('}')
	t.writeCapabilities(o)
	o.close('}')

	// Small TDs go without links: a header with every optional member could leave too little
	// room below 2 KB for a single affordance.
	if t.class > 0 && r.chance(40) {
		t.writeLinks(o)
	}
	t.writeSecurity(o)
}

func (t *thing) writeCapabilities(o *out) {
	r := &t.r
	percent := 30
	if t.agent {
		percent = 70
	}
	if !r.chance(percent) {
		return
	}
	caps := t.dom.caps
	want := 1
	if t.class > 0 {
		want += r.intn(len(caps))
	}
	o.key("lmos:capabilities")
	o.open('[')
	for k := range caps {
		if want == 0 {
			break
		}
		if r.intn(len(caps)-k) >= want {
			continue
		}
		want--
		c := &caps[k]
		o.open('{')
		o.key("id")
		at := len(o.b)
		o.begin()
		o.add("urn:")
		o.add(t.ven.slug)
		o.add(":capability:")
		o.add(t.dom.key)
		o.add(":")
		o.add(c.key)
		o.end()
		if t.info != nil {
			t.info.Capabilities = append(t.info.Capabilities, string(o.b[at+1:len(o.b)-1]))
		}
		o.field("name", c.name)
		o.key("version")
		o.begin()
		o.b = strconv.AppendInt(o.b, int64(1+r.intn(3)), 10)
		o.add(".")
		o.b = strconv.AppendInt(o.b, int64(r.intn(10)), 10)
		o.add(".0")
		o.end()
		o.field("description", c.desc)
		o.key("examples")
		o.open('[')
		for _, e := range c.examples {
			o.str(e)
		}
		o.close(']')
		o.close('}')
	}
	o.close(']')
}

func (t *thing) writeLinks(o *out) {
	o.key("links")
	o.open('[')
	o.open('{')
	o.field("rel", "service-doc")
	o.key("href")
	o.begin()
	o.add("https://docs.")
	o.add(t.ven.host)
	o.add("/")
	o.add(t.dom.key)
	o.add("/")
	o.addLower(t.brand)
	o.add("/manual.pdf")
	o.end()
	o.field("type", "application/pdf")
	o.field("hreflang", "en")
	o.close('}')
	if t.r.chance(50) {
		o.open('{')
		o.field("rel", "alternate")
		o.key("href")
		o.begin()
		t.addRoot(o, "https", "")
		o.add("openapi.json")
		o.end()
		o.field("type", "application/openapi+json")
		o.close('}')
	}
	o.close(']')
}

func (t *thing) writeSecurity(o *out) {
	r := &t.r
	name := schemeNames[t.scheme]
	o.key("securityDefinitions")
	o.open('{')
	o.key(name)
	o.open('{')
	o.field("scheme", schemeWords[t.scheme])
	switch t.scheme {
	case secBasic:
		o.field("in", "header")
	case secBearer:
		o.field("format", "jwt")
		if r.chance(50) {
			o.field("alg", "ES256")
		} else {
			o.field("alg", "RS256")
		}
		o.key("authorization")
		o.begin()
		o.add("https://auth.")
		o.add(t.ven.host)
		o.add("/token")
		o.end()
	case secAPIKey:
		if r.chance(70) {
			o.field("in", "header")
			o.field("name", "X-API-Key")
		} else {
			o.field("in", "query")
			o.field("name", "api_key")
		}
	case secOAuth2:
		code := r.chance(40)
		if code {
			o.field("flow", "code")
			o.key("authorization")
			o.begin()
			o.add("https://auth.")
			o.add(t.ven.host)
			o.add("/oauth2/authorize")
			o.end()
		} else {
			o.field("flow", "client")
		}
		o.key("token")
		o.begin()
		o.add("https://auth.")
		o.add(t.ven.host)
		o.add("/oauth2/token")
		o.end()
		o.key("scopes")
		o.open('[')
		for _, s := range [...]string{".read", ".write"} {
			o.begin()
			o.add(t.dom.key)
			o.add(s)
			o.end()
		}
		o.close(']')
	}
	o.close('}')
	if t.nosec {
		o.key(schemeNames[secNosec])
		o.open('{')
		o.field("scheme", "nosec")
		o.close('}')
	}
	o.close('}')
	o.key("security")
	if r.chance(20) {
		o.open('[')
		o.str(name)
		o.close(']')
	} else {
		o.str(name)
	}
}

// fillPool lists the affordances a TD may take, in the order it takes them: one action of
// its domain first, so that even the smallest TD names what it does; "chat" next for some
// agents; the rest of its domain mixed with the agent and operational affordances; then
// other domains' affordances for the big TDs — big agents combine tools of several domains.
func (t *thing) fillPool(s *scratch) {
	r := &t.r
	d := t.dom
	actions := 0
	for actions < len(d.aff) && d.aff[actions].sec == actionSec {
		actions++
	}
	first := &d.aff[r.intn(actions)]
	s.pool = append(s.pool[:0], first)
	chat := &agentAffordances[0]
	chatSecond := t.agent && r.chance(40)
	if chatSecond {
		s.pool = append(s.pool, chat)
	}
	fixed := len(s.pool)
	for k := range d.aff {
		if a := &d.aff[k]; a != first {
			s.pool = append(s.pool, a)
		}
	}
	if t.agent {
		for k := range agentAffordances {
			if a := &agentAffordances[k]; a != chat || !chatSecond {
				s.pool = append(s.pool, a)
			}
		}
	}
	for k := range commonAffordances {
		s.pool = append(s.pool, &commonAffordances[k])
	}
	rest := s.pool[fixed:]
	for k := len(rest) - 1; k > 0; k-- {
		j := r.intn(k + 1)
		rest[k], rest[j] = rest[j], rest[k]
	}
	offset := r.intn(len(domains))
	for k := range domains {
		other := &domains[(offset+k)%len(domains)]
		if other == d {
			continue
		}
		for j := range other.aff {
			s.pool = append(s.pool, &other.aff[j])
		}
	}
}

// How much of an affordance is written: all of it, without the title and the descriptions
// of its data schemas, or only its forms.
const (
	stripped = iota
	terse
	full
)

// writeAffordances adds affordances until the TD reaches target bytes without passing hi.
// One that does not fit is tried tersely, then skipped for a smaller one; only the first,
// which may follow a long header, is stripped to its forms rather than skipped, so that
// every TD has an action. Below the target at least headroom bytes are free, which many
// affordances fit in, so skipping never runs out of candidates.
func (t *thing) writeAffordances(s *scratch, target, hi int) {
	for _, a := range s.pool {
		if len(s.written) > 0 && s.size() >= target {
			return
		}
		if t.fit(s, a, full, hi) || t.fit(s, a, terse, hi) || (len(s.written) == 0 && t.fit(s, a, stripped, hi)) {
			s.written = append(s.written, a)
		}
	}
}

// fit writes a at level and keeps it if the TD stays within hi bytes.
func (t *thing) fit(s *scratch, a *affordance, level, hi int) bool {
	o := &s.sections[a.sec]
	mark := len(o.b)
	t.writeAffordance(o, a, level)
	if s.size() <= hi {
		return true
	}
	o.b = o.b[:mark]
	return false
}

func (t *thing) writeAffordance(o *out, a *affordance, level int) {
	o.key(a.name)
	o.open('{')
	if level == full && t.titled {
		o.key("title")
		o.begin()
		o.addTitleCase(a.name)
		o.end()
	}
	if level > stripped {
		o.field("description", a.desc)
	}
	described := level == full && t.detail
	switch a.sec {
	case propSec:
		if level == stripped {
			o.field("type", a.data.typ)
		} else {
			t.schemaMembers(o, a.data, false, described)
		}
		if !a.writable {
			o.key("readOnly")
			o.lit("true")
		}
		if a.observable && level > stripped {
			o.key("observable")
			o.lit("true")
		}
		t.propertyForms(o, a, level == stripped)
	case actionSec:
		if level > stripped {
			if a.safe || a.idem {
				o.key("safe")
				o.lit(strconv.FormatBool(a.safe))
				o.key("idempotent")
				o.lit(strconv.FormatBool(a.idem))
			}
			if t.r.chance(25) {
				o.key("synchronous")
				o.lit("true")
			}
			o.key("input")
			t.schema(o, a.data, described)
			o.key("output")
			t.schema(o, a.output, described)
		}
		t.actionForms(o, a, level == stripped)
	case eventSec:
		if level > stripped {
			o.key("data")
			t.schema(o, a.data, described)
		}
		t.eventForms(o, a, level == stripped)
	}
	o.close('}')
}

func (t *thing) schema(o *out, s *schema, described bool) {
	o.open('{')
	t.schemaMembers(o, s, described, described)
	o.close('}')
}

// schemaMembers writes the members of a data schema, with its description if described and
// with those of nested schemas if nested. A property's own description is the affordance's,
// so its top-level schema is written without one.
func (t *thing) schemaMembers(o *out, s *schema, described, nested bool) {
	o.field("type", s.typ)
	if described && s.desc != "" {
		o.field("description", s.desc)
	}
	if s.format != "" {
		o.field("format", s.format)
	}
	if s.unit != "" {
		o.field("unit", s.unit)
	}
	if len(s.enum) > 0 {
		o.key("enum")
		o.open('[')
		for _, v := range s.enum {
			o.str(v)
		}
		o.close(']')
	}
	if s.min != "" {
		o.key("minimum")
		o.lit(s.min)
	}
	if s.max != "" {
		o.key("maximum")
		o.lit(s.max)
	}
	if s.minLength != "" {
		o.key("minLength")
		o.lit(s.minLength)
	}
	if s.def != "" {
		o.key("default")
		o.lit(s.def)
	}
	if len(s.fields) > 0 {
		o.key("properties")
		o.open('{')
		required := 0
		for _, f := range s.fields {
			o.key(f.name)
			t.schema(o, f.s, nested)
			if f.required {
				required++
			}
		}
		o.close('}')
		if required > 0 {
			o.key("required")
			o.open('[')
			for _, f := range s.fields {
				if f.required {
					o.str(f.name)
				}
			}
			o.close(']')
		}
	}
	if s.items != nil {
		o.key("items")
		t.schema(o, s.items, nested)
	}
}

// href writes an https form target: relative to "base" or absolute.
func (t *thing) href(o *out, section, name, suffix string) {
	o.key("href")
	o.begin()
	if !t.relative {
		t.addRoot(o, "https", "")
	}
	o.add(section)
	o.add(name)
	o.add(suffix)
	o.end()
}

// lmosForm is the form of the LMOS WebSocket binding: one socket per Thing, subprotocol
// lmosprotocol, the operation named by the message.
func (t *thing) lmosForm(o *out, ops ...string) {
	o.open('{')
	o.key("op")
	if len(ops) == 1 {
		o.str(ops[0])
	} else {
		o.open('[')
		for _, op := range ops {
			o.str(op)
		}
		o.close(']')
	}
	o.key("href")
	o.begin()
	t.addRoot(o, "wss", "")
	o.add("ws")
	o.end()
	o.field("subprotocol", "lmosprotocol")
	o.field("contentType", "application/json")
	o.close('}')
}

func (t *thing) propertyForms(o *out, a *affordance, minimal bool) {
	o.key("forms")
	o.open('[')
	o.open('{')
	o.field("op", "readproperty")
	t.href(o, "properties/", a.name, "")
	o.field("contentType", "application/json")
	o.field("htv:methodName", "GET")
	if t.nosec && a.name == "health" {
		o.field("security", schemeNames[secNosec])
	}
	o.close('}')
	if !minimal && a.writable {
		o.open('{')
		o.field("op", "writeproperty")
		t.href(o, "properties/", a.name, "")
		o.field("contentType", "application/json")
		o.field("htv:methodName", "PUT")
		o.close('}')
	}
	if !minimal && a.observable {
		if t.wss {
			t.lmosForm(o, "observeproperty", "unobserveproperty")
		} else {
			o.open('{')
			o.field("op", "observeproperty")
			t.href(o, "properties/", a.name, "/observe")
			o.field("subprotocol", "sse")
			o.field("contentType", "text/event-stream")
			o.close('}')
		}
	}
	o.close(']')
}

func (t *thing) actionForms(o *out, a *affordance, minimal bool) {
	o.key("forms")
	o.open('[')
	o.open('{')
	o.field("op", "invokeaction")
	t.href(o, "actions/", a.name, "")
	o.field("contentType", "application/json")
	o.field("htv:methodName", "POST")
	o.close('}')
	if !minimal && t.wss {
		t.lmosForm(o, "invokeaction")
	}
	if !minimal && t.coap {
		o.open('{')
		o.field("op", "invokeaction")
		o.key("href")
		o.begin()
		t.addRoot(o, "coap", ":5683")
		o.add("actions/")
		o.add(a.name)
		o.end()
		o.field("contentType", "application/cbor")
		o.close('}')
	}
	o.close(']')
}

func (t *thing) eventForms(o *out, a *affordance, minimal bool) {
	o.key("forms")
	o.open('[')
	o.open('{')
	o.field("op", "subscribeevent")
	t.href(o, "events/", a.name, "")
	o.field("subprotocol", "sse")
	o.field("contentType", "text/event-stream")
	o.field("htv:methodName", "GET")
	o.close('}')
	if !minimal && t.wss {
		t.lmosForm(o, "subscribeevent", "unsubscribeevent")
	}
	if !minimal && t.mqtt {
		o.open('{')
		o.field("op", "subscribeevent")
		o.key("href")
		o.begin()
		o.add("mqtt://broker.")
		o.add(t.ven.host)
		o.add(":1883/")
		o.add(t.dom.key)
		o.add("/")
		o.addLower(t.brand)
		o.add("/events/")
		o.add(a.name)
		o.end()
		o.field("contentType", "application/json")
		o.close('}')
	}
	o.close(']')
}

// rng draws the choices of one TD. It lives on the stack of the generating call: no state is
// shared between TDs or goroutines.
type rng struct{ pcg rand.PCG }

// intn returns a number in [0, n); the modulo bias of a 64-bit draw is negligible here.
func (r *rng) intn(n int) int { return int(r.pcg.Uint64() % uint64(n)) }

func (r *rng) chance(percent int) bool { return r.intn(100) < percent }

// mix is the SplitMix64 finalizer. Seeding PCG with consecutive indexes directly would give
// streams whose states differ in a few low bits; mixing spreads them over the whole state.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
