package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestDiscoverArguments(t *testing.T) {
	for _, args := range [][]string{
		{"discover", "extra"},
		{"discover", "--wait", "0s"},
		{"discover", "--interfaces", "no-such-interface0"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}
}

func TestWriteDiscovered(t *testing.T) {
	var out bytes.Buffer
	if err := writeDiscovered(&out, nil); err != nil || out.String() != "nothing answered on the LAN\n" {
		t.Errorf("empty: %q %v", out.String(), err)
	}
	out.Reset()
	list := []discovered{
		{Name: "lmosdir on a", Kind: "directory", TD: "http://10.0.0.1:8080/.well-known/wot"},
		{Name: "lamp", Kind: "thing", Problem: "instance \"lamp\" has no address"},
	}
	if err := writeDiscovered(&out, list); err != nil {
		t.Fatal(err)
	}
	want := "KIND       NAME          TD\n" +
		"directory  lmosdir on a  http://10.0.0.1:8080/.well-known/wot\n" +
		"thing      lamp          (instance \"lamp\" has no address)\n"
	if out.String() != want {
		t.Errorf("table\n%s\nwant\n%s", out.String(), want)
	}
	if strings.Count(out.String(), "\n") != 3 {
		t.Errorf("lines: %q", out.String())
	}
}
