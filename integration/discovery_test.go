package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/discovery"
	"github.com/lmosdir/lmosdir/internal/netlab"
)

// browserRole makes this test binary, run on a lab host, browse the LAN once and print
// each instance as a JSON line, with the body at its TD URL.
const browserRole = "LMOSDIR_ITEST_BROWSE"

type browsed struct {
	Name   string `json:"name"`
	TDURL  string `json:"td_url"`
	TD     string `json:"td"`
	Status int    `json:"status"`
}

func runBrowser() int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := json.NewEncoder(os.Stdout)
	err = discovery.Browse(ctx, []net.Interface{*iface}, func(i discovery.Instance) {
		b := browsed{Name: i.Name}
		url, urlErr := i.TDURL()
		b.TDURL = url
		if urlErr == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				b.TD, b.Status = string(body), resp.StatusCode
			}
		}
		_ = out.Encode(b)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestDirectoryAnnouncedOnTheLAN runs lmosdir serve on one host of a lab and finds it from
// another: the URL built from the SRV and TXT records returns the directory's TD.
func TestDirectoryAnnouncedOnTheLAN(t *testing.T) {
	lab := netlab.New(t, 2)
	server, browser := lab.Hosts[0], lab.Hosts[1]
	const port = 8940
	cmd := command(t, "", "serve")
	cmd.Env = append(cmd.Env, "LMOSDIR_DATA_DIR="+t.TempDir(), fmt.Sprintf("LMOSDIR_LISTEN=:%d", port),
		"LMOSDIR_MDNS=true", "LMOSDIR_MDNS_INTERFACES=eth0", "LMOSDIR_MDNS_INSTANCE=lmosdir on lab-1")
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Args = append([]string{"ip", "netns", "exec", server.Namespace}, cmd.Args...)
	cmd.Path = ip
	p := start(t, cmd, "")

	deadline := time.Now().Add(20 * time.Second)
	for {
		found := browseFrom(t, browser)
		if b, ok := found["lmosdir on lab-1"]; ok {
			want := fmt.Sprintf("http://%s:%d/.well-known/wot", server.IP, port)
			if b.TDURL != want || b.Status != http.StatusOK || !strings.Contains(b.TD, `"title"`) {
				t.Fatalf("found %+v, want the TD at %s", b, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the directory was not found on the LAN; found %v\n%s", found, p.logs.String())
		}
	}
	if !strings.Contains(p.logs.String(), "announcing on the LAN") {
		t.Errorf("the log does not say that the directory announces itself:\n%s", p.logs.String())
	}
}

func browseFrom(t *testing.T, host *netlab.Host) map[string]browsed {
	t.Helper()
	cmd := host.Command(context.Background(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), browserRole+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	found := map[string]browsed{}
	for line := range strings.Lines(string(out)) {
		var b browsed
		if err := json.Unmarshal([]byte(line), &b); err != nil {
			t.Fatalf("browser line %q: %v", line, err)
		}
		found[b.Name] = b
	}
	return found
}
