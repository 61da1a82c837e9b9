package supervise

import (
	"encoding/json"

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

// LeftoversDiagnostic is the diagnostic just before a terminal event
// with leftovers.
type LeftoversDiagnostic struct {
	Leftovers *event.Leftovers `json:"leftovers"`
	Message   string           `json:"message"`
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

// MarshalJSON writes the suppressed problem as {problem, reason,
// suppressed, senderPid when known}; the others always carry bytes.
func (p NotifyProblem) MarshalJSON() ([]byte, error) {
	type own NotifyProblem
	if p.Problem == notify.Suppressed {
		p.Bytes = 0
		return json.Marshal(struct {
			own
			Suppressed int `json:"suppressed"`
		}{own(p), p.Suppressed})
	}
	return json.Marshal(struct {
		own
		Bytes int `json:"bytes"`
	}{own(p), p.Bytes})
}

// NotifyDiagnostic is a diagnostic about the notify socket.
type NotifyDiagnostic struct {
	Notify *NotifyProblem `json:"notify"`
}

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

// MarshalJSON writes a next attempt with delayMs and nextAttempt even
// when 0.
func (r RestartReport) MarshalJSON() ([]byte, error) {
	type own RestartReport
	if r.NextChildID == "" {
		return json.Marshal(own(r))
	}
	return json.Marshal(struct {
		own
		DelayMs     int64 `json:"delayMs"`
		NextAttempt int64 `json:"nextAttempt"`
	}{own(r), r.DelayMs, r.NextAttempt})
}

// RestartDiagnostic is the diagnostic after an attempt under a restart
// policy.
type RestartDiagnostic struct {
	Message string         `json:"message"`
	Restart *RestartReport `json:"restart"`
}
