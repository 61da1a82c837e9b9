package event_test

import (
	"encoding/json"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/event/eventtest"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// The details shapes used to be built as map[string]any literals by each
// writer and encoded through redact.Value and event.AppendValue. oldShape
// rebuilds, for each typed value, the map its writer used to build (the
// reference, copied from the writers as they were); the differential test
// holds the typed encoding to that one byte for byte, redaction included.

// oldCheck is the process check the maps used to carry, as a struct,
// unredacted; every string of it is redacted now.
func oldCheck(c *event.ProcessCheck) map[string]any {
	if c == nil {
		return nil
	}
	return map[string]any{"identity": c.Identity, "status": c.Status, "reason": c.Reason}
}

func oldExit(e *event.Exit) map[string]any {
	switch {
	case e.Status != "":
		return map[string]any{"status": e.Status, "error": e.Error}
	case e.Signal != "":
		return map[string]any{"signal": e.Signal, "signalNumber": e.SignalNumber, "coreDumped": e.CoreDumped}
	}
	return map[string]any{"code": *e.Code}
}

func oldLeftovers(l *event.Leftovers) map[string]any {
	return map[string]any{"count": l.Count, "pids": l.Pids, "action": l.Action}
}

// oldSender sets the sender's pid as the old writers did, but for an
// unknown sender (0), which encoding/json now leaves out (omitempty).
func oldSender(m map[string]any, pid int) {
	if pid != 0 {
		m["senderPid"] = pid
	}
}

func oldShape(t *testing.T, d event.Details) any {
	switch d := d.(type) {
	case event.Created:
		return map[string]any{"command": []string(d.Command), "heartbeatIntervalMs": d.HeartbeatIntervalMs, "wrapper": *d.Wrapper, "profile": d.Profile}
	case event.AdoptedCreated:
		m := map[string]any{"pid": d.PID, "startTime": d.StartTime, "executable": d.Executable, "command": "unknown", "observation": d.Observation}
		if d.BootID != "" {
			m["bootId"] = d.BootID
		}
		if d.Host != "" {
			m["host"] = d.Host
		}
		if d.StartClock != "" {
			m["startClock"] = d.StartClock
		}
		if d.Command != nil {
			m["command"] = []string(d.Command)
		}
		return m
	case event.StateChanged:
		m := map[string]any{}
		if d.Notify != "" {
			m["notify"] = d.Notify
			oldSender(m, d.SenderPid)
		}
		if d.Child != nil {
			m["child"] = map[string]any{"pid": d.Child.PID, "startTime": d.Child.StartTime}
		}
		return m
	case event.NotifyOrigin:
		m := map[string]any{"notify": d.Notify}
		oldSender(m, d.SenderPid)
		return m
	case event.Terminal:
		m := map[string]any{"claim": d.Claim}
		if d.Exit != nil {
			m["exit"] = oldExit(d.Exit)
		}
		if d.Error != "" {
			m["error"] = d.Error
		}
		if d.Ready != nil {
			m["ready"] = *d.Ready
		}
		if d.Cancel != nil {
			m["cancel"] = map[string]any{"signal": d.Cancel.Signal, "by": d.Cancel.By, "at": d.Cancel.At}
		}
		if d.Leftovers != nil {
			m["leftovers"] = oldLeftovers(d.Leftovers)
		}
		if d.Observation != "" {
			m["observation"] = d.Observation
		}
		if d.ExitStatus != "" {
			m["exitStatus"] = d.ExitStatus
		}
		if d.Check != "" {
			m["check"] = d.Check
		}
		if r := d.Reconciliation; r != nil {
			rec := map[string]any{"checked": r.Checked, "identity": r.Identity, "result": r.Result, "reason": r.Reason}
			if r.StaleReason != "" {
				rec["staleReason"] = r.StaleReason
			}
			m["reconciliation"] = rec
		}
		if d.ChildProcess != nil {
			m["childProcess"] = oldCheck(d.ChildProcess)
		}
		return m
	case event.Correction:
		var before any
		if d.Before != "" {
			before = d.Before
		}
		return map[string]any{"before": before, "after": d.After, "snapshotId": d.SnapshotID, "snapshotSource": d.SnapshotSource, "snapshotEpoch": d.SnapshotEpoch}
	case event.OmissionDiagnostic:
		o := d.Omission
		// Written as a struct before, unredacted and in declaration
		// order; every string of it is redacted now, keys sorted.
		m := map[string]any{"snapshotId": o.SnapshotID, "snapshotSource": o.SnapshotSource, "snapshotEpoch": o.SnapshotEpoch,
			"consecutiveMisses": o.ConsecutiveMisses, "grace": o.Grace}
		if o.Intent != "" {
			m["intent"] = o.Intent
		}
		return map[string]any{"omission": m}
	case event.CancelRequested:
		m := map[string]any{"request": d.Request, "requestedBy": d.RequestedBy, "wrapper": d.Wrapper, "signal": d.Signal}
		if d.Reason != "" {
			m["reason"] = d.Reason
		}
		return m
	case event.CancelNotDelivered:
		return map[string]any{"request": d.Request, "delivered": false, "error": d.Error}
	case event.SnapshotDetails:
		m := map[string]any{"checked": d.Checked, "result": d.Result, "reason": d.Reason}
		if d.LifecycleSource != nil {
			m["lifecycleSource"] = map[string]any{"source": d.LifecycleSource.Source, "sourceEpoch": d.LifecycleSource.SourceEpoch}
		}
		if d.Identity != nil {
			m["identity"] = *d.Identity
		}
		if d.ChildProcess != nil {
			m["childProcess"] = oldCheck(d.ChildProcess)
		}
		return m
	case event.FreeDetails:
		return map[string]any(d)
	}
	t.Fatalf("no reference shape for %T: add one to oldShape", d)
	return nil
}

// detailsExamples builds one value of every shape (several for those with
// variants) from a few strings and numbers.
func detailsExamples(s1, s2, s3 string, n1, n2 int64, b bool) []event.Details {
	id := event.Identity{PID: int(n1 & 0xffff), StartTime: uint64(n2) & (1<<40 - 1), BootID: "b-1", Host: "host"}
	child := &event.Identity{PID: id.PID, StartTime: id.StartTime}
	code := int(n1 & 0xff)
	check := &event.ProcessCheck{Identity: id, Status: "gone", Reason: s1}
	ready := b
	return []event.Details{
		event.Created{Command: event.Command{s1, s2, "--token", redact.Marker}, HeartbeatIntervalMs: n2, Wrapper: &id, Profile: s3},
		event.AdoptedCreated{PID: id.PID, StartTime: id.StartTime, BootID: s1, Host: s2, Executable: s3, Observation: "process-presence"},
		event.AdoptedCreated{PID: id.PID, StartTime: id.StartTime, StartClock: "unix-ms", Executable: "unknown", Command: event.Command{s1}, Observation: "process-presence"},
		event.StateChanged{Child: child},
		event.StateChanged{Child: child, NotifyOrigin: event.NotifyOrigin{Notify: "READY=1", SenderPid: int(n1)}},
		event.StateChanged{NotifyOrigin: event.NotifyOrigin{Notify: s1, SenderPid: int(n2)}},
		event.NotifyOrigin{Notify: "WATCHDOG=1", SenderPid: int(n1)},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: event.ExitCode(code), Error: s1},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: &event.Exit{Signal: "SIG" + s2, SignalNumber: int(n1), CoreDumped: b}, Ready: &ready,
			Cancel: &event.Cancel{Signal: s1, By: s2, At: s3}, Leftovers: &event.Leftovers{Count: int(n2), Pids: []int{int(n1), 2}, Action: s3}},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: &event.Exit{Status: "unknown", Error: s1}},
		event.Terminal{Claim: event.ClaimExitStatusOnly, Observation: "process-exited", ExitStatus: "unknown", Check: s1},
		event.Terminal{Claim: event.ClaimExitStatusOnly, ExitStatus: "unknown", ChildProcess: check,
			Reconciliation: &event.Reconciliation{Checked: s1, Identity: id, Result: s2, Reason: s3, StaleReason: s1}},
		event.Correction{Before: s1, After: s2, SnapshotID: s3, SnapshotSource: s1, SnapshotEpoch: s2},
		event.Correction{After: s2, SnapshotID: s3},
		event.OmissionDiagnostic{Omission: &event.Omission{SnapshotID: s1, SnapshotSource: s2, SnapshotEpoch: s3, ConsecutiveMisses: int(n1), Grace: int(n2), Intent: s1}},
		event.CancelRequested{Request: "cancel", Reason: s1, RequestedBy: id, Wrapper: id, Signal: s2},
		event.CancelNotDelivered{Request: "cancel", Error: s1},
		event.SnapshotDetails{Checked: "none", Result: "ended", Reason: s1, LifecycleSource: &event.LifecycleSource{Source: s2, SourceEpoch: s3}},
		event.SnapshotDetails{Checked: "wrapper", Result: "gone", Reason: s1, Identity: &id, ChildProcess: check},
		event.FreeDetails{"step": s1, "password": s2, "n": json.Number("12"), "list": []any{s3, true, nil}},
	}
}

