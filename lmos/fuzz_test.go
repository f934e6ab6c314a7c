package lmos_test

import (
	"bytes"
	"encoding/json"
	"errors"
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
