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
	"os/exec"
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
	case "thing":
		os.Exit(runThing())
	case "watch":
		os.Exit(runWatcher())
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
	netlab.AwaitStop(nil)
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
	announcer := startRole(t, directoryHost, "announce", "LMOSDIR_DISCOVERY_INSTANCE="+instance, fmt.Sprintf("LMOSDIR_DISCOVERY_PORT=%d", port))

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

	_ = announcer.stop(syscall.SIGTERM)
	for _, s := range browse(t, browserHost) {
		if s.Instance == instance {
			t.Errorf("the directory is still found after it stopped: %+v", s)
		}
	}
}

// role is the test binary running in a role on a lab host.
type role struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	lines chan string // what it prints, line by line; closed when it exits
	seen  []string    // the lines read from lines so far
	ended bool
	err   error // how it exited
}

// awaitDeadline bounds waiting for a role to print what a test awaits. It is generous: it
// only ends a test that would otherwise hang.
const awaitDeadline = 30 * time.Second

// startRole runs the test binary in the named role on host, with env added to its
// environment, and returns once it printed "ready". It is stopped with SIGTERM when the
// test ends, if it has not been stopped before.
func startRole(t *testing.T, host *netlab.Host, name string, env ...string) *role {
	t.Helper()
	cmd := host.Command(context.Background(), os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), roleVariable+"="+name), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &role{t: t, name: name, cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(r.lines)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			r.lines <- lines.Text()
		}
	}()
	t.Cleanup(func() { _ = r.stop(syscall.SIGTERM) })
	r.await(func(line string) bool { return line == "ready" })
	return r
}

// await returns the next line that match accepts. It fails the test when the role ends
// first, or when none comes within awaitDeadline.
func (r *role) await(match func(line string) bool) string {
	r.t.Helper()
	deadline := time.After(awaitDeadline)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.ended, r.err = true, r.cmd.Wait()
				r.t.Fatalf("%s ended (%v) before printing what was awaited; it printed:\n%s", r.name, r.err, strings.Join(r.seen, "\n"))
			}
			r.seen = append(r.seen, line)
			if match(line) {
				return line
			}
		case <-deadline:
			r.t.Fatalf("%s did not print what was awaited within %v; it printed:\n%s", r.name, awaitDeadline, strings.Join(r.seen, "\n"))
		}
	}
}

// stop sends sig to the role, reads what it prints until it exits, and returns how it
// exited. Once the role has ended, stop only returns that.
func (r *role) stop(sig os.Signal) error {
	if r.ended {
		return r.err
	}
	r.ended = true
	_ = r.cmd.Process.Signal(sig)
	for line := range r.lines {
		r.seen = append(r.seen, line)
	}
	r.err = r.cmd.Wait()
	return r.err
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
