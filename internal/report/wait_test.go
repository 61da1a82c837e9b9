package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// TestReportWaitingReasons: an agent session's waiting episodes show
// their typed reason and the evidence that opened and closed them, in the
// timeline, the table and the child's section; the row of an agent child
// says how long the agent has said nothing.
func TestReportWaitingReasons(t *testing.T) {
	s := viewtest.New(t0)
	c := viewtest.Child{ID: "cc-1", Source: "claude-code"}
	s.Event(c, event.KindCreated, event.StateCreated, "", map[string]any{"agent": "claude-code", "observation": "agent-report"})
	s.Event(c, event.KindStateChanged, event.StateStarting, "", map[string]any{"evidence": "SessionStart"})
	s.Event(c, event.KindStateChanged, event.StateRunning, "", map[string]any{"evidence": "UserPromptSubmit"})
	s.At = s.At.Add(time.Second)
	s.Event(c, event.KindStateChanged, event.StateWaiting, "", map[string]any{"evidence": "PermissionRequest", "waitingFor": "permission"})
	s.At = s.At.Add(3 * time.Second)
	s.Event(c, event.KindStateChanged, event.StateRunning, "", map[string]any{"evidence": "PostToolUse"})
	s.At = s.At.Add(time.Second)
	s.Event(c, event.KindStateChanged, event.StateWaiting, "", map[string]any{"evidence": "transcript: [Request interrupted by user for tool use]", "waitingFor": "user"})
	now := s.At.Add(2 * time.Minute)
	m := model(t, s, now)
	var b bytes.Buffer
	if _, err := report.Write(&b, m, report.Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		"waiting for permission",
		"(opened by PermissionRequest, closed by PostToolUse)",
		"waiting:user",
		"Waiting   for user (opened by transcript: [Request interrupted by user for tool use], since 2m ago)",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	n := m.Node("cc-1")
	cells := view.Cells(view.Row{Node: n}, now)
	if got := cells[view.ColFresh].Text; got != "2m ago" {
		t.Errorf("FRESHNESS %q, want how long the agent said nothing (2m ago)", got)
	}
	if got := cells[view.ColState].Text; !strings.HasSuffix(got, "waiting:user") {
		t.Errorf("STATE %q", got)
	}
	if next := view.NextChange(&n.View, now); next.After(now.Add(time.Minute)) || !next.After(now) {
		t.Errorf("NextChange %v: the age must be redrawn within a minute", next)
	}
}
