package emit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// countingWriter records every Write call separately.
type countingWriter struct {
	mu     sync.Mutex
	writes [][]byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

type failingSink struct{ calls int }

func (f *failingSink) Name() string { return "broken" }
func (f *failingSink) WriteEvent(*event.Event, []byte) error {
	f.calls++
	return errors.New("disk full")
}
func (f *failingSink) Close() error { return nil }

func TestEmitSequenceIdentityAndLines(t *testing.T) {
	w := &countingWriter{}
	clock := time.Date(2026, 11, 30, 14, 0, 0, 123456789, time.FixedZone("X", 3600))
	e := New(Options{Now: func() time.Time { return clock }}, NewWriterSink("test", w))
	c := e.Child("build-1", event.Lineage{}, event.Launched(true))
	kinds := []Spec{
		{Kind: event.KindCreated, State: event.StateCreated},
		{Kind: event.KindStateChanged, State: event.StateStarting},
		{Kind: event.KindHeartbeat},
		{Kind: event.KindTerminal, State: event.StateCompleted, Details: event.FreeDetails{"exit": map[string]any{"code": 0}}},
	}
	for _, s := range kinds {
		if _, err := c.Emit(s); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.writes) != len(kinds) {
		t.Fatalf("%d writes for %d events", len(w.writes), len(kinds))
	}
	seen := map[string]bool{}
	for i, line := range w.writes {
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("write %d is not one whole line: %q", i, line)
		}
		ev, _, err := event.Parse(line[:len(line)-1])
		if err != nil {
			t.Fatalf("line %d invalid: %v", i, err)
		}
		if got, _ := ev.Seq(); got != int64(i+1) {
			t.Errorf("sequence %d, want %d", got, i+1)
		}
		if ev.ObservedAt != "2026-11-30T13:00:00.123Z" {
			t.Errorf("observedAt %q", ev.ObservedAt)
		}
		if ev.Source != DefaultSource || ev.SourceEpoch != e.Epoch() || ev.Lineage.RootChildID != "build-1" {
			t.Errorf("identity: %+v", ev)
		}
		if seen[ev.EventID] {
			t.Errorf("duplicate eventId %s", ev.EventID)
		}
		seen[ev.EventID] = true
		if ev.Capabilities != event.Launched(true).Set {
			t.Errorf("capabilities %+v", ev.Capabilities)
		}
	}
}

func TestEmitRefusesInvalidEvents(t *testing.T) {
	w := &countingWriter{}
	e := New(Options{}, NewWriterSink("test", w))
	c := e.Child("c", event.Lineage{}, event.External())
	for _, s := range []Spec{
		{Kind: event.KindTerminal, State: event.StateRunning},
		{Kind: event.KindHeartbeat, State: event.StateRunning},
		{Kind: "exploded"},
		{Kind: event.KindCreated},
	} {
		if _, err := c.Emit(s); err == nil {
			t.Errorf("emitted invalid %+v", s)
		}
	}
	if len(w.writes) != 0 {
		t.Fatalf("invalid events were written: %q", w.writes)
	}
	ev, err := c.Emit(Spec{Kind: event.KindCreated, State: event.StateCreated})
	if err != nil || *ev.Sequence != 1 {
		t.Fatalf("a refused event must not use a sequence number: %v %v", err, ev.Sequence)
	}
}

func TestEmitRedactsAndCuts(t *testing.T) {
	w := &countingWriter{}
	e := New(Options{}, NewWriterSink("test", w))
	c := e.Child("c", event.Lineage{}, event.Launched(false))
	_, err := c.Emit(Spec{
		Kind:     event.KindActivity,
		Activity: "export API_TOKEN=abcdef123 " + strings.Repeat("x", 600),
		Details:  event.FreeDetails{"password": "hunter2", "note": "Bearer abcdefghijkl"},
	})
	if err != nil {
		t.Fatal(err)
	}
	line := string(w.writes[0])
	for _, s := range []string{"abcdef123", "hunter2", "abcdefghijkl"} {
		if strings.Contains(line, s) {
			t.Errorf("secret %q written: %s", s, line)
		}
	}
	ev, _, _ := event.Parse([]byte(strings.TrimSpace(line)))
	if n := len([]rune(ev.Activity)); n != event.MaxActivity {
		t.Errorf("activity %d runes", n)
	}
}

func TestFailingSinkIsReportedOnceAndOthersContinue(t *testing.T) {
	w := &countingWriter{}
	bad := &failingSink{}
	var reports []string
	e := New(Options{OnSinkError: func(name string, err error) { reports = append(reports, name+": "+err.Error()) }}, bad, NewWriterSink("ok", w))
	c := e.Child("c", event.Lineage{}, event.Launched(true))
	for i := 0; i < 3; i++ {
		if _, err := c.Emit(Spec{Kind: event.KindHeartbeat}); err != nil {
			t.Fatal(err)
		}
	}
	if bad.calls != 1 || len(reports) != 1 || len(w.writes) != 3 {
		t.Fatalf("bad sink calls %d, reports %v, good writes %d", bad.calls, reports, len(w.writes))
	}
	if len(e.SinkErrors()) != 1 {
		t.Fatalf("SinkErrors %v", e.SinkErrors())
	}
}

func TestConcurrentChildrenWriteWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	fs, err := OpenFileSink(path)
	if err != nil {
		t.Fatal(err)
	}
	e := New(Options{}, fs)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		c := e.Child(NewChildID("worker"), event.Lineage{}, event.Launched(true))
		wg.Go(func() {
			for j := 0; j < 200; j++ {
				if _, err := c.Emit(Spec{Kind: event.KindActivity, Activity: strings.Repeat("a", j)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", info.Mode())
	}
	f, _ := os.Open(path)
	defer f.Close()
	d := event.NewDecoder(f, event.DecoderOptions{})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if st := d.Stats(); st.Valid != 1600 || st.Invalid != 0 {
		t.Fatalf("stats %+v %v", st, d.Diagnostics())
	}
}

func TestParseSinkSpec(t *testing.T) {
	good := map[string]SinkSpec{
		"stderr": {Kind: SpecStderr}, "stdout": {Kind: SpecStdout}, "fd:2": {Kind: SpecStderr},
		"fd:1": {Kind: SpecStdout}, "fd:7": {Kind: SpecFD, FD: 7}, "file:/tmp/x y": {Kind: SpecFile, Path: "/tmp/x y"},
	}
	for in, want := range good {
		got, err := ParseSinkSpec(in)
		if err != nil || got != want {
			t.Errorf("ParseSinkSpec(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "stdrr", "fd:", "fd:-1", "fd:x", "file:", "journal"} {
		if _, err := ParseSinkSpec(in); err == nil {
			t.Errorf("ParseSinkSpec(%q) accepted", in)
		}
	}
}

func TestIDs(t *testing.T) {
	if a, b := NewEpoch(), NewEpoch(); a == b {
		t.Fatal("two epochs are equal")
	}
	id := NewChildID("/usr/bin/Claude Code!")
	if !strings.HasPrefix(id, "claudecode-") || len(id) != len("claudecode-")+8 {
		t.Fatalf("child id %q", id)
	}
	if !strings.HasPrefix(NewChildID("///"), "child-") {
		t.Fatal("empty hint")
	}
}
