package projection

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// t0 is when every test stream starts.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// ev builds a valid event of one child: source "lcwrap", epoch "e1",
// launched capabilities, observed seq seconds after t0. seq < 0 means no
// sequence. Use the with* helpers to change the rest.
func ev(child string, seq int64, kind event.Kind, state event.State) event.Event {
	e := event.Event{
		SchemaVersion: 1,
		Source:        "lcwrap",
		SourceEpoch:   "e1",
		ChildID:       child,
		Lineage:       event.Lineage{RootChildID: child},
		Kind:          kind,
		State:         state,
		ObservedAt:    ts(t0.Add(time.Duration(max(seq, 0)) * time.Second)),
		Capabilities:  event.Launched(true).Set,
	}
	if seq >= 0 {
		e.Sequence = event.Int64(seq)
	}
	e.EventID = e.SourceEpoch + "/" + child + "/" + jsonString(seq)
	return e
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func withDetails(e event.Event, d map[string]any) event.Event {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	e.Details = b
	return e
}

func withSpace(e event.Event, source, epoch string) event.Event {
	e.Source, e.SourceEpoch = source, epoch
	seq, _ := e.Seq()
	e.EventID = epoch + "/" + e.ChildID + "/" + jsonString(seq)
	return e
}

func withActivity(e event.Event, text string) event.Event {
	e.Activity = text
	return e
}

func at(e event.Event, t time.Time) event.Event {
	e.ObservedAt = ts(t)
	return e
}

func line(t testing.TB, e event.Event) []byte {
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

// apply applies e (through its encoding, as a reader would) and checks the
// result.
func apply(t testing.TB, p *Projection, e event.Event, want Result) Outcome {
	t.Helper()
	b := line(t, e)
	parsed, _, _ := event.Parse(b)
	out := p.Apply(&parsed, b)
	if out.Result != want {
		t.Fatalf("%s %s seq %v: result %s (%v), want %s", e.Kind, e.State, jsonString(e.Sequence), out.Result, out.Err, want)
	}
	return out
}

// view returns one child's view at now, failing when it is absent.
func view(t testing.TB, p *Projection, id string, now time.Time) ChildView {
	t.Helper()
	for _, v := range p.Report(now, true).Children {
		if v.ChildID == id {
			return v
		}
	}
	t.Fatalf("child %s not in the projection", id)
	return ChildView{}
}

func stateOf(v ChildView) event.State {
	if v.State == nil {
		return ""
	}
	return *v.State
}

// writeJournal appends events to a fresh journal in a temporary directory
// and returns its path.
func writeJournal(t testing.TB, events ...event.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	appendJournal(t, path, events...)
	return path
}

func appendJournal(t testing.TB, path string, events ...event.Event) {
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
		lines[i] = line(t, e)
	}
	if _, err := j.Append(lines, false); err != nil {
		t.Fatal(err)
	}
}

// readJournal returns every event of the journal's valid prefix.
func readJournal(t testing.TB, path string) []event.Event {
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

func appendRaw(t testing.TB, path, s string) {
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
