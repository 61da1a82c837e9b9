package emit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func openJournal(t *testing.T, path string, opts journal.Options) *journal.Journal {
	t.Helper()
	j, err := journal.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Events reach the journal in order, whole, and Close waits for them.
func TestJournalSinkWritesInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	e := New(Options{}, NewJournalSink(openJournal(t, path, journal.Options{})))
	c := e.Child("c", event.Lineage{}, event.Launched(true))
	c.Emit(Spec{Kind: event.KindCreated, State: event.StateCreated})
	for i := 0; i < 500; i++ {
		c.Emit(Spec{Kind: event.KindActivity, Activity: fmt.Sprint("step ", i)})
	}
	c.Emit(Spec{Kind: event.KindTerminal, State: event.StateFailed, Details: event.FreeDetails{"exit": map[string]any{"code": 1}}})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var want int64 = 1
	err := journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
		if seq, _ := rec.Event.Seq(); seq != want || rec.JournalSequence != want {
			return fmt.Errorf("line %d holds sequence %d", rec.JournalSequence, seq)
		}
		want++
		return nil
	})
	if err != nil || want != 503 {
		t.Fatalf("%v; %d events", err, want-1)
	}
}

// The observed work never waits for the journal lock: Emit returns while
// another live process holds it.
func TestJournalSinkDoesNotBlockOnTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	lock := path + ".lock"
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	me, _ := event.SelfIdentity()
	owner := fmt.Sprintf(`{"pid":%d,"token":"someone","createdAt":%d,"startTime":%d}`, me.PID, time.Now().UnixMilli(), me.StartTime)
	os.WriteFile(filepath.Join(lock, "owner.json"), []byte(owner), 0o600)
	e := New(Options{}, NewJournalSink(openJournal(t, path, journal.Options{LockTimeout: time.Hour})))
	c := e.Child("c", event.Lineage{}, event.Launched(true))
	returned := make(chan struct{})
	go func() {
		c.Emit(Spec{Kind: event.KindCreated, State: event.StateCreated})
		c.Emit(Spec{Kind: event.KindStateChanged, State: event.StateStarting})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(20 * time.Second):
		t.Fatal("Emit waited for the journal lock")
	}
	os.Remove(filepath.Join(lock, "owner.json"))
	os.Remove(lock)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := journal.Verify(path); err != nil || r.Valid != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}

// A journal that refuses appends is reported once through the emitter and
// dropped; the other sinks go on.
func TestJournalSinkFailureReportedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	os.WriteFile(path, []byte("not an event\n"), 0o600)
	w := &countingWriter{}
	reports := make(chan error, 10)
	e := New(Options{OnSinkError: func(name string, err error) { reports <- err }},
		NewJournalSink(openJournal(t, path, journal.Options{})), NewWriterSink("w", w))
	c := e.Child("c", event.Lineage{}, event.Launched(true))
	var n int
	if !testtool.Poll(20*time.Second, func() bool {
		if len(reports) > 0 {
			return true
		}
		c.Emit(Spec{Kind: event.KindHeartbeat})
		n++
		return false
	}) {
		t.Fatal("the failing journal was never reported")
	}
	for i := 0; i < 3; i++ {
		c.Emit(Spec{Kind: event.KindHeartbeat})
	}
	if err := <-reports; !errors.Is(err, journal.ErrBlocked) {
		t.Fatalf("reported %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("close after the report: %v", err)
	}
	if len(reports) != 0 || len(w.writes) != n+3 {
		t.Fatalf("%d more reports, %d writes to the good sink for %d events", len(reports), len(w.writes), n+3)
	}
	if b, _ := os.ReadFile(path); string(b) != "not an event\n" {
		t.Fatalf("blocked journal changed: %q", b)
	}
}

// A failure nobody saw yet comes back from Close.
func TestJournalSinkCloseReturnsUnreportedFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	os.WriteFile(path, []byte("{\"bad\":\n"), 0o600) // a torn final line would be healed
	s := NewJournalSink(openJournal(t, path, journal.Options{}))
	e := New(Options{}, s)
	e.Child("c", event.Lineage{}, event.Launched(true)).Emit(Spec{Kind: event.KindHeartbeat})
	if err := s.Close(); !errors.Is(err, journal.ErrBlocked) {
		t.Fatalf("close: %v", err)
	}
}
