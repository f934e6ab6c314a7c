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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/grandcat/zeroconf"

	"github.com/lmosdir/lmosdir/internal/netlab"
	"github.com/lmosdir/lmosdir/internal/testsync"
)

// Roles this test binary plays on lab hosts.
const (
	// thingRole serves the TD in LMOSDIR_ITEST_TD at /td on LMOSDIR_ITEST_PORT and
	// announces it as the _wot._tcp instance LMOSDIR_ITEST_THING, at the address
	// LMOSDIR_ITEST_ADDRESS when given. SIGUSR1 changes the TD's title; SIGTERM says goodbye
	// and prints how many requests the TD had.
	thingRole = "LMOSDIR_ITEST_THING"
	// getRole prints the status and body of a GET of LMOSDIR_ITEST_GET.
	getRole = "LMOSDIR_ITEST_GET"
)

func runThing() int {
	port, _ := strconv.Atoi(os.Getenv("LMOSDIR_ITEST_PORT"))
	var mu sync.Mutex
	td := os.Getenv("LMOSDIR_ITEST_TD")
	var requests atomic.Int32
	listener, err := new(net.ListenConfig).Listen(context.Background(), "tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		_ = http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			requests.Add(1)
			mu.Lock()
			defer mu.Unlock()
			w.Header().Set("Content-Type", "application/td+json")
			_, _ = io.WriteString(w, td)
		}))
	}()
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	instance, txt := os.Getenv(thingRole), []string{"td=/td", "type=Thing"}
	var server *zeroconf.Server
	if address := os.Getenv("LMOSDIR_ITEST_ADDRESS"); address != "" {
		server, err = zeroconf.RegisterProxy(instance, "_wot._tcp", "local.", port, "thing-"+strconv.Itoa(port), []string{address}, txt, []net.Interface{*iface})
	} else {
		server, err = zeroconf.Register(instance, "_wot._tcp", "local.", port, txt, []net.Interface{*iface})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	netlab.AwaitStop(func() {
		mu.Lock()
		td = strings.Replace(td, `"title":"`, `"title":"updated `, 1)
		mu.Unlock()
	})
	server.Shutdown()
	fmt.Println("requests", requests.Load())
	return 0
}

func runGet() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, os.Getenv(getRole), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(res.StatusCode)
	fmt.Print(string(body))
	return 0
}

// announcedThing is a Thing announcer running on a lab host.
type announcedThing struct {
	cmd *exec.Cmd
	out *testsync.Buffer
}

func announceThing(t *testing.T, host *netlab.Host, instance string, port int, td string, env ...string) *announcedThing {
	t.Helper()
	cmd := host.Command(context.WithoutCancel(t.Context()), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, thingRole+"="+instance, fmt.Sprintf("LMOSDIR_ITEST_PORT=%d", port), "LMOSDIR_ITEST_TD="+td)...)
	a := &announcedThing{cmd: cmd, out: &testsync.Buffer{}}
	cmd.Stdout, cmd.Stderr = a.out, a.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	awaitLAN(t, "announcer "+instance+" ready", func() bool { return strings.Contains(a.out.String(), "ready") })
	return a
}

// stop says goodbye and returns how many times the TD was requested.
func (a *announcedThing) stop(t *testing.T) int {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("announcer: %v\n%s", err, a.out)
	}
	var n int
	for line := range strings.Lines(a.out.String()) {
		if rest, ok := strings.CutPrefix(line, "requests "); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	return n
}

func awaitLAN(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsync.Await(t, what, 30*time.Second, cond)
}

// getFrom makes a GET of url on host and returns the status and body.
func getFrom(t *testing.T, host *netlab.Host, url string) (int, string) {
	t.Helper()
	cmd := host.Command(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), getRole+"="+url)
	out, err := cmd.Output()
	if err != nil {
		return 0, err.Error()
	}
	status, body, _ := strings.Cut(string(out), "\n")
	code, _ := strconv.Atoi(status)
	return code, body
}

func labTD(id, title string) string {
	return fmt.Sprintf(`{"@context":"https://www.w3.org/2022/wot/td/v1.1","id":%q,"title":%q,"securityDefinitions":{"n":{"scheme":"nosec"}},"security":"n"}`, id, title)
}

