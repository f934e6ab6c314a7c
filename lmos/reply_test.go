package lmos

import "testing"

func TestEnds(t *testing.T) {
	for _, c := range []struct {
		body Body
		ends bool
	}{
		{&Error{}, true},
		{&ActionStatus{Status: "completed"}, true},
		{&ActionStatus{Status: "failed"}, true},
		{&ActionStatus{Status: "canceled"}, true},
		{&ActionStatus{Status: "cancelled"}, true}, //nolint:misspell // Things write either
		{&ActionStatus{Status: "pending"}, false},
		{&ActionStatus{Status: "running"}, false},
		{&PropertyReading{}, false},
		{&Event{}, false},
	} {
		if got := (&Message{Body: c.body}).Ends(); got != c.ends {
			t.Errorf("%T %+v: Ends() = %v, want %v", c.body, c.body, got, c.ends)
		}
	}
}