func checkDetails(t *testing.T, d event.Details) {
	t.Helper()
	eventtest.MatchOld(t, d, oldShape(t, d))
}

func TestDetailsMatchOldEncoding(t *testing.T) {
	for _, args := range []struct {
		s1, s2, s3 string
		n1, n2     int64
		b          bool
	}{
		{"make", "-j8", "launched", 4242, 10000, false},
		{"x\"y\\z\u2028\x01<>&", "é\xff", "Bearer abcdefghijklmnop", -1, 0, true},
		{"", "", "", 0, 0, false},
		{"api_key=sk-1234567890abcdef", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "\t\n", 1 << 40, -7, true},
	} {
		for _, d := range detailsExamples(args.s1, args.s2, args.s3, args.n1, args.n2, args.b) {
			checkDetails(t, d)
		}
	}
}

func FuzzDetailsMatchOldEncoding(f *testing.F) {
	f.Add("make", "-j8", "launched", int64(4242), int64(10000), false)
	f.Add("x\"\u2028\x01<>&", "é\xff", "Bearer abcdefghijklmnop", int64(-1), int64(0), true)
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, n1, n2 int64, b bool) {
		for _, d := range detailsExamples(s1, s2, s3, n1, n2, b) {
			checkDetails(t, d)
		}
	})
}

func BenchmarkMarshalDetails(b *testing.B) {
	id := event.Identity{PID: 4242, StartTime: 123456, BootID: "b", Host: "h"}
	d := event.Created{Command: event.Command{"make", "-j8", "all"}, HeartbeatIntervalMs: 10000, Wrapper: &id, Profile: "launched"}
	b.Run("typed", func(b *testing.B) {
		for b.Loop() {
			if _, err := event.MarshalDetails(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			m := map[string]any{"command": []string(d.Command), "heartbeatIntervalMs": d.HeartbeatIntervalMs, "wrapper": id, "profile": d.Profile}
			if _, err := event.AppendValue(nil, redact.Value(m)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
