package supervise

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/capabilities"
	"github.com/lcwrap/lcwrap/internal/procid"
	"github.com/lcwrap/lcwrap/jsonl"
	"github.com/lcwrap/lcwrap/redact"
)

// The environment of the sd_notify protocol.
const (
	EnvNotifySocket = "NOTIFY_SOCKET"
	EnvWatchdogUsec = "WATCHDOG_USEC"
	EnvWatchdogPID  = "WATCHDOG_PID"
)

// What a child may say on the notify socket, and how much of it is
// recorded.
const (
	// maxNotify is the largest datagram accepted: systemd's limit
	// (PIPE_BUF). The socket is read with a buffer twice that size and
	// MSG_TRUNC, so a longer one is measured, never mistaken for a short
	// one.
	maxNotify = 4096
	// notifyDiagEvery spaces the diagnostics about bad datagrams; those
	// that come faster are counted, not written.
	notifyDiagEvery = time.Second
	// statusEvery spaces STATUS= activity events; the newest status that
	// came faster is written when the interval has passed (or before the
	// next event), never dropped.
	statusEvery = 100 * time.Millisecond
	// maxExcerpt is how many characters of a bad datagram a diagnostic
	// quotes (after redaction).
	maxExcerpt = 64
	// maxDrain bounds the datagrams read after the child has ended.
	maxDrain = 256
	// maxTreeDepth bounds the walk up the sender's parent pids.
	maxTreeDepth = 4096
)

// Why a datagram was not applied (details.notify.problem).
const (
	notifyRejected   = "rejected"   // its sender is not in the child's process tree
	notifyOversized  = "oversized"  // longer than maxNotify
	notifyMalformed  = "malformed"  // not KEY=VALUE lines of UTF-8
	notifyUnexpected = "unexpected" // well formed, but it cannot be applied
	notifySuppressed = "suppressed" // diagnostics that were counted, not written
)

// notifyField is one KEY=VALUE assignment of a datagram.
type notifyField struct{ key, value string }

// notifyMsg is one datagram as the socket's reader judged it.
type notifyMsg struct {
	pid     int           // the sender, from its credentials (0: unknown)
	size    int           // bytes in the datagram
	fields  []notifyField // in datagram order; nil when problem is set
	fds     []int         // descriptors that came with it: closed once it is processed
	problem string        // set when the datagram is not applied
	reason  string        // what is wrong with it
	excerpt string        // its redacted start (malformed or oversized only)
}

