package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// fileLock is the exclusive flock on <database>.lock that makes one process the only user
// of a database file. SQLite's own locks would let a second server share the file, each
// with a writer of its own: their group commits would wait on each other with busy
// timeouts instead of batching, and the id locks that keep other writes out of an
// Update (see keyedMutex) would not reach the other process.
//
// flock, not fcntl: an fcntl lock belongs to the process, so a second Open in the same
// process would take it again without noticing. An flock belongs to the open file
// description, so a second Open in this process is refused like one in another, and the
// kernel releases it when the process dies, even by kill -9: there is no stale lock to
// clean up.
type fileLock struct {
	f *os.File
}

// lockDatabase takes the lock for the database at path (absolute), or says who holds it.
func lockDatabase(path string) (*fileLock, error) {
	// No O_TRUNC: until we hold the lock, the pid in the file is the holder's.
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file of database %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := readPID(f)
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking database file %s: %w", path, err)
		}
		return nil, inUseError(path, holder)
	}
	// The pid is only there to name the holder in the error above; failing to record it
	// leaves a less helpful message, not a less safe lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(strconv.AppendInt(nil, int64(os.Getpid()), 10), 0)
	}
	return &fileLock{f: f}, nil
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	if err != nil {
		return 0 // the holder has not written it yet
	}
	return pid
}

func inUseError(path string, pid int) error {
	switch pid {
	case 0:
		return fmt.Errorf("database file %s is in use by another lmosdir process; stop it or use another --data-dir", path)
	case os.Getpid():
		return fmt.Errorf("database file %s is already open in this lmosdir process (pid %d); close it first", path, pid)
	}
	return fmt.Errorf("database file %s is in use by another lmosdir process (pid %d); stop it or use another --data-dir", path, pid)
}

// release drops the lock. The file stays: removing it would let a process that opened it
// just before lock a file nobody else can see any more.
func (l *fileLock) release() error {
	return l.f.Close()
}
