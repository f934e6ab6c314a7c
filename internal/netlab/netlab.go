// Package netlab builds small LANs for tests of LAN discovery: hosts are Linux network
// namespaces whose veth interfaces meet on a bridge in a namespace of its own, so that
// multicast DNS crosses a real (virtual) network and leaves the machine's own interfaces
// alone. Building a lab needs root and the ip command: where they are missing, a test is
// skipped with the reason, and fails in CI (CI=true), where the lab must run.
package netlab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// Subnet is the lab's IPv4 network; host i (from 1) has 10.77.0.i.
const Subnet = "10.77.0.0/24"

// Lab is a LAN of hosts.
type Lab struct {
	t      testing.TB
	prefix string // of every namespace name, unique per lab
	Hosts  []*Host
}

// Host is one namespace on the lab's LAN.
type Host struct {
	// Name is the host name commands see: each host has its own, as machines on a LAN do,
	// so that their mDNS host records do not collide.
	Name      string
	Namespace string
	Interface string // the host's interface on the LAN
	IP        net.IP
}

// New builds a lab of n hosts, removed when the test ends.
func New(t testing.TB, n int) *Lab {
	t.Helper()
	if reason := unavailable(); reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("netlab: %s; CI must run the LAN tests", reason)
		}
		t.Skipf("netlab: %s", reason)
	}
	suffix := make([]byte, 3)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	lab := &Lab{t: t, prefix: "lmd" + hex.EncodeToString(suffix)}
	sw := lab.prefix + "-sw"
	t.Cleanup(lab.remove)
	lab.ip("netns", "add", sw)
	lab.ip("-n", sw, "link", "add", "br0", "type", "bridge")
	lab.ip("-n", sw, "link", "set", "br0", "up")
	for i := 1; i <= n; i++ {
		h := &Host{Name: fmt.Sprintf("lab-%d", i), Namespace: fmt.Sprintf("%s-h%d", lab.prefix, i), Interface: "eth0", IP: net.IPv4(10, 77, 0, byte(i))}
		port := fmt.Sprintf("p%d", i)
		lab.ip("netns", "add", h.Namespace)
		lab.Hosts = append(lab.Hosts, h)
		lab.ip("link", "add", h.Interface, "netns", h.Namespace, "type", "veth", "peer", "name", port, "netns", sw)
		lab.ip("-n", sw, "link", "set", port, "master", "br0")
		lab.ip("-n", sw, "link", "set", port, "up")
		lab.ip("-n", h.Namespace, "link", "set", "lo", "up")
		lab.ip("-n", h.Namespace, "addr", "add", h.IP.String()+"/24", "dev", h.Interface)
		lab.ip("-n", h.Namespace, "link", "set", h.Interface, "up")
		// Multicast DNS goes to 224.0.0.251, which needs a route on a host without a default one.
		lab.ip("-n", h.Namespace, "route", "add", "224.0.0.0/4", "dev", h.Interface)
	}
	return lab
}

// Command prepares a command to run on the host.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	h.Wrap(cmd)
	return cmd
}

// Wrap makes a prepared command run on the host, under the host's name. Every step execs
// the next, so the command keeps the process that Start makes, and signals reach it.
func (h *Host) Wrap(cmd *exec.Cmd) {
	cmd.Args = append([]string{"ip", "netns", "exec", h.Namespace, "unshare", "--uts", "sh", "-c", `hostname "$0" && exec "$@"`, h.Name}, cmd.Args...)
	cmd.Path = ipPath
}

// ipPath is where the ip command is; unavailable checks that there is one.
var ipPath, _ = exec.LookPath("ip")

func (lab *Lab) ip(args ...string) {
	lab.t.Helper()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(context.Background(), "ip", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		lab.t.Fatalf("netlab: ip %v: %v: %s", args, err, stderr.String())
	}
}

// remove deletes the namespaces; their interfaces and the bridge go with them.
func (lab *Lab) remove() {
	names := []string{lab.prefix + "-sw"}
	for _, h := range lab.Hosts {
		names = append(names, h.Namespace)
	}
	for _, name := range names {
		if out, err := exec.CommandContext(context.Background(), "ip", "netns", "del", name).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such file")) {
			lab.t.Errorf("netlab: removing %s: %v: %s", name, err, out)
		}
	}
}

// unavailable says why no lab can be built here, or "".
func unavailable() string {
	if os.Geteuid() != 0 {
		return "network namespaces need root"
	}
	if ipPath == "" {
		return "the ip command (iproute2) is missing"
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return "the unshare command (util-linux) is missing"
	}
	return ""
}

// AwaitStop ends a role that a lab test runs on a host: it prints "ready", which the test
// waits for, calls changed (when not nil) on every SIGUSR1, and returns on SIGTERM.
func AwaitStop(changed func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGUSR1)
	defer signal.Stop(signals)
	fmt.Println("ready")
	for sig := range signals {
		if sig == syscall.SIGTERM {
			return
		}
		if changed != nil {
			changed()
		}
	}
}
