package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/client"
	"github.com/lmosdir/lmosdir/internal/netlab"
)

// discovererRole makes this test binary, run on a lab host, print the URL that
// client.DiscoverDirectory finds, then the title of the TD the client reads there.
const discovererRole = "LMOSDIR_ITEST_DISCOVER"

func runDiscoverer() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	url, err := client.DiscoverDirectory(ctx, *iface)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(url)
	dir, err := client.New(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	td, err := dir.DirectoryTD(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var described struct{ Title string }
	if err := json.Unmarshal(td, &described); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(described.Title)
	return 0
}

type discoveredEntry struct {
	Name string            `json:"name"`
	Kind string            `json:"kind"`
	TD   string            `json:"td"`
	Port int               `json:"port"`
	TXT  map[string]string `json:"txt"`
}

// TestDirectoryAnnouncedOnTheLAN runs lmosdir serve on one host of a lab and finds it from
// another with lmosdir discover and client.DiscoverDirectory; the URL made of the SRV and
// TXT records returns the directory's TD.
func TestDirectoryAnnouncedOnTheLAN(t *testing.T) {
	lab := netlab.New(t, 2)
	server, other := lab.Hosts[0], lab.Hosts[1]
	const port, instance = 8940, "lmosdir on lab-1"
	cmd := command(t, "", "serve")
	cmd.Env = append(cmd.Env, "LMOSDIR_DATA_DIR="+t.TempDir(), fmt.Sprintf("LMOSDIR_LISTEN=:%d", port),
		"LMOSDIR_MDNS=true", "LMOSDIR_MDNS_INTERFACES=eth0", "LMOSDIR_MDNS_INSTANCE="+instance)
	server.Wrap(cmd)
	p := start(t, cmd, "")

	tdURL := fmt.Sprintf("http://%s:%d/.well-known/wot", server.IP, port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		discover := command(t, "", "discover", "--json", "--interfaces", "eth0", "--wait", "2s")
		other.Wrap(discover)
		out, err := discover.Output()
		if err != nil {
			t.Fatalf("lmosdir discover: %v", err)
		}
		var entries []discoveredEntry
		if err := json.Unmarshal(out, &entries); err != nil {
			t.Fatalf("lmosdir discover printed %s: %v", out, err)
		}
		if len(entries) == 1 {
			e := entries[0]
			if e.Name != instance || e.Kind != "directory" || e.TD != tdURL || e.Port != port || e.TXT["type"] != "Directory" {
				t.Fatalf("discovered %+v, want the directory with its TD at %s", e, tdURL)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the directory was not discovered; lmosdir discover printed %s\n%s", out, p.logs.String())
		}
	}

	discoverer := other.Command(context.Background(), os.Args[0], "-test.run=^$")
	discoverer.Env = append(os.Environ(), discovererRole+"=1")
	out, err := discoverer.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 || lines[0] != fmt.Sprintf("http://%s:%d", server.IP, port) || lines[1] == "" {
		t.Fatalf("client.DiscoverDirectory, then the TD there: %q, %v", out, err)
	}
	p.waitLogged(t, "announcing on the LAN")
}
