package projectiontest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// TB is what the helpers need of a *testing.T or *testing.B.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
}

// T0 is when every test stream starts.
var T0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Ev builds a valid event of one child: source "lcwrap", epoch "e1",
// launched capabilities, observed seq seconds after T0. seq < 0 means no
// sequence. Use the With* helpers to change the rest.
func Ev(child string, seq int64, kind event.Kind, state event.State) event.Event {
	e := event.Event{
		SchemaVersion: 1,
		Source:        "lcwrap",
		SourceEpoch:   "e1",
		ChildID:       child,
		Lineage:       event.Lineage{RootChildID: child},
		Kind:          kind,
		State:         state,
		ObservedAt:    TS(T0.Add(time.Duration(max(seq, 0)) * time.Second)),
		Capabilities:  event.Launched(true).Set,
	}
	if seq >= 0 {
		e.Sequence = event.Int64(seq)
	}
	e.EventID = e.SourceEpoch + "/" + child + "/" + JSONString(seq)
	return e
}

// TS formats t as an observedAt.
func TS(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// JSONString encodes v.
func JSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// WithDetails sets e's details.
func WithDetails(e event.Event, d map[string]any) event.Event {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	e.Details = b
	return e
}

// WithSpace moves e to another sequence space.
func WithSpace(e event.Event, source, epoch string) event.Event {
	e.Source, e.SourceEpoch = source, epoch
	seq, _ := e.Seq()
	e.EventID = epoch + "/" + e.ChildID + "/" + JSONString(seq)
	return e
}

// WithActivity sets e's activity text.
func WithActivity(e event.Event, text string) event.Event {
	e.Activity = text
	return e
}

// At sets e's observedAt.
func At(e event.Event, t time.Time) event.Event {
	e.ObservedAt = TS(t)
	return e
}

// Line encodes e, failing the test when the result is not a valid event.
func Line(t TB, e event.Event) []byte {
	t.Helper()
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := event.Parse(b); err != nil {
		t.Fatalf("test event is invalid: %v\n%s", err, b)
	}
	return b
}

// WriteJournal appends events to a fresh journal in a temporary directory
// and returns its path.
func WriteJournal(t TB, events ...event.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	AppendJournal(t, path, events...)
	return path
}

// AppendJournal appends events to the journal at path.
func AppendJournal(t TB, path string, events ...event.Event) {
	t.Helper()
	j, err := journal.Open(path, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if len(events) == 0 {
		return
	}
	lines := make([][]byte, len(events))
	for i, e := range events {
		lines[i] = Line(t, e)
	}
	if _, err := j.Append(lines, false); err != nil {
		t.Fatal(err)
	}
}

// ReadJournal returns every event of the journal's valid prefix.
func ReadJournal(t TB, path string) []event.Event {
	t.Helper()
	var out []event.Event
	err := journal.Scan(path, 0, func(rec event.Record, _ []byte) error {
		out = append(out, rec.Event)
		return nil
	})
	if err != nil && !errors.Is(err, journal.ErrBlocked) {
		t.Fatal(err)
	}
	return out
}

// AppendRaw appends s to the file at path as it is, bypassing the journal.
func AppendRaw(t TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// LocalIdentity is the identity of process pid on this host and boot.
func LocalIdentity(pid int, start uint64) event.Identity {
	return event.Identity{PID: pid, StartTime: start, BootID: event.BootID(), Host: event.Host()}
}

// Launched is what `lcwrap run` writes for a child up to running, plus one
// heartbeat at T0+3s: wrapper identity in created, the child's in starting.
func Launched(id string, wrapper event.Identity, childPID int, intervalMs int64) []event.Event {
	return []event.Event{
		WithDetails(Ev(id, 1, event.KindCreated, event.StateCreated), map[string]any{
			"command": []string{"make", "test", "--token", "hunter2"}, "heartbeatIntervalMs": intervalMs, "wrapper": wrapper, "profile": "launched"}),
		WithDetails(Ev(id, 2, event.KindStateChanged, event.StateStarting), map[string]any{"child": map[string]any{"pid": childPID, "startTime": 500}}),
		WithDetails(Ev(id, 3, event.KindStateChanged, event.StateRunning), map[string]any{"child": map[string]any{"pid": childPID, "startTime": 500}}),
		Ev(id, 4, event.KindHeartbeat, ""),
	}
}

// AdoptedCreated is what `lcwrap adopt` writes first for process proc.
func AdoptedCreated(id string, proc event.Identity) event.Event {
	e := WithDetails(Ev(id, 1, event.KindCreated, event.StateCreated), map[string]any{
		"pid": proc.PID, "startTime": proc.StartTime, "bootId": proc.BootID, "host": proc.Host,
		"command": "unknown", "observation": "process-presence"})
	e.Lineage.External, e.Lineage.AdoptedAt = true, TS(T0)
	e.Capabilities = event.AdoptedPIDOnly().Set
	return e
}
