package cancel

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/pidfd"
	"github.com/lcwrap/lcwrap/internal/wrapsig"
)

// record appends the events lcwrap run writes for child id whose wrapper
// is this test process, one per state.
func record(t *testing.T, j, id string, states ...event.State) {
	t.Helper()
	self, err := event.SelfIdentity()
	if err != nil {
		t.Fatal(err)
	}
	jr, err := journal.Open(j, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	em := emit.New(emit.Options{}, emit.NewJournalSink(jr))
	c := em.Child(id, event.Lineage{}, event.Launched(true))
	for _, st := range states {
		spec := emit.Spec{Kind: event.KindStateChanged, State: st}
		switch {
		case st == event.StateCreated:
			spec = emit.Spec{Kind: event.KindCreated, State: st, Details: event.Created{Command: event.Command{"make"}, HeartbeatIntervalMs: 10000, Wrapper: &self, Profile: "launched"}}
		case st.Terminal():
			spec = emit.Spec{Kind: event.KindTerminal, State: st, Details: event.Terminal{Claim: event.ClaimExitStatusOnly, Exit: event.ExitCode(0)}}
		}
		if _, err := c.Emit(spec); err != nil {
			t.Fatal(err)
		}
	}
	if err := em.Close(); err != nil {
		t.Fatal(err)
	}
}

// opener is a wrapsig.Opener that runs open instead of pidfd_open.
type opener func(pid int) (wrapsig.Handle, error)

func (o opener) Open(pid int) (wrapsig.Handle, error) { return o(pid) }

// handle records what it was sent, and runs onSignal first.
type handle struct {
	sent     []syscall.Signal
	onSignal func(syscall.Signal) error
}

func (h *handle) Signal(sig syscall.Signal) error {
	if sig != 0 && h.onSignal != nil {
		if err := h.onSignal(sig); err != nil {
			return err
		}
	}
	h.sent = append(h.sent, sig)
	return nil
}
func (h *handle) Close() error { return nil }

// The request is in the journal before the signal is sent, and the
// signal goes through the handle opened on the verified wrapper.
func TestRecordThenSignal(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	record(t, j, "job", event.StateCreated, event.StateStarting, event.StateRunning)
	h := &handle{}
	h.onSignal = func(syscall.Signal) error {
		b, _ := os.ReadFile(j)
		if !bytes.Contains(b, []byte(`"request":"cancel"`)) || !bytes.Contains(b, []byte(`"reason":"stuck"`)) {
			t.Errorf("signal sent before the request was recorded:\n%s", b)
		}
		return nil
	}
	sent, err := Send(Request{Journal: j, ChildID: "job", Reason: "stuck",
		Opener: opener(func(int) (wrapsig.Handle, error) { return h, nil })})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Wrapper.PID != os.Getpid() || len(h.sent) != 2 || h.sent[0] != 0 || h.sent[1] != syscall.SIGTERM {
		t.Fatalf("sent %+v, signals %v", sent, h.sent)
	}
}

// No authority, nothing recorded, nothing sent.
func TestRefusalsSendNothing(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	record(t, j, "job", event.StateCreated, event.StateStarting, event.StateRunning, event.StateCompleted)
	before, _ := os.ReadFile(j)
	never := opener(func(int) (wrapsig.Handle, error) { t.Fatal("a handle was opened"); return nil, nil })
	for id, want := range map[string]error{"job": ErrEnded, "nobody": ErrUnknownChild} {
		if _, err := Send(Request{Journal: j, ChildID: id, Opener: never}); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", id, err, want)
		}
	}
	if after, _ := os.ReadFile(j); !bytes.Equal(after, before) {
		t.Fatal("a refused request changed the journal")
	}
	if _, err := Send(Request{Journal: filepath.Join(t.TempDir(), "none", "x"), ChildID: "job", Opener: never}); !errors.Is(err, ErrRead) && !errors.Is(err, ErrUnknownChild) {
		t.Errorf("no journal: %v", err)
	}
}

// A child that ended just as it was being cancelled (authority granted,
// then its wrapper gone) is reported as ended, not as possibly lost; a
// wrapper gone while the child still runs is a SignalError.
func TestEndedMeanwhile(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	record(t, j, "job", event.StateCreated, event.StateStarting, event.StateRunning)
	gone := opener(func(int) (wrapsig.Handle, error) { return nil, wrapsig.ErrGone })
	var se *SignalError
	if _, err := Send(Request{Journal: j, ChildID: "job", Opener: gone}); !errors.As(err, &se) || se.Recorded || !errors.Is(err, wrapsig.ErrGone) {
		t.Fatalf("wrapper gone, child running: %v", err)
	}
	endsNow := opener(func(int) (wrapsig.Handle, error) {
		record(t, j, "job", event.StateCompleted)
		return nil, wrapsig.ErrGone
	})
	_, err := Send(Request{Journal: j, ChildID: "job", Opener: endsNow})
	var ae *AuthorityError
	if !errors.Is(err, ErrEnded) || !errors.As(err, &ae) || ae.State != event.StateCompleted {
		t.Fatalf("ended meanwhile: %v", err)
	}
}

// A signal that fails after the request was recorded is recorded too.
func TestNotDelivered(t *testing.T) {
	j := filepath.Join(t.TempDir(), "journal.jsonl")
	record(t, j, "job", event.StateCreated, event.StateStarting, event.StateRunning)
	h := &handle{onSignal: func(syscall.Signal) error { return pidfd.ErrPermission }}
	_, err := Send(Request{Journal: j, ChildID: "job", Opener: opener(func(int) (wrapsig.Handle, error) { return h, nil })})
	var se *SignalError
	if !errors.As(err, &se) || !se.Recorded || se.NoteErr != nil || !errors.Is(err, pidfd.ErrPermission) {
		t.Fatalf("%v", err)
	}
	b, _ := os.ReadFile(j)
	if !bytes.Contains(b, []byte(`"delivered":false`)) {
		t.Fatalf("non-delivery not recorded:\n%s", b)
	}
}
