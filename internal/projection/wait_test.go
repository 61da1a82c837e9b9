package projection

import (
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// TestWaitingReason: a waiting child's view carries the typed reason and
// the evidence its waiting event named; a value outside the vocabulary
// reads as other with the raw value kept; leaving waiting clears it; an
// agent's child (created with observation "agent-report") says when the
// agent last reported.
func TestWaitingReason(t *testing.T) {
	p := New()
	created := withDetails(ev("s", 1, event.KindCreated, event.StateCreated), map[string]any{"agent": "claude-code", "observation": "agent-report"})
	apply(t, p, created, Applied)
	apply(t, p, ev("s", 2, event.KindStateChanged, event.StateStarting), Applied)
	apply(t, p, withDetails(ev("s", 3, event.KindStateChanged, event.StateWaiting), map[string]any{"waitingFor": "permission", "evidence": "PermissionRequest"}), Applied)
	v := view(t, p, "s", t0)
	if v.Waiting == nil || v.Waiting.Reason != event.WaitPermission || v.Waiting.Evidence != "PermissionRequest" || v.Waiting.Raw != "" || v.Waiting.Since == "" {
		t.Fatalf("waiting: %+v", v.Waiting)
	}
	if v.Agent == nil || v.Agent.LastEvidenceAt == "" {
		t.Fatalf("agent: %+v", v.Agent)
	}
	apply(t, p, withDetails(ev("s", 4, event.KindStateChanged, event.StateRunning), map[string]any{"evidence": "PostToolUse"}), Applied)
	if v := view(t, p, "s", t0); v.Waiting != nil {
		t.Fatalf("running, still waiting: %+v", v.Waiting)
	}
	apply(t, p, withDetails(ev("s", 5, event.KindStateChanged, event.StateWaiting), map[string]any{"waitingFor": "a-new-reason"}), Applied)
	if v := view(t, p, "s", t0); v.Waiting == nil || v.Waiting.Reason != event.WaitOther || v.Waiting.Raw != "a-new-reason" {
		t.Fatalf("foreign reason: %+v", v.Waiting)
	}
	// A waiting state with nothing said of it has no Waiting; a child
	// that is not an agent's has no Agent.
	q := New()
	apply(t, q, ev("x", 1, event.KindCreated, event.StateCreated), Applied)
	apply(t, q, ev("x", 2, event.KindStateChanged, event.StateStarting), Applied)
	apply(t, q, ev("x", 3, event.KindStateChanged, event.StateWaiting), Applied)
	if v := view(t, q, "x", t0); v.Waiting != nil || v.Agent != nil {
		t.Fatalf("plain waiting child: %+v %+v", v.Waiting, v.Agent)
	}
}
