package lmos

// maxJSONDepth is encoding/json's limit on nesting, which validJSON keeps so that both
// accept the same documents.
const maxJSONDepth = 10000

// validJSON reports whether data is one JSON value, exactly as json.Valid does (strings
// are not checked for UTF-8, as there), in one pass over the bytes: json.Valid's
// state machine, a function call per byte, was a quarter of the time of parsing a message.
func validJSON(data []byte) bool {
	v := jsonValidator{data: data}
	i, ok := v.value(v.space(0), 0)
	return ok && v.space(i) == len(data)
}

type jsonValidator struct{ data []byte }

func (v *jsonValidator) space(i int) int {
	for i < len(v.data) {
		switch v.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value at i and returns the offset just past it.
func (v *jsonValidator) value(i, depth int) (int, bool) {
	if i >= len(v.data) {
		return i, false
	}
	switch c := v.data[i]; {
	case c == '{':
		return v.items(i+1, depth+1, '}', v.member)
	case c == '[':
		return v.items(i+1, depth+1, ']', v.value)
	case c == '"':
		return v.str(i + 1)
	case c == '-' || ('0' <= c && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

// items checks the comma-separated items of an object or an array, each with item, up to
// the closing byte.
func (v *jsonValidator) items(i, depth int, closing byte, item func(i, depth int) (int, bool)) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	i = v.space(i)
	if i < len(v.data) && v.data[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = item(i, depth); !ok {
			return i, false
		}
		if i = v.space(i); i >= len(v.data) {
			return i, false
		}
		switch v.data[i] {
		case closing:
			return i + 1, true
		case ',':
			i = v.space(i + 1)
		default:
			return i, false
		}
	}
}

// member checks an object's name, colon and value at i.
func (v *jsonValidator) member(i, depth int) (int, bool) {
	if i >= len(v.data) || v.data[i] != '"' {
		return i, false
	}
	i, ok := v.str(i + 1)
	if !ok {
		return i, false
	}
	if i = v.space(i); i >= len(v.data) || v.data[i] != ':' {
		return i, false
	}
	return v.value(v.space(i+1), depth)
}

// str checks a string whose opening quote is just before i.
func (v *jsonValidator) str(i int) (int, bool) {
	for i < len(v.data) {
		switch c := v.data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i+1 >= len(v.data) {
				return i, false
			}
			switch v.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(v.data) {
					return i, false
				}
				for _, h := range v.data[i+2 : i+6] {
					if !isHexDigit(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func (v *jsonValidator) number(i int) (int, bool) {
	if v.data[i] == '-' {
		i++
	}
	switch {
	case i < len(v.data) && v.data[i] == '0':
		i++
	case i < len(v.data) && '1' <= v.data[i] && v.data[i] <= '9':
		i = v.digits(i)
	default:
		return i, false
	}
	if i < len(v.data) && v.data[i] == '.' {
		if i+1 >= len(v.data) || !isDecimal(v.data[i+1]) {
			return i, false
		}
		i = v.digits(i + 1)
	}
	if i < len(v.data) && (v.data[i] == 'e' || v.data[i] == 'E') {
		i++
		if i < len(v.data) && (v.data[i] == '+' || v.data[i] == '-') {
			i++
		}
		if i >= len(v.data) || !isDecimal(v.data[i]) {
			return i, false
		}
		i = v.digits(i)
	}
	return i, true
}

func (v *jsonValidator) digits(i int) int {
	for i < len(v.data) && isDecimal(v.data[i]) {
		i++
	}
	return i
}

func (v *jsonValidator) literal(i int, word string) (int, bool) {
	end := i + len(word)
	if end > len(v.data) || string(v.data[i:end]) != word {
		return i, false
	}
	return end, true
}

func isDecimal(c byte) bool { return '0' <= c && c <= '9' }
