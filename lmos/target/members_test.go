package target

import (
	"reflect"
	"testing"
)

func TestObjectMembers(t *testing.T) {
	type nameValue struct{ name, value string }
	tests := []struct {
		name, raw string
		want      []nameValue
		ok        bool
	}{
		{"empty", ` { } `, nil, true},
		{"scalars", `{"a":1,"b" : -2.5e3 , "c":true,"d":null,"e":"x"}`,
			[]nameValue{{"a", "1"}, {"b", "-2.5e3"}, {"c", "true"}, {"d", "null"}, {"e", `"x"`}}, true},
		{"nested", `{"o": {"p": [1, {"q": "}"}]}, "a": [[], {}]}`,
			[]nameValue{{"o", `{"p": [1, {"q": "}"}]}`}, {"a", `[[], {}]`}}, true},
		{"strings with quotes and brackets", `{"s": "say \"{[\" \\", "t": "]"}`,
			[]nameValue{{"s", `"say \"{[\" \\"`}, {"t", `"]"`}}, true},
		{"escaped name", `{"a\"b\u0063": 1, "\\": 2}`, []nameValue{{`a"bc`, "1"}, {`\`, "2"}}, true},
		{"repeated name", `{"a": 1, "a": 2}`, []nameValue{{"a", "1"}, {"a", "2"}}, true},
		{"array", `[{"a": 1}]`, nil, false},
		{"string", `"{}"`, nil, false},
		{"nothing", ``, nil, false},
		{"unterminated object", `{"a": 1`, nil, false},
		{"unterminated value", `{"a": {"b": 1}`, nil, false},
		{"unterminated string", `{"a": "x}`, nil, false},
		{"missing colon", `{"a" 1}`, nil, false},
		{"missing value", `{"a": }`, nil, false},
		{"name not a string", `{a: 1}`, nil, false},
		{"trailing comma", `{"a": 1,}`, nil, false},
		{"missing comma", `{"a": 1 "b": 2}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			members, ok := objectMembers([]byte(tt.raw))
			var got []nameValue
			for _, m := range members {
				got = append(got, nameValue{m.name, string(m.value)})
			}
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objectMembers = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
