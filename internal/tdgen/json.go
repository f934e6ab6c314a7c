package tdgen

// out appends compact JSON. The separator before a member or array element follows from the
// last byte written, so nested writers need no "first element" bookkeeping. Strings are
// appended as they are: every string comes from the vocabulary or is assembled from URL-safe
// pieces, and neither ever needs escaping.
type out struct{ b []byte }

func (o *out) sep() {
	if n := len(o.b); n > 0 {
		switch o.b[n-1] {
		case '{', '[', ':':
		default:
			o.b = append(o.b, ',')
		}
	}
}

func (o *out) key(k string) {
	o.sep()
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *out) str(s string) {
	o.begin()
	o.add(s)
	o.end()
}

// lit appends a number or boolean literal.
func (o *out) lit(s string) {
	o.sep()
	o.b = append(o.b, s...)
}

func (o *out) field(k, v string) {
	o.key(k)
	o.str(v)
}

func (o *out) open(c byte) {
	o.sep()
	o.b = append(o.b, c)
}

func (o *out) close(c byte) { o.b = append(o.b, c) }

// begin, add and end build one string value from pieces without an intermediate string.
func (o *out) begin() {
	o.sep()
	o.b = append(o.b, '"')
}

func (o *out) add(s string) { o.b = append(o.b, s...) }

func (o *out) end() { o.b = append(o.b, '"') }

// addLower appends an ASCII word in lower case.
func (o *out) addLower(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		o.b = append(o.b, c)
	}
}

// addTitleCase turns an affordance name such as getWeather into "Get Weather".
func (o *out) addTitleCase(name string) {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case i == 0 && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case i > 0 && 'A' <= c && c <= 'Z':
			o.b = append(o.b, ' ')
		}
		o.b = append(o.b, c)
	}
}
