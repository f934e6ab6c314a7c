package bench

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverProcess reads a local process's CPU time and memory from /proc. A nil
// serverProcess (the server is elsewhere, or not found) gives empty snapshots.
type serverProcess struct {
	pid int
}

type procSnapshot struct {
	ok       bool
	cpu      time.Duration // user + system
	rssBytes int64
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// findServer returns the process to watch: cfg.ServerPID, or the one listening on the
// target's port on this machine.
func findServer(cfg Config) *serverProcess {
	if cfg.ServerPID > 0 {
		return &serverProcess{pid: cfg.ServerPID}
	}
	u, err := url.Parse(cfg.Target)
	if err != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	if pid := listeningPID(p); pid > 0 {
		return &serverProcess{pid: pid}
	}
	return nil
}

func (p *serverProcess) snapshot() procSnapshot {
	if p == nil {
		return procSnapshot{}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return procSnapshot{}
	}
	// The command name (field 2) may hold spaces; the fields after its ')' are fixed.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 22 {
		return procSnapshot{}
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	rssPages, _ := strconv.ParseInt(fields[21], 10, 64)
	return procSnapshot{
		ok:       true,
		cpu:      time.Duration(utime+stime) * time.Second / clockTicks,
		rssBytes: rssPages * int64(os.Getpagesize()),
	}
}

// listeningPID finds the process with a TCP socket listening on port, from the socket
// tables in /proc/net and the descriptors in /proc/<pid>/fd; 0 when there is none or it
// cannot be seen.
func listeningPID(port int) int {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, inode := range listeningInodes(table, port) {
			inodes[inode] = true
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, proc := range procs {
		fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(proc, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				pid, _ := strconv.Atoi(filepath.Base(proc))
				return pid
			}
		}
	}
	return 0
}

// listeningInodes reads a /proc/net/tcp table: local address is "HEXIP:HEXPORT", state
// 0A is LISTEN, and the inode is the tenth field.
func listeningInodes(table string, port int) []string {
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer f.Close()
	var inodes []string
	scanner := bufio.NewScanner(f)
	scanner.Scan() // header
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
			inodes = append(inodes, fields[9])
		}
	}
	return inodes
}
