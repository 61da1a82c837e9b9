package supervise

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/event/eventtest"
	"github.com/lcwrap/lcwrap/internal/notify"
)

// The details shapes supervise writes used to be built as map[string]any
// literals and encoded through redact.Value; oldShape rebuilds the map
// each writer used to build (from the core's differential test, where
// these shapes lived), and the test holds the typed encoding to it byte
// for byte, redaction included.
func oldShape(t *testing.T, d event.Details) any {
	switch d := d.(type) {
	case ActivityDetails:
		// The old writers wrote an empty output and an unknown sender
		// (0); encoding/json leaves them out (omitempty).
		m := map[string]any{}
		if d.Output != "" {
			m["output"] = d.Output
		}
		if d.Notify != "" {
			m["notify"] = d.Notify
			if d.SenderPid != 0 {
				m["senderPid"] = d.SenderPid
			}
		}
		return m
	case LeftoversDiagnostic:
		l := d.Leftovers
		return map[string]any{"leftovers": map[string]any{"count": l.Count, "pids": l.Pids, "action": l.Action}, "message": d.Message}
	case NotifyDiagnostic:
		p := d.Notify
		if p.Problem == notify.Suppressed {
			return map[string]any{"notify": map[string]any{"problem": p.Problem, "suppressed": p.Suppressed, "reason": p.Reason}}
		}
		m := map[string]any{"problem": p.Problem, "reason": p.Reason, "bytes": p.Bytes}
		if p.SenderPid != 0 { // a nonsense negative pid is written as it is now
			m["senderPid"] = p.SenderPid
		}
		if p.Excerpt != "" {
			m["excerpt"] = p.Excerpt
		}
		if p.Suppressed > 0 {
			m["suppressed"] = p.Suppressed
		}
		return map[string]any{"notify": m}
	case RestartDiagnostic:
		r := d.Restart
		var m map[string]any
		if r.NextChildID != "" {
			m = map[string]any{"policy": r.Policy, "nextAttempt": r.NextAttempt, "nextChildId": r.NextChildID, "delayMs": r.DelayMs}
		} else {
			m = map[string]any{"policy": r.Policy}
			if r.Stopped != "" {
				m["stopped"] = r.Stopped
			}
			if r.Signal != "" {
				m["signal"] = r.Signal
			}
			if r.At != "" {
				m["at"] = r.At
			}
			if r.NextAttempt != 0 {
				m["nextAttempt"] = r.NextAttempt
			}
			if r.MaxAttempts != 0 {
				m["maxAttempts"] = r.MaxAttempts
			}
		}
		return map[string]any{"restart": m, "message": d.Message}
	}
	t.Fatalf("no reference shape for %T: add one to oldShape", d)
	return nil
}

func detailsExamples(s1, s2, s3 string, n1, n2 int64) []event.Details {
	return []event.Details{
		ActivityDetails{Output: s1},
		ActivityDetails{NotifyOrigin: event.NotifyOrigin{Notify: "STATUS", SenderPid: int(n1)}},
		LeftoversDiagnostic{Leftovers: &event.Leftovers{Count: 1, Pids: []int{int(n1)}, Action: "reported"}, Message: s1},
		NotifyDiagnostic{Notify: &NotifyProblem{Problem: s1, Reason: s2, Bytes: int(n1), SenderPid: int(n2), Excerpt: s3, Suppressed: int(n1 & 7)}},
		NotifyDiagnostic{Notify: &NotifyProblem{Problem: notify.Suppressed, Reason: s2, Suppressed: int(n2)}},
		RestartDiagnostic{Message: s1, Restart: &RestartReport{Policy: s2, NextAttempt: n1, NextChildID: s3, DelayMs: n2}},
		RestartDiagnostic{Message: s1, Restart: &RestartReport{Policy: s2, Stopped: "cancel-request", Signal: s3, At: s1, NextAttempt: n1}},
		RestartDiagnostic{Message: s1, Restart: &RestartReport{Policy: s2, Stopped: "max-attempts", MaxAttempts: int(n2)}},
	}
}

func TestDetailsMatchOldEncoding(t *testing.T) {
	for _, args := range []struct {
		s1, s2, s3 string
		n1, n2     int64
	}{
		{"make", "-j8", "launched", 4242, 10000},
		{"x\"y\\z\u2028\x01<>&", "é\xff", "Bearer abcdefghijklmnop", -1, 0},
		{"", "", "", 0, 0},
		{"api_key=sk-1234567890abcdef", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "\t\n", 1 << 40, -7},
	} {
		for _, d := range detailsExamples(args.s1, args.s2, args.s3, args.n1, args.n2) {
			eventtest.MatchOld(t, d, oldShape(t, d))
		}
	}
}
