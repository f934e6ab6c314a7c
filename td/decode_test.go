package td

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSyntaxErrorPositions(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		offset int64
		line   int
		column int
		msg    string
	}{
		{"trailing comma in object", `{"a":1,}`, 7, 1, 8, "invalid character '}' looking for beginning of object key string"},
		{"missing comma across lines", "{\n  \"a\": 1\n  \"b\": 2\n}", 13, 3, 3, `invalid character '"' after object key:value pair`},
		{"CRLF lines count by LF", "{\r\n\"a\":\r\n}", 9, 3, 1, "invalid character '}' looking for beginning of value"},
		{"missing colon", `{"a" 1}`, 5, 1, 6, "invalid character '1' after object key"},
		{"array separator", `[1 2]`, 3, 1, 4, "invalid character '2' after array element"},
		{"trailing comma in array", `[1,]`, 3, 1, 4, "invalid character ']' looking for beginning of value"},
		{"trailing garbage", `{} x`, 3, 1, 4, "invalid character 'x' after top-level value"},
		{"second document", "{}\n{}", 3, 2, 1, "invalid character '{' after top-level value"},
		{"empty input", ``, 0, 1, 1, "unexpected end of JSON input"},
		{"only spaces", "  \n ", 4, 2, 2, "unexpected end of JSON input"},
		{"truncated", "{\"a\": [1, 2", 11, 1, 12, "unexpected end of JSON input"},
		{"unterminated string", `{"a": "xy`, 9, 1, 10, "unexpected end of JSON input"},
		{"invalid UTF-8 in string", "{\"a\":\"\xff\"}", 6, 1, 7, "invalid UTF-8 in string"},
		{"invalid UTF-8 after escape", "{\"a\":\"\\n\xc3\x28\"}", 8, 1, 9, "invalid UTF-8 in string"},
		{"invalid UTF-8 outside strings", "\xff", 0, 1, 1, "invalid UTF-8 byte 0xFF looking for beginning of value"},
		{"non-ASCII outside strings", "{\"a\": é}", 6, 1, 7, "invalid character 'é' looking for beginning of value"},
		{"control character in string", "{\"a\":\"x\ny\"}", 7, 1, 8, `invalid character '\n' in string literal`},
		{"bad escape", `{"a":"\x"}`, 7, 1, 8, "invalid character 'x' in string escape code"},
		{"bad unicode escape", `{"a":"\u12g4"}`, 10, 1, 11, `invalid character 'g' in \u hexadecimal character escape`},
		{"lone minus", `{"a":-}`, 6, 1, 7, "invalid character '}' in numeric literal"},
		{"fraction without digits", `{"a":1.}`, 7, 1, 8, "invalid character '}' in numeric literal"},
		{"exponent without digits", `[1e+]`, 4, 1, 5, "invalid character ']' in numeric literal"},
		{"leading zero", `{"a":01}`, 6, 1, 7, "invalid character '1' after object key:value pair"},
		{"broken literal", `{"a":tru}`, 8, 1, 9, "invalid character '}' in literal true (expecting 'e')"},
		{"single quotes", `{'a':1}`, 1, 1, 2, `invalid character '\'' looking for beginning of object key string`},
		{"byte order mark", "\xef\xbb\xbf{}", 0, 1, 1, "byte order mark (U+FEFF) at the start of the document; save it as UTF-8 without a BOM"},
		{"too deep", strings.Repeat("[", maxDepth+1), maxDepth, 1, maxDepth + 1, "exceeded max depth of 1000 nested objects and arrays"},
	}
	v := newTestValidator(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := v.Validate([]byte(tt.in))
			if doc != nil {
				t.Errorf("got a document with the error: %v", doc)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %T %v, want *SyntaxError", err, err)
			}
			want := SyntaxError{Offset: tt.offset, Line: tt.line, Column: tt.column, Msg: tt.msg}
			if *se != want {
				t.Errorf("got  %+v\nwant %+v", *se, want)
			}
		})
	}
}

func TestSyntaxErrorString(t *testing.T) {
	_, err := newTestValidator(t).Validate([]byte("{\n  \"title\": \"x\",\n  }"))
	want := "invalid JSON at line 3, column 3 (byte 20): invalid character '}' looking for beginning of object key string"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// The decoder must produce exactly what encoding/json with UseNumber
// produces, for every document of the corpus and for tricky strings.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	inputs := map[string][]byte{
		"escapes":         []byte(`{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC","k\u0041":1}`),
		"surrogate pair":  []byte(`["\ud83d\ude00", "x\uD834\uDD1Ey"]`),
		"lone surrogates": []byte(`["\ud83d", "\ude00", "\ud83dx", "\ud83d\u0041"]`),
		"numbers":         []byte(`[0, -0, 1.5, -1.25e10, 1E-3, 12345678901234567890, 0.1e+2]`),
		"literals":        []byte(` {"t": true, "f": false, "n": null, "e": {}, "a": []} `),
		"raw UTF-8":       []byte(`{"title":"Küche – 台所 😀"}`),
	}
	err := filepath.WalkDir("testdata/corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			inputs[path] = b
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range inputs {
		got, _, err := decode(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded value differs from encoding/json:\n got %#v\nwant %#v", name, got, want)
		}
	}
}

func TestDuplicateMembers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Problem
	}{
		{"root", `{"a":1,"a":2}`, []Problem{{"$", dupText("a")}}},
		{"nested in array and prefixed names", `{"properties":{"lmos:status":{"forms":[{"href":"x","op":"readproperty","href":"y"}]}}}`,
			[]Problem{{"$.properties['lmos:status'].forms[0]", dupText("href")}}},
		{"top-level array", `[{"x":1},{"y":1,"y":2}]`, []Problem{{"$[1]", dupText("y")}}},
		{"reported once however often repeated", `{"a":1,"a":2,"a":3}`, []Problem{{"$", dupText("a")}}},
		{"two keys in two objects", `{"b":{"k":1,"k":1},"a":[{"j":0,"j":0}]}`, []Problem{{"$.b", dupText("k")}, {"$.a[0]", dupText("j")}}},
		{"escaped names compare decoded", `{"it's":{"\u0061":1,"a":2}}`, []Problem{{`$['it\'s']`, dupText("a")}}},
		{"same name in different objects is fine", `{"a":{"x":1},"b":{"x":1}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDuplicateLastWins(t *testing.T) {
	v, _, err := decode([]byte(`{"a":1,"a":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.(map[string]any)["a"]; got != "two" {
		t.Errorf("a = %v, want the last value, as encoding/json keeps", got)
	}
}

func dupText(key string) string {
	return `duplicate member name "` + key + `": each name may appear only once in an object; remove or rename the repeated "` + key + `"`
}

func TestFieldPathNotation(t *testing.T) {
	doc := map[string]any{"list": []any{map[string]any{"0": "x"}}}
	tests := []struct {
		loc  []string
		want string
	}{
		{nil, "$"},
		{[]string{"title"}, "$.title"},
		{[]string{"_a1"}, "$._a1"},
		{[]string{"@type"}, "$['@type']"},
		{[]string{"1st"}, "$['1st']"},
		{[]string{"lmos:status"}, "$['lmos:status']"},
		{[]string{""}, "$['']"},
		{[]string{`it's\`}, `$['it\'s\\']`},
		{[]string{"list", "0", "0"}, "$.list[0]['0']"},
	}
	for _, tt := range tests {
		if got := fieldPath(doc, tt.loc); got != tt.want {
			t.Errorf("fieldPath(%q) = %s, want %s", tt.loc, got, tt.want)
		}
	}
}
