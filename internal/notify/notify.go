package notify

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// The environment of the sd_notify protocol.
const (
	EnvSocket       = "NOTIFY_SOCKET"
	EnvWatchdogUsec = "WATCHDOG_USEC"
	EnvWatchdogPID  = "WATCHDOG_PID"
)

// What a child may say on the notify socket, and how much of it is
// recorded.
const (
	// MaxSize is the largest datagram accepted: systemd's limit
	// (PIPE_BUF). The socket is read with a buffer twice that size and
	// MSG_TRUNC, so a longer one is measured, never mistaken for a short
	// one.
	MaxSize = 4096
	// MaxExcerpt is how many characters of a bad datagram a diagnostic
	// quotes (after redaction).
	MaxExcerpt = 64
	// maxDrain bounds the datagrams read after the child has ended.
	maxDrain = 256
	// maxTreeDepth bounds the walk up the sender's parent pids.
	maxTreeDepth = 4096
)

// Why a datagram was not applied (details.notify.problem).
const (
	Rejected   = "rejected"   // its sender is not in the child's process tree
	Oversized  = "oversized"  // longer than MaxSize
	Malformed  = "malformed"  // not KEY=VALUE lines of UTF-8
	Unexpected = "unexpected" // well formed, but it cannot be applied
	Suppressed = "suppressed" // diagnostics that were counted, not written
)

// Field is one KEY=VALUE assignment of a datagram.
type Field struct{ Key, Value string }

// Msg is one datagram as the socket's reader judged it.
type Msg struct {
	PID     int     // the sender, from its credentials (0: unknown)
	Size    int     // bytes in the datagram
	Fields  []Field // in datagram order; nil when Problem is set
	FDs     []int   // descriptors that came with it: CloseFDs once it is processed
	Problem string  // set when the datagram is not applied
	Reason  string  // what is wrong with it
	Excerpt string  // its redacted start (malformed or oversized only)
}

// Parse splits a datagram into its assignments: KEY=VALUE lines
// separated by newlines, where KEY is ASCII letters, digits and
// underscores. Empty lines (and so a final newline) are allowed. It
// returns an error saying what is wrong with a datagram that is empty, is
// not UTF-8, holds a NUL byte or has another kind of line.
func Parse(b []byte) ([]Field, error) {
	switch {
	case len(b) == 0:
		return nil, errors.New("the datagram is empty")
	case !utf8.Valid(b):
		return nil, errors.New("the datagram is not valid UTF-8")
	case bytes.IndexByte(b, 0) >= 0:
		return nil, errors.New("the datagram holds a NUL byte")
	}
	var fields []Field
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d is not KEY=VALUE", i+1)
		}
		if !validKey(key) {
			return nil, fmt.Errorf("line %d has a key that is not letters, digits and underscores", i+1)
		}
		fields = append(fields, Field{key, value})
	}
	if fields == nil {
		return nil, errors.New("the datagram holds no assignment")
	}
	return fields, nil
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// Judge decides what becomes of a datagram from pid: rejected unless pid
// is root or one of its descendants in t, then oversized, malformed or
// parsed. data is what was read of it, size its real length. A rejected
// datagram's descriptors are closed at once and nothing of its content is
// kept.
func Judge(t event.ProcTable, root, pid, size int, data []byte, fds []int) Msg {
	m := Msg{PID: pid, Size: size, FDs: fds}
	if err := InTree(t, pid, root); err != nil {
		CloseFDs(fds)
		m.FDs, m.Problem, m.Reason = nil, Rejected, err.Error()
		return m
	}
	if size > MaxSize {
		m.Problem, m.Reason = Oversized, fmt.Sprintf("%d bytes, more than the %d a notify datagram may have", size, MaxSize)
		m.Excerpt = excerpt(data)
		return m
	}
	fields, err := Parse(data)
	if err != nil {
		m.Problem, m.Reason, m.Excerpt = Malformed, err.Error(), excerpt(data)
		return m
	}
	m.Fields = fields
	return m
}

// InTree returns nil when pid is root or a descendant of root (its chain
// of parent pids in t reaches root), and otherwise an error saying why
// the sender does not qualify or cannot be checked.
func InTree(t event.ProcTable, pid, root int) error {
	if pid <= 0 {
		return errors.New("the sender's pid is not visible (no credentials, or another pid namespace)")
	}
	p := pid
	for range maxTreeDepth {
		if p == root {
			return nil
		}
		if p <= 1 {
			break
		}
		info, err := t.Stat(p)
		if errors.Is(err, event.ErrNoProcess) && p == pid {
			return fmt.Errorf("the sender (pid %d) has exited: whether it belonged to the child's process tree cannot be checked", pid)
		}
		if err != nil {
			return fmt.Errorf("the ancestry of the sender (pid %d) cannot be read: %v", pid, err)
		}
		p = info.PPID
	}
	return fmt.Errorf("the sender (pid %d) is neither the child nor one of its descendants", pid)
}

// excerpt is the start of a bad datagram fit for a diagnostic: valid
// UTF-8, redacted, then cut (redacting first, so that a cut never leaves
// half a secret unrecognised).
func excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b[:min(len(b), 16*MaxExcerpt)]), "\uFFFD")
	return event.CutRunes(redact.Text(s), MaxExcerpt)
}

// CloseFDs closes the descriptors a datagram brought.
func CloseFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// Env is what the child's environment says about the notify socket
// at path. WATCHDOG_PID is removed rather than set: the child's pid is not
// known before it starts, and an unset WATCHDOG_PID means the watchdog is
// meant for whoever reads WATCHDOG_USEC (sd_watchdog_enabled(3)).
func Env(path string, watchdog time.Duration) []string {
	env := []string{EnvSocket + "=" + path, EnvWatchdogPID, EnvWatchdogUsec}
	if watchdog > 0 {
		env[2] = EnvWatchdogUsec + "=" + strconv.FormatInt(watchdog.Microseconds(), 10)
	}
	return env
}
