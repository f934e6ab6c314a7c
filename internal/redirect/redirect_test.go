package redirect

import (
	"net/url"
	"testing"
)

// Redirect targets are compared by origin; real servers in tests cannot
// listen on the default ports, so the port defaulting is checked here.
func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"http://guardian.example/aos", "http://guardian.example:80/v2"},
		{"https://guardian.example/", "https://GUARDIAN.example:443/x"},
		{"http://[::1]:8080/", "http://[::1]:8080/y"},
	}
	different := [][2]string{
		{"http://guardian.example/", "https://guardian.example/"},
		{"http://guardian.example/", "http://guardian.example:8080/"},
		{"https://guardian.example/", "https://guardian.example:80/"},
		{"http://guardian.example/", "http://other.example/"},
		{"http://guardian.example/", "http://guardian.example.evil/"},
	}
	for _, pair := range same {
		if a, b := Origin(mustParse(t, pair[0])), Origin(mustParse(t, pair[1])); a != b {
			t.Errorf("origins of %s and %s differ: %s, %s", pair[0], pair[1], a, b)
		}
	}
	for _, pair := range different {
		if a, b := Origin(mustParse(t, pair[0])), Origin(mustParse(t, pair[1])); a == b {
			t.Errorf("origins of %s and %s are both %s", pair[0], pair[1], a)
		}
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
