package event

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/lcwrap/lcwrap/internal/lazy"
)

var (
	// ErrNoProcess means there is no process with that pid.
	ErrNoProcess = errors.New("no such process")
	// ErrPermission means the process exists but cannot be inspected.
	ErrPermission = errors.New("permission denied")
)

// Identity names one process on one boot of one host. It is what lcwrap
// records in event details ({pid, startTime, host}; bootId when known;
// startClock when the start time is not in clock ticks).
type Identity struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
	Clock     Clock  `json:"startClock,omitempty"`
	BootID    string `json:"bootId,omitempty"`
	Host      string `json:"host,omitempty"`
}

// MarshalJSON encodes the identity as encoding/json would (bootId and host
// omitted when empty), without reflection: it is on every wrapper's start
// path.
func (id Identity) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 128), `{"pid":`...)
	b = strconv.AppendInt(b, int64(id.PID), 10)
	b = append(b, `,"startTime":`...)
	b = strconv.AppendUint(b, id.StartTime, 10)
	if id.Clock != "" {
		b = append(b, `,"startClock":`...)
		b = strconv.AppendQuote(b, string(id.Clock))
	}
	if id.BootID != "" {
		b = append(b, `,"bootId":`...)
		b = strconv.AppendQuote(b, id.BootID)
	}
	if id.Host != "" {
		b = append(b, `,"host":`...)
		b = strconv.AppendQuote(b, id.Host)
	}
	return append(b, '}'), nil
}

// ProcInfo is what the process table says about a pid right now.
type ProcInfo struct {
	PID       int
	PPID      int
	PGID      int
	SID       int  // session id (0 when unknown)
	State     byte // 'R', 'S', 'Z', ... ('?' when unknown)
	StartTime uint64
	Clock     Clock // StartTime's unit
	Comm      string
}

// Zombie reports whether the process has exited but not been reaped.
func (i ProcInfo) Zombie() bool { return i.State == 'Z' || i.State == 'X' }

// ProcTable reads the process table. System is the real one.
type ProcTable interface {
	// Stat returns the process's info, ErrNoProcess or ErrPermission.
	Stat(pid int) (ProcInfo, error)
}

// ProcStatus is the result of CheckIdentity.
type ProcStatus int

// The outcomes of Check.
const (
	ProcUnknown ProcStatus = iota
	Alive
	Gone
)

func (s ProcStatus) String() string {
	switch s {
	case Alive:
		return "alive"
	case Gone:
		return "gone"
	}
	return "unknown"
}

// Verdict explains a Check result in words fit for event details.
type Verdict struct {
	Status ProcStatus
	Reason string
}

// CheckIdentity compares a recorded identity with the process table t. A start
// time recorded in another clock (by the other build: see Clock) is
// converted where the two can be related (Linux) and compared within a
// tolerance; where they cannot, or disagree beyond it, a present pid is
// ProcUnknown, never Gone.
func CheckIdentity(t ProcTable, id Identity) Verdict {
	if id.Host != "" && id.Host != Host() {
		return Verdict{ProcUnknown, "recorded on host " + id.Host + ", this is " + Host()}
	}
	if id.BootID != "" && BootID() != "" && id.BootID != BootID() {
		return Verdict{Gone, "the host has rebooted since the process was recorded"}
	}
	if id.PID <= 0 {
		return Verdict{ProcUnknown, "no pid recorded"}
	}
	info, err := t.Stat(id.PID)
	switch {
	case errors.Is(err, ErrNoProcess):
		return Verdict{Gone, "no process has that pid"}
	case err != nil:
		return Verdict{ProcUnknown, "cannot inspect the pid: " + err.Error()}
	}
	same, comparable := true, true
	if id.StartTime != 0 {
		same, comparable = sameStart(id, info)
	}
	switch {
	case comparable && !same:
		return Verdict{Gone, "the pid now belongs to a different process (start time differs)"}
	case info.Zombie():
		// Ours or not, the process that has the pid now has exited.
		return Verdict{Gone, "the process has exited (zombie, not yet reaped)"}
	case !comparable:
		return Verdict{ProcUnknown, "a process has that pid, but its start time was recorded in " + id.clock().String() +
			" and this build reads " + info.Clock.String() + ": they cannot be compared here"}
	case id.StartTime == 0:
		return Verdict{ProcUnknown, "a process has that pid, but no start time was recorded to tell whether it is the same one"}
	}
	return Verdict{Alive, "the same process (pid and start time match)"}
}

// IdentityOf returns the identity of a live process from t, host and boot included.
func IdentityOf(t ProcTable, pid int) (Identity, ProcInfo, error) {
	info, err := t.Stat(pid)
	if err != nil {
		return Identity{}, info, err
	}
	return Identity{PID: pid, StartTime: info.StartTime, Clock: info.Clock, BootID: BootID(), Host: Host()}, info, nil
}

// SelfIdentity returns lcwrap's own identity.
//
// It is read once per process and remembered: a process's identity does
// not change, and both the wrapper and its journal ask for it on the
// start-up path.
func SelfIdentity() (Identity, error) {
	s := self.Get()
	return s.id, s.err
}

var self = lazy.Value[selfRead]{Make: func() (s selfRead) {
	s.id, _, s.err = IdentityOf(System, os.Getpid())
	return s
}}

type selfRead struct {
	id  Identity
	err error
}

var (
	hostOnce sync.Once
	host     string
	bootOnce sync.Once
	bootID   string
)

// Host returns this host's name ("" when unknown).
func Host() string {
	hostOnce.Do(func() { host, _ = os.Hostname() })
	return host
}

// BootID returns this boot's id ("" when the system has none).
func BootID() string {
	bootOnce.Do(func() {
		b, err := readProcFile("/proc/sys/kernel/random/boot_id")
		if err == nil {
			bootID = strings.TrimSpace(string(b))
		}
	})
	return bootID
}

// FakeProcTable is a ProcTable for tests: it answers from a map and falls back to
// another table for pids it does not hold.
type FakeProcTable struct {
	mu       sync.Mutex
	Procs    map[int]ProcInfo
	gone     map[int]bool
	Fallback ProcTable
}

// Stat implements ProcTable.
func (f *FakeProcTable) Stat(pid int) (ProcInfo, error) {
	f.mu.Lock()
	info, ok := f.Procs[pid]
	gone := f.gone[pid]
	f.mu.Unlock()
	if gone {
		return ProcInfo{}, ErrNoProcess
	}
	if ok {
		return info, nil
	}
	if f.Fallback != nil {
		return f.Fallback.Stat(pid)
	}
	return ProcInfo{}, ErrNoProcess
}

// Set replaces a pid's entry (simulating exit, zombie or reuse). Its
// start time is in this build's clock unless info names another.
func (f *FakeProcTable) Set(pid int, info ProcInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Procs == nil {
		f.Procs = map[int]ProcInfo{}
	}
	if info.Clock == ClockTicks {
		info.Clock = nativeClock
	}
	info.PID = pid
	f.Procs[pid] = info
	delete(f.gone, pid)
}

// Remove deletes a pid's entry (and hides it from the fallback).
func (f *FakeProcTable) Remove(pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone == nil {
		f.gone = map[int]bool{}
	}
	delete(f.Procs, pid)
	f.gone[pid] = true
}
