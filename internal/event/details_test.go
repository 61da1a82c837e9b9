package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lcwrap/lcwrap/internal/redact"
)

// The details shapes used to be built as map[string]any literals by each
// writer and encoded through redact.Value and AppendValue. oldShape
// rebuilds, for each typed value, the map its writer used to build (the
// reference, copied from the writers as they were); the differential test
// holds the typed encoding to that one byte for byte, redaction included.

// oldProcessCheck is the struct the maps used to carry (encoded through
// encoding/json, unredacted).
type oldProcessCheck struct {
	Identity Identity `json:"identity"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason"`
}

type oldOmission struct {
	SnapshotID        string `json:"snapshotId"`
	SnapshotSource    string `json:"snapshotSource"`
	SnapshotEpoch     string `json:"snapshotEpoch"`
	ConsecutiveMisses int    `json:"consecutiveMisses"`
	Grace             int    `json:"grace"`
	Intent            string `json:"intent,omitempty"`
}

func oldCheck(c *ProcessCheck) *oldProcessCheck {
	if c == nil {
		return nil
	}
	return &oldProcessCheck{c.Identity, c.Status, c.Reason}
}

func oldExit(e *Exit) map[string]any {
	switch {
	case e.Status != "":
		return map[string]any{"status": e.Status, "error": e.Error}
	case e.Signal != "":
		return map[string]any{"signal": e.Signal, "signalNumber": e.SignalNumber, "coreDumped": e.CoreDumped}
	}
	return map[string]any{"code": *e.Code}
}

func oldLeftovers(l *Leftovers) map[string]any {
	return map[string]any{"count": l.Count, "pids": l.Pids, "action": l.Action}
}

