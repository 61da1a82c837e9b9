package opencode

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

func newTracker(t testing.TB) (*agent.Tracker, *eventcap.Sink) {
	t.Helper()
	sink := &eventcap.Sink{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Parent: "p", RunTag: "r", Limits: Limits,
		Emitter: emit.New(emit.Options{Source: Source}, sink)})
	return tr, sink
}

func recorded(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "event-1.18.33.sse"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordedEvents reads /event as recorded from the real opencode
// 1.18.33 (`opencode serve` with OPENCODE_PERMISSION={"bash":"ask"};
// `opencode run --attach` whose task tool starts a child session whose
// shell call asks for a permission, which `opencode run` rejects), handed
// over a byte at a time: the session and its sub-agent, the task and
// bash tool calls as activity, the permission as a wait answered, the
// child's idle as its stop, the session's idle as waiting for the user.
func TestRecordedEvents(t *testing.T) {
	tr, sink := newTracker(t)
	m := &Mapper{}
	var types []string
	skipped, err := ReadSSE(iotest.OneByteReader(bytes.NewReader(recorded(t))), func(d []byte) {
		tr.Apply(m.Map(d))
		types = append(types, string(d[:min(len(d), 40)]))
	})
	if err != nil || skipped != 0 {
		t.Fatalf("ReadSSE: skipped %d, %v", skipped, err)
	}
	if len(types) < 100 {
		t.Fatalf("only %d events read", len(types))
	}
	tr.End(agent.ProcessEnd{ChildID: "p"})
	sink.Check(t)
	var session, sub []string
	for _, ev := range sink.Events() {
		line := string(ev.Kind)
		if ev.State != "" {
			line += " " + string(ev.State)
		}
		if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); d.WaitingFor != "" && ev.Kind == event.KindStateChanged {
			line += ":" + d.WaitingFor
		}
		if ev.Activity != "" {
			line += " " + ev.Activity
		}
		if strings.Contains(ev.ChildID, ".") {
			if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); ev.Kind == event.KindCreated && d.AgentType != "general" {
				t.Errorf("the sub-agent's type is %q, not opencode's info.agent (general)", d.AgentType)
			}
			sub = append(sub, line)
		} else {
			session = append(session, line)
		}
	}
	wantSession := []string{"created created", "state_changed starting", "state_changed running", "activity busy",
		"activity task: lcwrap sub", "activity task failed", "state_changed waiting:user", "activity turn ended; waiting for the user",
		"terminal lost"}
	wantSub := []string{"created created", "state_changed starting", "state_changed running", "activity general sub-agent started",
		"activity busy", "activity bash", "state_changed waiting:permission", "activity waiting for permission (bash: echo sub > sub.txt)",
		"state_changed running", "activity permission answered: reject", "activity bash failed", "terminal completed"}
	if !containsInOrder(session, wantSession) {
		t.Errorf("session events:\n%s\nwant in order:\n%s", strings.Join(session, "\n"), strings.Join(wantSession, "\n"))
	}
	if !containsInOrder(sub, wantSub) {
		t.Errorf("sub-agent events:\n%s\nwant in order:\n%s", strings.Join(sub, "\n"), strings.Join(wantSub, "\n"))
	}
	r := m.Report("/event")
	if r == nil || r.ReportedBy != "opencode" || r.Usage == nil || *r.Usage.Input != 30 || *r.Usage.Output != 15 || *r.TotalCostUSD != 0 {
		t.Errorf("report %+v", r)
	}
	if m.Heartbeats() < 3 {
		t.Errorf("heartbeats %d", m.Heartbeats())
	}
}

// containsInOrder reports whether want appears in got in order (other
// lines between).
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestReadSSE(t *testing.T) {
	in := ": comment\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\nid: 3\ndata:c\n\n\n" + "data: " + strings.Repeat("z", MaxEvent+1) + "\n\ndata: last"
	var got []string
	skipped, err := ReadSSE(strings.NewReader(in), func(d []byte) { got = append(got, string(d)) })
	if err != nil || skipped != 1 || !slices.Equal(got, []string{"a\nb", "c", "last"}) {
		t.Errorf("got %q skipped %d err %v", got, skipped, err)
	}
	skipped, err = ReadSSE(iotest.ErrReader(io.ErrUnexpectedEOF), func([]byte) { t.Error("an event from nothing") })
	if err != io.ErrUnexpectedEOF || skipped != 0 {
		t.Errorf("error reader: %d %v", skipped, err)
	}
}

// TestMapForeign: payloads opencode never sent are counted, never a
// state.
func TestMapForeign(t *testing.T) {
	m := &Mapper{}
	for _, in := range []string{`not json`, `{"type":"session.created"}`, `{"type":"x.new","properties":{"sessionID":"s"}}`,
		`{"type":"message.part.updated","properties":{"part":{"type":"tool","sessionID":"s","state":{"status":"weird"}}}}`,
		`{"type":"permission.asked","properties":{"sessionID":"s"}}`, "\xff"} {
		out := m.Map([]byte(in))
		if len(out.Observations) != 0 || out.Unrecognized == "" {
			t.Errorf("%q: %+v", in, out)
		}
	}
}

// FuzzEvents: any stream, in any pieces, never panics, and every outcome
// the tracker takes keeps the journal valid.
func FuzzEvents(f *testing.F) {
	rec := recorded(f)
	f.Add(rec)
	for _, chunk := range bytes.Split(rec, []byte("\n\n")) {
		f.Add(append(chunk, "\n\n"...))
	}
	f.Add([]byte("data: {\"type\":\"permission.replied\",\"properties\":{\"sessionID\":\"s\"}}\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, sink := newTracker(t)
		m := &Mapper{}
		ReadSSE(bytes.NewReader(b), func(d []byte) { tr.Apply(m.Map(d)) })
		tr.End(agent.ProcessEnd{ChildID: "p"})
		m.Report("/event")
		sink.Check(t)
	})
}
