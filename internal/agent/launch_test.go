package agent

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

// TestBaseRun: a Base is a whole Run that reads nothing; its sessions get
// the launch's lineage and the driver's source, prefix and limits, and
// Report ends them lost, saying which there were.
func TestBaseRun(t *testing.T) {
	l := Launch{Argv: []string{"agent", "-p", "x"}, ChildID: "agent-1a2b3c4d", RootChildID: "root-1"}
	b := l.Base("some-agent", "sa", "what it never says")
	var r Run = &b
	if _, ok := r.(Starter); ok {
		t.Error("a Base asks for the started identity it never uses")
	}
	if r.Stdout() != nil {
		t.Error("a Base reads stdout")
	}
	c := r.Command()
	if strings.Join(c.Argv, " ") != "agent -p x" || c.Recorded != nil || c.Env != nil || c.Added != nil {
		t.Errorf("command %+v", c)
	}
	c.Argv[0] = "changed"
	if l.Argv[0] != "agent" {
		t.Error("the run's command shares the launch's argv")
	}
	sink := &eventcap.Sink{}
	r.Attach(emit.New(emit.Options{Source: "lcwrap"}, sink))
	b.Tracker.Apply(Observe(Observation{Kind: SessionStarted, Session: "0123456789", Native: "start"}))
	r.Close()
	var term event.Terminal
	r.Report(&term)
	if sessions, ok := event.Get[AgentSessions](term.Extra, KeyAgentSessions); !ok || sessions.Source != "some-agent" || len(sessions.Sessions) != 1 {
		t.Fatalf("agent sessions %+v", term.Extra)
	}
	sink.Check(t)
	id := "sa-01234567-1a2b3c4d"
	if got := sink.Of(id); len(got) == 0 || got[0] != "created created" || got[len(got)-1] != "terminal lost" {
		t.Fatalf("session %s: %v", id, got)
	}
	for _, ev := range sink.Events() {
		if ev.Source != "some-agent" || ev.Lineage.ParentChildID != l.ChildID || ev.Lineage.RootChildID != "root-1" {
			t.Fatalf("source %q lineage %+v", ev.Source, ev.Lineage)
		}
		if ev.Kind == event.KindCreated && !bytes.Contains(ev.Details, []byte(`"limits":"what it never says"`)) {
			t.Fatalf("created details %s", ev.Details)
		}
	}
}

// TestWaitingForBytes: a waiting episode's details carry the reason with
// the bytes journals always had.
func TestWaitingForBytes(t *testing.T) {
	for _, r := range []event.WaitReason{event.WaitPermission, event.WaitInput} {
		tr, sink := newTracker(t, Config{})
		tr.Apply(Observe(obs(SessionStarted, "SessionStart"), Observation{Kind: Waiting, Session: "s1", WaitingFor: r, Native: "x"}, obs(PromptSubmitted, "UserPromptSubmit"), obs(TurnEnded, "Stop")))
		sink.Check(t)
		var got []string
		for _, ev := range sink.Events() {
			if ev.State == event.StateWaiting {
				d, ok := event.DecodeDetails[AgentEvent](ev.Details)
				if !ok {
					t.Fatalf("details %s", ev.Details)
				}
				got = append(got, d.WaitingFor)
			}
		}
		if want := []string{string(r), "user"}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("waitingFor %q, want %q", got, want)
		}
		if !strings.Contains(sink.All(), `"waitingFor":"`+string(r)+`"`) {
			t.Errorf("no %q in the journal bytes", r)
		}
	}
}

// TestNotSupported: a shape a driver does not follow is an error that
// names the agent and the shape and is ErrNotSupported, never ErrNotAgent.
func TestNotSupported(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{RegistryTarget{}, "x-agent: adopting every session the agent's registry lists is not supported by this driver"},
		{ServerTarget{URL: "http://127.0.0.1:1"}, "x-agent: adopting a running server's event stream is not supported by this driver"},
		{PIDTarget{}, "x-agent: adopting a process by its pid is not supported by this driver"},
	} {
		err := NotSupported("x-agent", tc.t)
		var u *UnsupportedError
		if err.Error() != tc.want || !errors.Is(err, ErrNotSupported) || errors.Is(err, ErrNotAgent) || !errors.As(err, &u) || u.Shape != tc.t.Shape() {
			t.Errorf("%v (%T)", err, tc.t)
		}
	}
}
