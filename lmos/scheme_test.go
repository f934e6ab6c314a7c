package lmos

import "testing"

func TestHasScheme(t *testing.T) {
	for s, want := range map[string]bool{
		"urn:uuid:1": true, "https://a.example/": true, "coap+tcp://a": true, "x-1.b:c": true, "A:": true,
		"": false, ":a": false, "1a:b": false, "+a:b": false, "a_b:c": false, "ab": false, "a/b:c": false,
	} {
		if got := hasScheme(s); got != want {
			t.Errorf("hasScheme(%q) = %t", s, got)
		}
	}
}