// parseNotify splits a datagram into its assignments: KEY=VALUE lines
// separated by newlines, where KEY is ASCII letters, digits and
// underscores. Empty lines (and so a final newline) are allowed. It
// returns an error saying what is wrong with a datagram that is empty, is
// not UTF-8, holds a NUL byte or has another kind of line.
func parseNotify(b []byte) ([]notifyField, error) {
	switch {
	case len(b) == 0:
		return nil, errors.New("the datagram is empty")
	case !utf8.Valid(b):
		return nil, errors.New("the datagram is not valid UTF-8")
	case bytes.IndexByte(b, 0) >= 0:
		return nil, errors.New("the datagram holds a NUL byte")
	}
	var fields []notifyField
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
		fields = append(fields, notifyField{key, value})
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

// judge decides what becomes of a datagram from pid: rejected unless pid
// is root or one of its descendants in t, then oversized, malformed or
// parsed. data is what was read of it, size its real length. A rejected
// datagram's descriptors are closed at once and nothing of its content is
// kept.
func judge(t procid.Table, root, pid, size int, data []byte, fds []int) notifyMsg {
	m := notifyMsg{pid: pid, size: size, fds: fds}
	if err := inTree(t, pid, root); err != nil {
		closeFDs(fds)
		m.fds, m.problem, m.reason = nil, notifyRejected, err.Error()
		return m
	}
	if size > maxNotify {
		m.problem, m.reason = notifyOversized, fmt.Sprintf("%d bytes, more than the %d a notify datagram may have", size, maxNotify)
		m.excerpt = excerpt(data)
		return m
	}
	fields, err := parseNotify(data)
	if err != nil {
		m.problem, m.reason, m.excerpt = notifyMalformed, err.Error(), excerpt(data)
		return m
	}
	m.fields = fields
	return m
}

// inTree returns nil when pid is root or a descendant of root (its chain
// of parent pids in t reaches root), and otherwise an error saying why
// the sender does not qualify or cannot be checked.
func inTree(t procid.Table, pid, root int) error {
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
		if errors.Is(err, procid.ErrNoProcess) && p == pid {
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
	s := strings.ToValidUTF8(string(b[:min(len(b), 16*maxExcerpt)]), "\uFFFD")
	return jsonl.CutRunes(redact.Text(s), maxExcerpt)
}

// printable replaces control characters (escape sequences included) with
// spaces: a status is one line of text.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// notifyEnv is what the child's environment says about the notify socket
// at path. WATCHDOG_PID is removed rather than set: the child's pid is not
// known before it starts, and an unset WATCHDOG_PID means the watchdog is
// meant for whoever reads WATCHDOG_USEC (sd_watchdog_enabled(3)).
func notifyEnv(path string, watchdog time.Duration) []string {
	env := []string{EnvNotifySocket + "=" + path, EnvWatchdogPID, EnvWatchdogUsec}
	if watchdog > 0 {
		env[2] = EnvWatchdogUsec + "=" + strconv.FormatInt(watchdog.Microseconds(), 10)
	}
	return env
}

// checkNotify finds readiness and watchdog settings that cannot work.
func (c *Config) checkNotify() error {
	if (c.ReadyNotify || c.ReadyTimeout > 0 || c.Watchdog > 0) && !c.Notify || c.ReadyTimeout > 0 && !c.ReadyNotify {
		return ErrNeedsNotify
	}
	return nil
}

// profile is the capability profile of a child run with c.
func (c *Config) profile() capabilities.Profile {
	if c.Watchdog > 0 {
		return capabilities.LaunchedWatchdog()
	}
	return capabilities.Launched(c.Heartbeat > 0)
}

// heartbeatInterval is the interval the created event declares.
func (c *Config) heartbeatInterval() time.Duration {
	if c.Watchdog > 0 {
		return c.Watchdog
	}
	return c.Heartbeat
}

// notifier is one attempt's side of the notify socket. It is owned by the
// supervisor's goroutine; the socket's reader only sends on msgs.
type notifier struct {
	sock       *notifySocket
	msgs       <-chan notifyMsg // nil once the reader has stopped
	child      *procid.Identity // the child's {pid, startTime}
	readyTimer *time.Timer

	statusAt    time.Time   // when the last STATUS activity was written
	pending     *notifyMsg  // the newest STATUS not yet written (its one field)
	statusTimer *time.Timer // armed while pending

	diagAt     time.Time // when the last notify diagnostic was written
	suppressed int       // notify diagnostics not written since
}

// listen starts reading the notify socket for the child just started.
func (s *supervisor) listen(child *procid.Identity) {
	n := s.notify
	if n == nil {
		return
	}
	n.child = child
	n.msgs = n.sock.listen(s.pid)
	if s.cfg.ReadyNotify && s.cfg.ReadyTimeout > 0 {
		n.readyTimer = time.NewTimer(s.cfg.ReadyTimeout)
	}
}

func (s *supervisor) notifyC() <-chan notifyMsg {
	if s.notify == nil {
		return nil
	}
	return s.notify.msgs
}

func (s *supervisor) readyTimeoutC() <-chan time.Time {
	if s.notify == nil || s.notify.readyTimer == nil {
		return nil
	}
	return s.notify.readyTimer.C
}

func (s *supervisor) statusC() <-chan time.Time {
	if s.notify == nil || s.notify.statusTimer == nil {
		return nil
	}
	return s.notify.statusTimer.C
}

// onNotify applies one datagram; !ok means the reader has stopped.
func (s *supervisor) onNotify(m notifyMsg, ok bool) {
	if !ok {
		s.notify.msgs = nil
		return
	}
	s.applyNotify(m)
}

// onReadyTimeout cancels a child that is still not ready.
func (s *supervisor) onReadyTimeout() {
	s.notify.readyTimer = nil
	if s.rec.state == jsonl.StateStarting && s.requestCancel(syscall.SIGTERM, byReadyTimeout) {
		s.signalJob(syscall.SIGTERM)
	}
}

// endNotify stops reading once the main child has ended: the datagrams
// it (or its tree) sent before are applied first, so that they come
// before the terminal event, and the newest status is written.
func (s *supervisor) endNotify() {
	n := s.notify
	if n == nil {
		return
	}
	if n.readyTimer != nil {
		n.readyTimer.Stop()
		n.readyTimer = nil
	}
	n.sock.stop()
	if n.msgs != nil {
		for m := range n.msgs {
			s.applyNotify(m)
		}
		n.msgs = nil
	}
	s.flushStatus()
	if n.suppressed > 0 {
		s.rec.diagnostic(jsonl.NotifyDiagnostic{Notify: &jsonl.NotifyProblem{
			Problem:    notifySuppressed,
			Suppressed: n.suppressed,
			Reason:     fmt.Sprintf("%d more notify diagnostics were not written (at most one per %s)", n.suppressed, notifyDiagEvery),
		}})
		n.suppressed = 0
	}
}

// readiness adjusts the terminal outcome of a child that had to send
// READY=1 and never did: its details say so, and an exit code in the
// success list is failed, not completed (it never got ready).
func (s *supervisor) readiness(state jsonl.State, details *jsonl.Terminal) jsonl.State {
	if !s.cfg.ReadyNotify || s.rec.state != jsonl.StateStarting {
		return state
	}
	details.Ready = new(bool)
	if state == jsonl.StateCompleted {
		return jsonl.StateFailed
	}
	return state
}

// applyNotify records what one datagram says, in order; its descriptors
// (a BARRIER=1 one included) are closed once everything before them has
// been recorded.
func (s *supervisor) applyNotify(m notifyMsg) {
	defer closeFDs(m.fds)
	if m.problem != "" {
		s.notifyDiagnostic(m, m.problem, m.reason)
		return
	}
	for _, f := range m.fields {
		if f.key == "STATUS" {
			s.setStatus(m, f.value)
			continue
		}
		s.flushStatus() // what the child said first is written first
		from := jsonl.NotifyOrigin{Notify: f.key + "=" + f.value, SenderPid: m.pid}
		switch {
		case f.key == "READY" && f.value == "1":
			s.onReady(from)
		case f.key == "WATCHDOG" && f.value == "1":
			s.rec.childHeartbeat(from)
		case f.key == "STOPPING" && f.value == "1":
			s.rec.activity("stopping", jsonl.Activity{NotifyOrigin: from})
		case f.key == "LCWRAP_STATE":
			s.onState(m, jsonl.State(f.value), from)
		case f.key == "BARRIER" && f.value == "1" && len(m.fds) != 1:
			s.notifyDiagnostic(m, notifyUnexpected, fmt.Sprintf("BARRIER=1 came with %d file descriptors, not one", len(m.fds)))
		}
	}
}

// onReady: a child held in starting (ReadyNotify) is running now;
// otherwise READY=1 changes nothing.
func (s *supervisor) onReady(from jsonl.NotifyOrigin) {
	if s.rec.state != jsonl.StateStarting {
		return
	}
	if t := s.notify.readyTimer; t != nil {
		t.Stop()
		s.notify.readyTimer = nil
	}
	s.rec.to(jsonl.StateRunning, jsonl.StateChanged{Child: s.notify.child, NotifyOrigin: from})
}

// onState follows LCWRAP_STATE: waiting ↔ running, nothing else.
func (s *supervisor) onState(m notifyMsg, to jsonl.State, from jsonl.NotifyOrigin) {
	switch {
	case to != jsonl.StateWaiting && to != jsonl.StateRunning:
		s.notifyDiagnostic(m, notifyUnexpected, fmt.Sprintf("LCWRAP_STATE=%s: only waiting and running are understood", redact.Text(jsonl.CutRunes(printable(string(to)), maxExcerpt))))
	case s.rec.state == to:
	case s.rec.state == jsonl.StateWaiting || s.rec.state == jsonl.StateRunning:
		s.rec.to(to, jsonl.StateChanged{NotifyOrigin: from})
	default:
		s.notifyDiagnostic(m, notifyUnexpected, fmt.Sprintf("LCWRAP_STATE=%s while the child is %s: only waiting and running follow each other", to, s.rec.state))
	}
}

// setStatus records STATUS= as activity, at most one per statusEvery; a
// newer status replaces one still pending.
func (s *supervisor) setStatus(m notifyMsg, text string) {
	n := s.notify
	m.fields, m.fds = []notifyField{{"STATUS", text}}, nil
	n.pending = &m
	if wait := statusEvery - time.Since(n.statusAt); wait > 0 {
		if n.statusTimer == nil {
			n.statusTimer = time.NewTimer(wait)
		}
		return
	}
	s.flushStatus()
}

// flushStatus writes the pending status, if any.
func (s *supervisor) flushStatus() {
	n := s.notify
	if n == nil || n.pending == nil {
		return
	}
	if n.statusTimer != nil {
		n.statusTimer.Stop()
		n.statusTimer = nil
	}
	m := n.pending
	n.pending, n.statusAt = nil, time.Now()
	s.rec.activity(printable(m.fields[0].value), jsonl.Activity{NotifyOrigin: jsonl.NotifyOrigin{Notify: "STATUS", SenderPid: m.pid}})
}

// notifyDiagnostic records a datagram that was not (fully) applied, at
// most one per notifyDiagEvery; the others are counted.
func (s *supervisor) notifyDiagnostic(m notifyMsg, problem, reason string) {
	n := s.notify
	now := time.Now()
	if !n.diagAt.IsZero() && now.Sub(n.diagAt) < notifyDiagEvery {
		n.suppressed++
		return
	}
	d := &jsonl.NotifyProblem{Problem: problem, Reason: reason, Bytes: m.size, SenderPid: m.pid, Excerpt: m.excerpt, Suppressed: n.suppressed}
	n.suppressed = 0
	n.diagAt = now
	s.rec.diagnostic(jsonl.NotifyDiagnostic{Notify: d})
}
