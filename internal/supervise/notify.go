package supervise

import (
	"fmt"
	"syscall"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/notify"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// The environment of the sd_notify protocol (internal/notify's).
const (
	EnvNotifySocket = notify.EnvSocket
	EnvWatchdogUsec = notify.EnvWatchdogUsec
	EnvWatchdogPID  = notify.EnvWatchdogPID
)

// How much of what a child says on the notify socket is recorded.
const (
	// notifyDiagEvery spaces the diagnostics about bad datagrams; those
	// that come faster are counted, not written.
	notifyDiagEvery = time.Second
	// statusEvery spaces STATUS= activity events; the newest status that
	// came faster is written when the interval has passed (or before the
	// next event), never dropped.
	statusEvery = 100 * time.Millisecond
)

// printable replaces control characters (escape sequences included) with
// spaces: a status is one line of text.
func printable(s string) string { return termtext.Blank(s, ' ') }

// checkNotify finds readiness and watchdog settings that cannot work.
func (c *Config) checkNotify() error {
	if (c.ReadyNotify || c.ReadyTimeout > 0 || c.Watchdog > 0) && !c.Notify || c.ReadyTimeout > 0 && !c.ReadyNotify {
		return ErrNeedsNotify
	}
	return nil
}

// profile is the capability profile of a child run with c.
func (c *Config) profile() event.Profile {
	if c.Watchdog > 0 {
		return event.LaunchedWatchdog()
	}
	return event.Launched(c.Heartbeat > 0)
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
	sock       *notify.Socket
	msgs       <-chan notify.Msg // nil once the reader has stopped
	child      *event.Identity   // the child's {pid, startTime}
	readyTimer *time.Timer

	statusAt    time.Time   // when the last STATUS activity was written
	pending     *notify.Msg // the newest STATUS not yet written (its one field)
	statusTimer *time.Timer // armed while pending

	diagAt     time.Time // when the last notify diagnostic was written
	suppressed int       // notify diagnostics not written since
}

// listen starts reading the notify socket for the child just started.
func (s *supervisor) listen(child *event.Identity) {
	n := s.notify
	if n == nil {
		return
	}
	n.child = child
	n.msgs = n.sock.Listen(s.pid)
	if s.cfg.ReadyNotify && s.cfg.ReadyTimeout > 0 {
		n.readyTimer = time.NewTimer(s.cfg.ReadyTimeout)
	}
}

func (s *supervisor) notifyC() <-chan notify.Msg {
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
func (s *supervisor) onNotify(m notify.Msg, ok bool) {
	if !ok {
		s.notify.msgs = nil
		return
	}
	s.applyNotify(m)
}

// onReadyTimeout cancels a child that is still not ready.
func (s *supervisor) onReadyTimeout() {
	s.notify.readyTimer = nil
	if s.rec.state == event.StateStarting && s.requestCancel(syscall.SIGTERM, byReadyTimeout) {
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
	n.sock.Stop()
	if n.msgs != nil {
		for m := range n.msgs {
			s.applyNotify(m)
		}
		n.msgs = nil
	}
	s.flushStatus()
	if n.suppressed > 0 {
		s.rec.diagnostic(NotifyDiagnostic{Notify: &NotifyProblem{
			Problem:    notify.Suppressed,
			Suppressed: n.suppressed,
			Reason:     fmt.Sprintf("%d more notify diagnostics were not written (at most one per %s)", n.suppressed, notifyDiagEvery),
		}})
		n.suppressed = 0
	}
}

// readiness adjusts the terminal outcome of a child that had to send
// READY=1 and never did: its details say so, and an exit code in the
// success list is failed, not completed (it never got ready).
func (s *supervisor) readiness(state event.State, details *event.Terminal) event.State {
	if !s.cfg.ReadyNotify || s.rec.state != event.StateStarting {
		return state
	}
	details.Ready = new(bool)
	if state == event.StateCompleted {
		return event.StateFailed
	}
	return state
}

// applyNotify records what one datagram says, in order; its descriptors
// (a BARRIER=1 one included) are closed once everything before them has
// been recorded.
func (s *supervisor) applyNotify(m notify.Msg) {
	defer notify.CloseFDs(m.FDs)
	if m.Problem != "" {
		s.notifyDiagnostic(m, m.Problem, m.Reason)
		return
	}
	for _, f := range m.Fields {
		if f.Key == "STATUS" {
			s.setStatus(m, f.Value)
			continue
		}
		s.flushStatus() // what the child said first is written first
		from := event.NotifyOrigin{Notify: f.Key + "=" + f.Value, SenderPid: m.PID}
		switch {
		case f.Key == "READY" && f.Value == "1":
			s.onReady(from)
		case f.Key == "WATCHDOG" && f.Value == "1":
			s.rec.childHeartbeat(from)
		case f.Key == "STOPPING" && f.Value == "1":
			s.rec.activity("stopping", ActivityDetails{NotifyOrigin: from})
		case f.Key == "LCWRAP_STATE":
			s.onState(m, event.State(f.Value), from)
		case f.Key == "BARRIER" && f.Value == "1" && len(m.FDs) != 1:
			s.notifyDiagnostic(m, notify.Unexpected, fmt.Sprintf("BARRIER=1 came with %d file descriptors, not one", len(m.FDs)))
		}
	}
}

// onReady: a child held in starting (ReadyNotify) is running now;
// otherwise READY=1 changes nothing.
func (s *supervisor) onReady(from event.NotifyOrigin) {
	if s.rec.state != event.StateStarting {
		return
	}
	if t := s.notify.readyTimer; t != nil {
		t.Stop()
		s.notify.readyTimer = nil
	}
	s.rec.to(event.StateRunning, event.StateChanged{Child: s.notify.child, NotifyOrigin: from})
}

// onState follows LCWRAP_STATE: waiting ↔ running, nothing else.
func (s *supervisor) onState(m notify.Msg, to event.State, from event.NotifyOrigin) {
	switch {
	case to != event.StateWaiting && to != event.StateRunning:
		s.notifyDiagnostic(m, notify.Unexpected, fmt.Sprintf("LCWRAP_STATE=%s: only waiting and running are understood", redact.Text(event.CutRunes(printable(string(to)), notify.MaxExcerpt))))
	case s.rec.state == to:
	case s.rec.state == event.StateWaiting || s.rec.state == event.StateRunning:
		s.rec.to(to, event.StateChanged{NotifyOrigin: from})
	default:
		s.notifyDiagnostic(m, notify.Unexpected, fmt.Sprintf("LCWRAP_STATE=%s while the child is %s: only waiting and running follow each other", to, s.rec.state))
	}
}

// setStatus records STATUS= as activity, at most one per statusEvery; a
// newer status replaces one still pending.
func (s *supervisor) setStatus(m notify.Msg, text string) {
	n := s.notify
	m.Fields, m.FDs = []notify.Field{{Key: "STATUS", Value: text}}, nil
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
	s.rec.activity(printable(m.Fields[0].Value), ActivityDetails{NotifyOrigin: event.NotifyOrigin{Notify: "STATUS", SenderPid: m.PID}})
}

// notifyDiagnostic records a datagram that was not (fully) applied, at
// most one per notifyDiagEvery; the others are counted.
func (s *supervisor) notifyDiagnostic(m notify.Msg, problem, reason string) {
	n := s.notify
	now := time.Now()
	if !n.diagAt.IsZero() && now.Sub(n.diagAt) < notifyDiagEvery {
		n.suppressed++
		return
	}
	d := &NotifyProblem{Problem: problem, Reason: reason, Bytes: m.Size, SenderPid: m.PID, Excerpt: m.Excerpt, Suppressed: n.suppressed}
	n.suppressed = 0
	n.diagAt = now
	s.rec.diagnostic(NotifyDiagnostic{Notify: d})
}
