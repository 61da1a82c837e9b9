package supervise

import (
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/notify"
)

// The details shapes only supervise writes and no reader of lcwrap's
// decodes (docs/events.md): where an activity text came from, the notify
// socket's problems, what the restart policy did, the leftovers
// diagnostic. The shapes readers decode (Created, StateChanged, Terminal)
// are the event core's.

// ActivityDetails says where an activity text came from: an output stream
// ("stdout", "stderr", "stdout+stderr", "pty") or a notify message
// (Output is then empty).
type ActivityDetails struct {
	event.NotifyOrigin
	Output string `json:"output,omitempty"`
}

// AppendDetails implements Details.
func (d ActivityDetails) AppendDetails(o *event.Object) {
	if d.Notify != "" {
		o.String("notify", d.Notify)
	}
	if d.Notify == "" || d.Output != "" {
		o.String("output", d.Output)
	}
	if d.Notify != "" {
		o.Int("senderPid", int64(d.SenderPid))
	}
}

// LeftoversDiagnostic is the diagnostic just before a terminal event
// with leftovers.
type LeftoversDiagnostic struct {
	Leftovers *event.Leftovers `json:"leftovers"`
	Message   string           `json:"message"`
}

// AppendDetails implements Details.
func (d LeftoversDiagnostic) AppendDetails(o *event.Object) {
	o.Object("leftovers", d.Leftovers)
	o.String("message", d.Message)
}

// NotifyProblem is a notify datagram that was not, or not wholly,
// applied (NotifyDiagnostic).
type NotifyProblem struct {
	Bytes      int    `json:"bytes,omitempty"`
	Excerpt    string `json:"excerpt,omitempty"`
	Problem    string `json:"problem"` // rejected | oversized | malformed | unexpected | suppressed
	Reason     string `json:"reason"`
	SenderPid  int    `json:"senderPid,omitempty"`
	Suppressed int    `json:"suppressed,omitempty"`
}

// AppendDetails implements Details.
// The suppressed problem is {problem, reason, suppressed}; the others
// always carry bytes.
func (p *NotifyProblem) AppendDetails(o *event.Object) {
	counting := p.Problem == notify.Suppressed
	if !counting {
		o.Int("bytes", int64(p.Bytes))
	}
	o.OptString("excerpt", p.Excerpt)
	o.String("problem", p.Problem)
	o.String("reason", p.Reason)
	if p.SenderPid > 0 {
		o.Int("senderPid", int64(p.SenderPid))
	}
	if counting {
		o.Int("suppressed", int64(p.Suppressed))
	} else {
		o.OptInt("suppressed", int64(p.Suppressed))
	}
}

// NotifyDiagnostic is a diagnostic about the notify socket.
type NotifyDiagnostic struct {
	Notify *NotifyProblem `json:"notify"`
}

// AppendDetails implements Details.
func (d NotifyDiagnostic) AppendDetails(o *event.Object) { o.Object("notify", d.Notify) }

// RestartReport is what a restart policy did after an attempt: the next
// attempt (NextChildID, DelayMs), or why none follows (Stopped, with the
// fields that apply).
type RestartReport struct {
	At          string `json:"at,omitempty"`
	DelayMs     int64  `json:"delayMs,omitempty"`
	MaxAttempts int    `json:"maxAttempts,omitempty"`
	NextAttempt int64  `json:"nextAttempt,omitempty"`
	NextChildID string `json:"nextChildId,omitempty"`
	Policy      string `json:"policy"`
	Signal      string `json:"signal,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
}

// AppendDetails implements Details. A next attempt always carries
// delayMs and nextAttempt, even when 0.
func (r *RestartReport) AppendDetails(o *event.Object) {
	next := r.NextChildID != ""
	o.OptString("at", r.At)
	if next {
		o.Int("delayMs", r.DelayMs)
	}
	o.OptInt("maxAttempts", int64(r.MaxAttempts))
	if next {
		o.Int("nextAttempt", r.NextAttempt)
		o.String("nextChildId", r.NextChildID)
	} else {
		o.OptInt("nextAttempt", r.NextAttempt)
	}
	o.String("policy", r.Policy)
	o.OptString("signal", r.Signal)
	o.OptString("stopped", r.Stopped)
}

// RestartDiagnostic is the diagnostic after an attempt under a restart
// policy.
type RestartDiagnostic struct {
	Message string         `json:"message"`
	Restart *RestartReport `json:"restart"`
}

// AppendDetails implements Details.
func (d RestartDiagnostic) AppendDetails(o *event.Object) {
	o.String("message", d.Message)
	o.Object("restart", d.Restart)
}
