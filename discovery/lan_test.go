package discovery

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lmosdir/lmosdir/internal/netlab"
)

// The LAN tests run this test binary on the hosts of a lab, in the role the environment
// names: one process per host, as separate machines would.
const roleVariable = "LMOSDIR_DISCOVERY_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleVariable) {
	case "":
		os.Exit(m.Run())
	case "announce":
		os.Exit(runAnnouncer())
	case "browse":
		os.Exit(runBrowser())
	default:
		fmt.Fprintln(os.Stderr, "unknown role", os.Getenv(roleVariable))
		os.Exit(2)
	}
}

// runAnnouncer serves a directory TD and announces it until SIGTERM, then says goodbye.
func runAnnouncer() int {
	port, _ := strconv.Atoi(os.Getenv("LMOSDIR_DISCOVERY_PORT"))
	listener, err := new(net.ListenConfig).Listen(context.Background(), "tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		_ = http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != directoryTDPath {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, `{"title":"directory of the lab"}`)
		}))
	}()
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	announcer, err := Announce(Announcement{Instance: os.Getenv("LMOSDIR_DISCOVERY_INSTANCE"), Port: port, Scheme: "http", Interfaces: []net.Interface{*iface}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	fmt.Println("ready")
	<-stop
	announcer.Shutdown()
	return 0
}

// seen is what the browser reports of one instance.
type seen struct {
	Instance string            `json:"instance"`
	Port     int               `json:"port"`
	TXT      map[string]string `json:"txt"`
	IPv4     []string          `json:"ipv4"`
	TD       string            `json:"td,omitempty"` // the body at the TD URL, for directories
}

// runBrowser browses _wot._tcp for a while and prints every instance as a JSON line.
func runBrowser() int {
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out := json.NewEncoder(os.Stdout)
	err = Browse(ctx, []net.Interface{*iface}, func(i Instance) {
		s := seen{Instance: i.Name, Port: i.Port, TXT: i.TXT}
		for _, ip := range i.IPv4 {
			s.IPv4 = append(s.IPv4, ip.String())
		}
		if i.IsDirectory() {
			if url, err := i.TDURL(); err == nil {
				s.TD = fetch(url)
			}
		}
		_ = out.Encode(s)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func fetch(url string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return string(body)
}

// browse runs the browser on host and returns what it saw.
func browse(t *testing.T, host *netlab.Host) []seen {
	t.Helper()
	cmd := host.Command(context.Background(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleVariable+"=browse")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	var found []seen
	for line := range strings.Lines(string(out)) {
		var s seen
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("browser line %q: %v", line, err)
		}
		found = append(found, s)
	}
	return found
}

func TestDirectoryIsAnnouncedOnTheLAN(t *testing.T) {
	lab := netlab.New(t, 2)
	directoryHost, browserHost := lab.Hosts[0], lab.Hosts[1]
	const instance, port = "lmosdir on lab-1", 8931
	cmd := directoryHost.Command(context.Background(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleVariable+"=announce", "LMOSDIR_DISCOVERY_INSTANCE="+instance, fmt.Sprintf("LMOSDIR_DISCOVERY_PORT=%d", port))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("announcer: %q %v", line, err)
	}

	found := browse(t, browserHost)
	var directory *seen
	for i := range found {
		if found[i].Instance == instance {
			directory = &found[i]
		}
	}
	if directory == nil {
		t.Fatalf("the directory was not found; found %+v", found)
	}
	wantTXT := map[string]string{"td": "/.well-known/wot", "type": "Directory", "scheme": "http"}
	if directory.Port != port || !maps.Equal(directory.TXT, wantTXT) {
		t.Errorf("found %+v, want port %d and TXT %v", directory, port, wantTXT)
	}
	if len(directory.IPv4) == 0 || directory.IPv4[0] != directoryHost.IP.String() {
		t.Errorf("addresses %v, want %s", directory.IPv4, directoryHost.IP)
	}
	if directory.TD != `{"title":"directory of the lab"}` {
		t.Errorf("the TD URL built from SRV and TXT answered %q", directory.TD)
	}

	stop()
	for _, s := range browse(t, browserHost) {
		if s.Instance == instance {
			t.Errorf("the directory is still found after it stopped: %+v", s)
		}
	}
}

func TestAnnouncementChecks(t *testing.T) {
	valid := Announcement{Instance: "lmosdir on a", Port: 8080, Scheme: "http"}
	if err := valid.check(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Announcement{
		{Port: 8080, Scheme: "http"},
		{Instance: strings.Repeat("x", 64), Port: 8080, Scheme: "http"},
		{Instance: "a", Port: 0, Scheme: "http"},
		{Instance: "a", Port: 8080, Scheme: "ftp"},
	} {
		if _, err := Announce(a); err == nil {
			t.Errorf("%+v was announced", a)
		}
	}
	if got := DefaultInstance("host-7.example.com"); got != "lmosdir on host-7" {
		t.Errorf("default instance %q", got)
	}
	if got := DefaultInstance(strings.Repeat("h", 80)); len(got) != maxInstanceBytes {
		t.Errorf("default instance of %d bytes", len(got))
	}
}
