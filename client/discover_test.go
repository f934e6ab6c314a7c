package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestDirectoryTD(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dir/.well-known/wot" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", mediaTD)
		_, _ = w.Write([]byte(`{"title":"a directory"}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL + "/dir")
	if err != nil {
		t.Fatal(err)
	}
	td, err := c.DirectoryTD(context.Background())
	if err != nil || string(td) != `{"title":"a directory"}` {
		t.Errorf("TD %s, %v", td, err)
	}
}

func TestDirectoryBase(t *testing.T) {
	for tdURL, want := range map[string]string{
		"http://10.0.0.2:8080/.well-known/wot":  "http://10.0.0.2:8080",
		"https://[fe80::1]:443/.well-known/wot": "https://[fe80::1]:443",
		"http://10.0.0.2:8080/custom/td":        "http://10.0.0.2:8080/custom/td",
	} {
		if got := directoryBase(tdURL); got != want {
			t.Errorf("%s: %s, want %s", tdURL, got, want)
		}
	}
}

// TestDiscoverDirectoryGivesUp checks the answer when nothing answers: on the loopback
// interface of this test, no directory announces itself.
func TestDiscoverDirectoryGivesUp(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if url, err := DiscoverDirectory(ctx, *lo); !errors.Is(err, ErrNoDirectory) {
		t.Errorf("DiscoverDirectory: %q, %v; want ErrNoDirectory", url, err)
	}
}
