package lmos_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lmosdir/lmosdir/lmos"
)

func FuzzParse(f *testing.F) {
	for _, tc := range validExamples {
		f.Add([]byte(tc.json))
	}
	f.Add([]byte(readPropertyWith(traceState("rojo=1,congo=2"), `"x":{"a":[1,{"b":2}]}`)))
	f.Add([]byte(`{"thingID":1,"thingId":2,"a":{"b":1,"b":2}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := lmos.Parse(data)
		if err != nil {
			var verr *lmos.ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("Parse error %v is not a *ValidationError with problems", err)
			}
			return
		}
		first, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a parsed message: %v", err)
		}
		again, err := lmos.Parse(first)
		if err != nil {
			t.Fatalf("Parse of %s: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("Marshal of a reparsed message: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding is not stable\n first: %s\nsecond: %s", first, second)
		}
	})
}

// FuzzValidJSON holds the gateway's JSON check to encoding/json's: the same documents pass.
func FuzzValidJSON(f *testing.F) {
	for _, tc := range validExamples {
		f.Add([]byte(tc.json))
	}
	for _, s := range []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5e`, `1e+`, `1E-7`, `-12.50e+03`,
		`true`, `tru`, `nul`, `falsey`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `{"a":[{"b":null}]}`,
		`"\u00e9\n\"\\\/"`, `"\u00g9"`, `"\x"`, "\"tab\there\"", "\"\xff\xfe\"", ` [ 1 , { } ] `, `{} {}`, `"open`,
	} {
		f.Add([]byte(s))
	}
	// encoding/json refuses nesting deeper than 10,000.
	for _, depth := range []int{10000, 10001} {
		f.Add([]byte(strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth)))
		f.Add([]byte(strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := lmos.ValidJSON(data), json.Valid(data); got != want {
			t.Fatalf("ValidJSON(%q) = %t, json.Valid says %t", data, got, want)
		}
	})
}