// TestThingsAnnouncedOnTheLANAreRegistered runs lmosdir serve on one host of a lab, Things
// announcing themselves on another, and a second directory and a Thing announcing a public
// address on a third.
func TestThingsAnnouncedOnTheLANAreRegistered(t *testing.T) {
	lab := netlab.New(t, 3)
	server, things, third := lab.Hosts[0], lab.Hosts[1], lab.Hosts[2]
	const port, peerPort = 8950, 8951
	cmd := command(t, "", "serve")
	cmd.Env = append(cmd.Env, "LMOSDIR_DATA_DIR="+t.TempDir(), fmt.Sprintf("LMOSDIR_LISTEN=:%d", port),
		"LMOSDIR_MDNS=true", "LMOSDIR_MDNS_INTERFACES=eth0", "LMOSDIR_MDNS_INSTANCE=lmosdir on lab-1",
		"LMOSDIR_MDNS_RECHECK=1s", "LMOSDIR_MDNS_FETCH_INTERVAL=100ms")
	server.Wrap(cmd)
	p := start(t, cmd, "")
	base := fmt.Sprintf("http://%s:%d", server.IP, port)
	thing := func(id string) (int, map[string]any) {
		status, body := getFrom(t, things, base+"/things/"+id)
		var doc map[string]any
		if status == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatalf("GET %s: %v\n%s", id, err, body)
			}
		}
		return status, doc
	}

	// A public address, reachable from the directory's host were it allowed.
	if out, err := third.Command(t.Context(), "ip", "addr", "add", "203.0.113.7/24", "dev", "eth0").CombinedOutput(); err != nil {
		t.Fatalf("address: %v %s", err, out)
	}
	if out, err := server.Command(t.Context(), "ip", "route", "add", "203.0.113.0/24", "dev", "eth0").CombinedOutput(); err != nil {
		t.Fatalf("route: %v %s", err, out)
	}

	lamp := announceThing(t, things, "lamp", 9001, labTD("urn:x:lamp", "lamp"))
	fan := announceThing(t, things, "fan", 9002, labTD("urn:x:fan", "fan"))
	announceThing(t, things, "broken", 9003, `{"id":"urn:x:broken","title":"broken"}`)
	public := announceThing(t, third, "public", 9004, labTD("urn:x:public", "public"), "LMOSDIR_ITEST_ADDRESS=203.0.113.7")
	peer := command(t, "", "serve")
	peer.Env = append(peer.Env, "LMOSDIR_DATA_DIR="+t.TempDir(), fmt.Sprintf("LMOSDIR_LISTEN=:%d", peerPort),
		"LMOSDIR_MDNS=true", "LMOSDIR_MDNS_INTERFACES=eth0", "LMOSDIR_MDNS_INSTANCE=lmosdir on lab-3", "LMOSDIR_MDNS_REGISTER=false")
	third.Wrap(peer)
	start(t, peer, "")

	// Registration, with where the TD came from.
	awaitLAN(t, "the lamp registered", func() bool { s, _ := thing("urn:x:lamp"); return s == http.StatusOK })
	_, doc := thing("urn:x:lamp")
	reg, _ := doc["registration"].(map[string]any)
	origin, _ := reg["origin"].(map[string]any)
	lampTD := fmt.Sprintf("http://%s:9001/td", things.IP)
	if origin["via"] != "mdns" || origin["instance"] != "lamp" || origin["href"] != lampTD || reg["retrieved"] == nil || reg["ttl"] == nil {
		t.Errorf("registration of the lamp: %v", reg)
	}
	awaitLAN(t, "the fan registered", func() bool { s, _ := thing("urn:x:fan"); return s == http.StatusOK })

	// The other directory is a peer, listed as a Thing Link, not copied; this one is not.
	awaitLAN(t, "the peer directory", func() bool {
		_, body := getFrom(t, things, base+"/directories")
		return strings.Contains(body, `"title":"lmosdir on lab-3"`)
	})
	_, body := getFrom(t, things, base+"/directories")
	var links []struct {
		Type  string `json:"@type"`
		Title string `json:"title"`
		Links []struct{ Rel, Href, Type string }
	}
	if err := json.Unmarshal([]byte(body), &links); err != nil {
		t.Fatalf("/directories: %v\n%s", err, body)
	}
	peerTD := fmt.Sprintf("http://%s:%d/.well-known/wot", third.IP, peerPort)
	if len(links) != 1 || links[0].Type != "ThingLink" || len(links[0].Links) != 1 || links[0].Links[0].Href != peerTD || links[0].Links[0].Rel != "describedby" {
		t.Errorf("/directories = %s, want one Thing Link to %s", body, peerTD)
	}

	// A changed TD is updated.
	if err := lamp.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	awaitLAN(t, "the lamp updated", func() bool {
		_, doc := thing("urn:x:lamp")
		return doc["title"] == "updated lamp"
	})

	// Goodbye, and silence.
	lamp.stop(t)
	awaitLAN(t, "the lamp removed", func() bool { s, _ := thing("urn:x:lamp"); return s == http.StatusNotFound })
	if err := fan.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	awaitLAN(t, "the silent fan removed", func() bool { s, _ := thing("urn:x:fan"); return s == http.StatusNotFound })

	// Neither the invalid TD nor the public announcer got in.
	if s, _ := thing("urn:x:broken"); s != http.StatusNotFound {
		t.Errorf("the invalid TD: %d", s)
	}
	if s, _ := thing("urn:x:public"); s != http.StatusNotFound {
		t.Errorf("the public announcer's TD: %d", s)
	}
	if n := public.stop(t); n != 0 {
		t.Errorf("the TD on a public address was fetched %d times", n)
	}
	p.waitLogged(t,
		`msg="mDNS: thing left" instance=lamp reason=goodbye`,
		`msg="mDNS: thing left" instance=fan reason=silent`,
		`msg="mDNS: thing not registered" instance=broken`,
		`msg="mDNS: thing not registered" instance=public error="it announces only public addresses (203.0.113.7)`,
	)
}