func oldShape(t *testing.T, d Details) any {
	switch d := d.(type) {
	case Created:
		return map[string]any{"command": []string(d.Command), "heartbeatIntervalMs": d.HeartbeatIntervalMs, "wrapper": *d.Wrapper, "profile": d.Profile}
	case AdoptedCreated:
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
	case StateChanged:
		m := map[string]any{}
		if d.Notify != "" {
			m["notify"], m["senderPid"] = d.Notify, d.SenderPid
		}
		if d.Child != nil {
			m["child"] = map[string]any{"pid": d.Child.PID, "startTime": d.Child.StartTime}
		}
		return m
	case NotifyOrigin:
		return map[string]any{"notify": d.Notify, "senderPid": d.SenderPid}
	case Activity:
		if d.Notify == "" {
			return map[string]any{"output": d.Output}
		}
		return map[string]any{"notify": d.Notify, "senderPid": d.SenderPid}
	case Terminal:
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
	case LeftoversDiagnostic:
		return map[string]any{"leftovers": oldLeftovers(d.Leftovers), "message": d.Message}
	case NotifyDiagnostic:
		p := d.Notify
		if p.Problem == NotifySuppressed {
			return map[string]any{"notify": map[string]any{"problem": p.Problem, "suppressed": p.Suppressed, "reason": p.Reason}}
		}
		m := map[string]any{"problem": p.Problem, "reason": p.Reason, "bytes": p.Bytes}
		if p.SenderPid > 0 {
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
	case LimitsDiagnostic:
		return map[string]any{"limits": d.Limits}
	case ObservationEnded:
		return map[string]any{"observation": d.Observation, "processState": d.ProcessState, "reason": d.Reason}
	case Correction:
		var before any
		if d.Before != "" {
			before = d.Before
		}
		return map[string]any{"before": before, "after": d.After, "snapshotId": d.SnapshotID, "snapshotSource": d.SnapshotSource, "snapshotEpoch": d.SnapshotEpoch}
	case OmissionDiagnostic:
		o := d.Omission
		return map[string]any{"omission": oldOmission{o.SnapshotID, o.SnapshotSource, o.SnapshotEpoch, o.ConsecutiveMisses, o.Grace, o.Intent}}
	case CancelRequested:
		m := map[string]any{"request": d.Request, "requestedBy": d.RequestedBy, "wrapper": d.Wrapper, "signal": d.Signal}
		if d.Reason != "" {
			m["reason"] = d.Reason
		}
		return m
	case CancelNotDelivered:
		return map[string]any{"request": d.Request, "delivered": false, "error": d.Error}
	case SnapshotDetails:
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
	case FreeDetails:
		return map[string]any(d)
	case Facts:
		return oldFacts(d)
	}
	t.Fatalf("no reference shape for %T: add one to oldShape", d)
	return nil
}

// oldFacts is the map an agent source used to build as an observation's
// facts (agent.Observation.Facts), from the claudecode and codex writers
// as they were: strings only when not empty, codex's usage counts by
// name, the rollout proof as codex.Proof.Facts built it.
func oldFacts(f Facts) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{
		"cliVersion": f.CLIVersion, "cwd": f.Cwd, "kind": f.Kind, "model": f.Model, "notification": f.Notification,
		"originator": f.Originator, "permissionMode": f.PermissionMode, "reason": f.Reason, "registry": f.Registry,
		"status": f.Status, "toolUseId": f.ToolUseID, "transcript": f.Transcript, "version": f.Version,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if f.BackgroundTasksRunning != 0 {
		m["backgroundTasksRunning"] = int(f.BackgroundTasksRunning)
	}
	if f.DurationMs != nil {
		m["durationMs"] = *f.DurationMs
	}
	if f.Error != nil {
		m["error"] = *f.Error
	}
	if f.ExitCode != nil {
		m["exitCode"] = int(*f.ExitCode)
	}
	if f.Interrupted {
		m["interrupted"] = true
	}
	if len(f.Usage) > 0 {
		u := map[string]any{}
		for _, c := range f.Usage {
			u[c.Name] = c.N
		}
		m["usage"] = u
	}
	if p := f.RolloutProof; p != nil {
		chain := make([]any, len(p.Chain))
		for i, pid := range p.Chain {
			chain[i] = pid
		}
		m["rolloutProof"] = map[string]any{
			"rollout": p.Rollout, "threadId": p.ThreadID, "chain": chain, "ownSession": p.OwnSession,
			"holder":   map[string]any{"pid": p.Holder.PID, "startTime": p.Holder.StartTime},
			"evidence": p.Evidence,
		}
	}
	return m
}

// detailsExamples builds one value of every shape (several for those with
// variants) from a few strings and numbers.
func detailsExamples(s1, s2, s3 string, n1, n2 int64, b bool) []Details {
	id := Identity{PID: int(n1 & 0xffff), StartTime: uint64(n2) & (1<<40 - 1), BootID: "b-1", Host: "host"}
	child := &Identity{PID: id.PID, StartTime: id.StartTime}
	code := int(n1 & 0xff)
	check := &ProcessCheck{Identity: id, Status: "gone", Reason: s1}
	ready := b
	var usage Counts // codex's usage: known names and ones it keeps as given
	usage.Set("output", n2)
	usage.Set(s1, n1)
	usage.Set("input", n1)
	usage.Set(s2, n2)
	usage.Set("secret", 5)
	usage.Set(s3, 7)
	return []Details{
		Created{Command: Command{s1, s2, "--token", redact.Marker}, HeartbeatIntervalMs: n2, Wrapper: &id, Profile: s3},
		AdoptedCreated{PID: id.PID, StartTime: id.StartTime, BootID: s1, Host: s2, Executable: s3, Observation: "process-presence"},
		AdoptedCreated{PID: id.PID, StartTime: id.StartTime, StartClock: "unix-ms", Executable: "unknown", Command: Command{s1}, Observation: "process-presence"},
		StateChanged{Child: child},
		StateChanged{Child: child, NotifyOrigin: NotifyOrigin{Notify: "READY=1", SenderPid: int(n1)}},
		StateChanged{NotifyOrigin: NotifyOrigin{Notify: s1, SenderPid: int(n2)}},
		NotifyOrigin{Notify: "WATCHDOG=1", SenderPid: int(n1)},
		Activity{Output: s1},
		Activity{NotifyOrigin: NotifyOrigin{Notify: "STATUS", SenderPid: int(n1)}},
		Terminal{Claim: ClaimExitStatusOnly, Exit: ExitCode(code), Error: s1},
		Terminal{Claim: ClaimExitStatusOnly, Exit: &Exit{Signal: "SIG" + s2, SignalNumber: int(n1), CoreDumped: b}, Ready: &ready,
			Cancel: &Cancel{Signal: s1, By: s2, At: s3}, Leftovers: &Leftovers{Count: int(n2), Pids: []int{int(n1), 2}, Action: s3}},
		Terminal{Claim: ClaimExitStatusOnly, Exit: &Exit{Status: "unknown", Error: s1}},
		Terminal{Claim: ClaimExitStatusOnly, Observation: "process-exited", ExitStatus: "unknown", Check: s1},
		Terminal{Claim: ClaimExitStatusOnly, ExitStatus: "unknown", ChildProcess: check,
			Reconciliation: &Reconciliation{Checked: s1, Identity: id, Result: s2, Reason: s3, StaleReason: s1}},
		LeftoversDiagnostic{Leftovers: &Leftovers{Count: 1, Pids: []int{int(n1)}, Action: "reported"}, Message: s1},
		NotifyDiagnostic{Notify: &NotifyProblem{Problem: s1, Reason: s2, Bytes: int(n1), SenderPid: int(n2), Excerpt: s3, Suppressed: int(n1 & 7)}},
		NotifyDiagnostic{Notify: &NotifyProblem{Problem: NotifySuppressed, Reason: s2, Suppressed: int(n2)}},
		RestartDiagnostic{Message: s1, Restart: &Restart{Policy: s2, NextAttempt: n1, NextChildID: s3, DelayMs: n2}},
		RestartDiagnostic{Message: s1, Restart: &Restart{Policy: s2, Stopped: "cancel-request", Signal: s3, At: s1, NextAttempt: n1}},
		RestartDiagnostic{Message: s1, Restart: &Restart{Policy: s2, Stopped: "max-attempts", MaxAttempts: int(n2)}},
		LimitsDiagnostic{Limits: s1},
		ObservationEnded{Observation: "ended", ProcessState: "unknown", Reason: s1},
		Correction{Before: s1, After: s2, SnapshotID: s3, SnapshotSource: s1, SnapshotEpoch: s2},
		Correction{After: s2, SnapshotID: s3},
		OmissionDiagnostic{Omission: &Omission{SnapshotID: s1, SnapshotSource: s2, SnapshotEpoch: s3, ConsecutiveMisses: int(n1), Grace: int(n2), Intent: s1}},
		CancelRequested{Request: "cancel", Reason: s1, RequestedBy: id, Wrapper: id, Signal: s2},
		CancelNotDelivered{Request: "cancel", Error: s1},
		SnapshotDetails{Checked: "none", Result: "ended", Reason: s1, LifecycleSource: &LifecycleSource{Source: s2, SourceEpoch: s3}},
		SnapshotDetails{Checked: "wrapper", Result: "gone", Reason: s1, Identity: &id, ChildProcess: check},
		FreeDetails{"step": s1, "password": s2, "n": json.Number("12"), "list": []any{s3, true, nil}},
		Facts{},
		Facts{Cwd: s1, Model: s2, Transcript: s3, PermissionMode: s1},
		Facts{ToolUseID: s1, Interrupted: b},
		Facts{Notification: s2, BackgroundTasksRunning: n1},
		Facts{Cwd: s1, Version: s2, Kind: s3, Registry: s1},
		Facts{DurationMs: &n1, Reason: s1},
		Facts{Error: &s2},
		Facts{Status: s3, ExitCode: &n2},
		Facts{Usage: usage},
		Facts{Originator: s1, CLIVersion: s2, RolloutProof: &RolloutFacts{Chain: []int{id.PID, int(n1 & 0xff)}, Evidence: "open-file-descriptor",
			Holder: HolderFacts{PID: id.PID, StartTime: int64(id.StartTime)}, OwnSession: b, Rollout: s3, ThreadID: s1}},
		Facts{RolloutProof: &RolloutFacts{Chain: []int{}, Evidence: s2}},
		Facts{BackgroundTasksRunning: n2, CLIVersion: s1, Cwd: s2, DurationMs: &n2, Error: &s3, ExitCode: &n1, Interrupted: true, // every member: their order
			Kind: s1, Model: s2, Notification: s3, Originator: s1, PermissionMode: s2, Reason: s3, Registry: s1,
			RolloutProof: &RolloutFacts{Chain: []int{1}, Evidence: s2, Rollout: s3}, Status: s1, ToolUseID: s2, Transcript: s3, Usage: usage, Version: s1},
	}
}

func checkDetails(t *testing.T, d Details) {
	t.Helper()
	got, err := MarshalDetails(d)
	if err != nil {
		t.Fatalf("%T: %v", d, err)
	}
	want, err := AppendValue(nil, redact.Value(oldShape(t, d)))
	if err != nil {
		t.Fatalf("%T reference: %v", d, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%T:\n got %s\nwant %s", d, got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("%T: invalid JSON %s", d, got)
	}
	if _, free := d.(FreeDetails); free {
		return
	}
	// The reader's side: decoding the line into the same type and encoding
	// it again gives the same JSON (the same bytes but for invalid UTF-8,
	// which the first encoding already wrote as U+FFFD).
	back := reflect.New(reflect.TypeOf(d))
	if err := json.Unmarshal(got, back.Interface()); err != nil {
		t.Fatalf("%T: decoding %s: %v", d, got, err)
	}
	again, err := MarshalDetails(back.Elem().Interface().(Details))
	var x, y any
	if err != nil || json.Unmarshal(got, &x) != nil || json.Unmarshal(again, &y) != nil || !reflect.DeepEqual(x, y) {
		t.Fatalf("%T round trip:\n got %s\nwant %s", d, again, got)
	}
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
	id := Identity{PID: 4242, StartTime: 123456, BootID: "b", Host: "h"}
	d := Created{Command: Command{"make", "-j8", "all"}, HeartbeatIntervalMs: 10000, Wrapper: &id, Profile: "launched"}
	b.Run("typed", func(b *testing.B) {
		for b.Loop() {
			if _, err := MarshalDetails(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			m := map[string]any{"command": []string(d.Command), "heartbeatIntervalMs": d.HeartbeatIntervalMs, "wrapper": id, "profile": d.Profile}
			if _, err := AppendValue(nil, redact.Value(m)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
