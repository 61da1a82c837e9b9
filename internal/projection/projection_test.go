package projection

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

const (
	created   = event.StateCreated
	starting  = event.StateStarting
	running   = event.StateRunning
	waiting   = event.StateWaiting
	completed = event.StateCompleted
	failed    = event.StateFailed
	cancelled = event.StateCancelled
	lost      = event.StateLost
)

// The contract's verification list, item 1: a legal path through every
// state, ending in each terminal state.
func TestLegalPathThroughAllStates(t *testing.T) {
	paths := map[string][]event.State{
		"completed": {starting, running, waiting, running, completed},
		"failed":    {starting, waiting, failed},
		"cancelled": {starting, running, waiting, cancelled},
		"lost":      {starting, running, lost},
		"never-ran": {failed},
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			p := New()
			apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
			for i, s := range path {
				kind := event.KindStateChanged
				if s.Terminal() {
					kind = event.KindTerminal
				}
				out := apply(t, p, ev("c", int64(i+2), kind, s), Applied)
				if !out.Changed || out.Err != nil {
					t.Fatalf("step %d → %s: %+v", i, s, out)
				}
				if got := stateOf(view(t, p, "c", t0)); got != s {
					t.Fatalf("step %d: state %s, want %s", i, got, s)
				}
			}
			v := view(t, p, "c", t0)
			if v.Provisional || !v.Ended() {
				t.Fatalf("provisional %v, ended %v", v.Provisional, v.Ended())
			}
		})
	}
}

// Item 1, second half: every edge outside the contract's table is
// rejected, naming both ends, and leaves the state alone.
func TestIllegalTransitionsRejected(t *testing.T) {
	legal := map[[2]event.State]bool{}
	for _, e := range [][2]event.State{
		{created, starting}, {created, cancelled}, {created, failed}, {created, lost},
		{starting, running}, {starting, waiting}, {starting, cancelled}, {starting, failed}, {starting, lost},
		{running, waiting}, {running, completed}, {running, failed}, {running, cancelled}, {running, lost},
		{waiting, running}, {waiting, completed}, {waiting, failed}, {waiting, cancelled}, {waiting, lost},
	} {
		legal[e] = true
	}
	for _, from := range event.States {
		for _, to := range event.States {
			err := event.Transition(from, to)
			if legal[[2]event.State{from, to}] {
				if err != nil {
					t.Errorf("%s → %s: %v, want legal", from, to, err)
				}
				continue
			}
			var te *event.TransitionError
			if !errors.As(err, &te) || te.From != from || te.To != to {
				t.Fatalf("%s → %s: %v, want a TransitionError naming both", from, to, err)
			}
			want := event.ErrIllegalTransition
			if from.Terminal() {
				want = event.ErrTerminalImmutable
			}
			if !errors.Is(err, want) {
				t.Errorf("%s → %s: %v does not wrap %v", from, to, err, want)
			}
		}
	}

	p := New()
	apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
	out := apply(t, p, ev("c", 2, event.KindStateChanged, running), IllegalTransition)
	if out.Changed || out.Err.Error() != "illegal transition created → running" {
		t.Fatalf("created → running: %+v", out)
	}
	apply(t, p, ev("c", 3, event.KindStateChanged, starting), Applied)
	apply(t, p, ev("c", 4, event.KindStateChanged, starting), IllegalTransition) // no self edge
	apply(t, p, ev("c", 5, event.KindCreated, created), IllegalTransition)       // no way back
	apply(t, p, ev("c", 6, event.KindStateChanged, running), Applied)
	apply(t, p, ev("c", 7, event.KindTerminal, completed), Applied)
	out = apply(t, p, ev("c", 8, event.KindStateChanged, running), TerminalImmutable)
	if !errors.Is(out.Err, event.ErrTerminalImmutable) {
		t.Fatalf("revival: %v", out.Err)
	}
	apply(t, p, ev("c", 9, event.KindTerminal, failed), TerminalImmutable)
	if got := stateOf(view(t, p, "c", t0)); got != completed {
		t.Fatalf("state %s, want completed", got)
	}
	if n := p.Counts()[IllegalTransition]; n != 3 {
		t.Fatalf("%d illegal transitions counted, want 3", n)
	}
}

// Item 2: exact duplicate, identity conflict, out-of-order and forward gap
// each have their own result.
func TestDuplicateConflictOutOfOrderGap(t *testing.T) {
	p := New()
	c1 := ev("c", 1, event.KindCreated, created)
	apply(t, p, c1, Applied)
	apply(t, p, c1, Duplicate)

	a := withActivity(ev("c", 2, event.KindActivity, ""), "compiling")
	apply(t, p, a, Applied)
	out := apply(t, p, withActivity(a, "something else"), Conflict)
	if !errors.Is(out.Err, ErrConflict) {
		t.Fatalf("conflict: %v", out.Err)
	}
	if got := view(t, p, "c", t0).Activity.Text; got != "compiling" {
		t.Fatalf("activity %q: the first record must win", got)
	}

	apply(t, p, ev("c", 5, event.KindStateChanged, running), Gap)
	v := view(t, p, "c", t0)
	if !v.Provisional || stateOf(v) != running {
		t.Fatalf("after a gap: provisional %v, state %s", v.Provisional, stateOf(v))
	}
	// Older than the highest: fills the gap, cannot move the state back.
	out = apply(t, p, ev("c", 3, event.KindStateChanged, starting), OutOfOrder)
	if out.Changed {
		t.Fatal("an out-of-order event changed the state")
	}
	apply(t, p, ev("c", 3, event.KindStateChanged, starting), Duplicate)
	apply(t, p, ev("c", 4, event.KindHeartbeat, ""), OutOfOrder)
	v = view(t, p, "c", t0)
	if v.Provisional || stateOf(v) != running {
		t.Fatalf("gap filled: provisional %v, state %s", v.Provisional, stateOf(v))
	}
	want := Counts{Applied: 2, Gap: 1, OutOfOrder: 2, Duplicate: 2, Conflict: 1}
	if got := p.Counts(); got != want {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

// A record stored twice in a journal differs only in journalSequence: it
// is still the same record.
func TestDuplicateAcrossJournalLines(t *testing.T) {
	p := New()
	e := ev("c", -1, event.KindCreated, created) // no sequence: eventId and record decide
	b := line(t, e)
	withSeq := func(n int) []byte {
		return append(append([]byte(nil), b[:len(b)-1]...), fmt.Sprintf(`,"journalSequence":%d}`, n)...)
	}
	for i, want := range []Result{Applied, Duplicate} {
		raw := withSeq(i + 1)
		parsed, _, err := event.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if out := p.Apply(&parsed, raw); out.Result != want {
			t.Fatalf("copy %d: %s, want %s", i+1, out.Result, want)
		}
	}
	other := e
	other.Details = []byte(`{"command":["x"]}`)
	apply(t, p, other, Conflict)
}

// A duplicate older than the comparison window is still a duplicate (by
// identity), and changes nothing.
func TestOldDuplicate(t *testing.T) {
	p := New()
	apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
	for i := int64(2); i < 2+2*window; i++ {
		apply(t, p, ev("c", i, event.KindHeartbeat, ""), Applied)
	}
	apply(t, p, withActivity(ev("c", 3, event.KindActivity, ""), "late copy"), Duplicate)
	if view(t, p, "c", t0).Activity != nil {
		t.Fatal("an old duplicate set the activity")
	}
}

// The last verification item: an epoch restart reusing sequence 1 is a
// new sequence space, not a duplicate.
func TestEpochRestartIsNotDuplicate(t *testing.T) {
	p := New()
	apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
	apply(t, p, ev("c", 2, event.KindStateChanged, starting), Applied)
	apply(t, p, withActivity(withSpace(ev("c", 1, event.KindActivity, ""), "lcwrap", "e2"), "restarted"), Applied)
	apply(t, p, withSpace(ev("c", 2, event.KindStateChanged, running), "lcwrap", "e2"), Applied)
	apply(t, p, withSpace(ev("c", 2, event.KindStateChanged, running), "lcwrap", "e2"), Duplicate)
	v := view(t, p, "c", t0)
	if stateOf(v) != running || v.Activity.Text != "restarted" {
		t.Fatalf("state %s activity %+v", stateOf(v), v.Activity)
	}
}

// A stream joined mid-way: the child is kept, provisional, its state
// unknown until an event says, and whole once the beginning arrives.
func TestJoinedMidway(t *testing.T) {
	p := New()
	apply(t, p, ev("c", 4, event.KindHeartbeat, ""), Applied)
	v := view(t, p, "c", t0)
	if !v.Provisional || v.State != nil || v.Display != "unknown" {
		t.Fatalf("first seen at a heartbeat: %+v", v)
	}
	apply(t, p, ev("c", 5, event.KindStateChanged, running), Applied)
	apply(t, p, ev("c", 1, event.KindCreated, created), OutOfOrder)
	if v = view(t, p, "c", t0); !v.Provisional || stateOf(v) != running {
		t.Fatalf("2..3 still missing: provisional %v state %s", v.Provisional, stateOf(v))
	}
	apply(t, p, ev("c", 2, event.KindStateChanged, starting), OutOfOrder)
	apply(t, p, ev("c", 3, event.KindActivity, ""), OutOfOrder)
	if v = view(t, p, "c", t0); v.Provisional || stateOf(v) != running {
		t.Fatalf("complete: provisional %v state %s", v.Provisional, stateOf(v))
	}
}

// A terminal event that arrives after a later stateless one still ends
// the child: the state follows sequence order, not arrival order.
func TestLateTerminalEnds(t *testing.T) {
	p := New()
	for i, s := range []event.State{created, starting, running} {
		k := event.KindStateChanged
		if s == created {
			k = event.KindCreated
		}
		apply(t, p, ev("c", int64(i+1), k, s), Applied)
	}
	apply(t, p, ev("c", 5, event.KindDiagnostic, ""), Gap)
	out := apply(t, p, withDetails(ev("c", 4, event.KindTerminal, failed), map[string]any{"exit": map[string]any{"code": 2}}), OutOfOrder)
	if !out.Changed {
		t.Fatal("the late terminal event did not end the child")
	}
	v := view(t, p, "c", t0)
	if stateOf(v) != failed || v.Exit == nil || *v.Exit.Code != 2 {
		t.Fatalf("state %s exit %+v", stateOf(v), v.Exit)
	}
}

// Activity and heartbeat update their own fields only; the newest by
// observedAt wins whatever the arrival order.
func TestActivityAndHeartbeatNeverChangeState(t *testing.T) {
	p := New()
	apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
	apply(t, p, ev("c", 2, event.KindStateChanged, starting), Applied)
	apply(t, p, withActivity(ev("c", 4, event.KindActivity, ""), "newer"), Gap)
	apply(t, p, withActivity(ev("c", 3, event.KindActivity, ""), "older"), OutOfOrder)
	out := apply(t, p, ev("c", 5, event.KindHeartbeat, ""), Applied)
	if out.Changed {
		t.Fatal("a heartbeat changed state")
	}
	v := view(t, p, "c", t0)
	if stateOf(v) != starting || v.Activity.Text != "newer" || v.Activity.ObservedAt != ts(t0.Add(4*time.Second)) {
		t.Fatalf("state %s activity %+v", stateOf(v), v.Activity)
	}
	// Heartbeat capability known but no interval declared: freshness
	// cannot be judged, so there is no heartbeat view and never stale.
	if v.Heartbeat != nil || v.Capabilities.Heartbeat != event.Known || view(t, p, "c", t0.Add(time.Hour)).Stale {
		t.Fatalf("heartbeat view %+v without a declared interval", v.Heartbeat)
	}
}

// A reconciliation event with a state corrects a non-terminal child
// whatever the table says, and never a terminal one. A diagnostic's state
// is never applied.
func TestCorrections(t *testing.T) {
	p := New()
	apply(t, p, ev("c", 1, event.KindCreated, created), Applied)
	apply(t, p, ev("c", 2, event.KindStateChanged, starting), Applied)
	apply(t, p, ev("c", 3, event.KindStateChanged, running), Applied)
	apply(t, p, ev("c", 4, event.KindDiagnostic, created), Applied)
	corr := withSpace(ev("c", 1, event.KindReconciliation, starting), reconcileSource, "r1")
	if out := apply(t, p, corr, Applied); !out.Changed {
		t.Fatal("correction not applied")
	}
	v := view(t, p, "c", t0)
	if stateOf(v) != starting || v.Corrections != 1 {
		t.Fatalf("state %s corrections %d", stateOf(v), v.Corrections)
	}
	// The wrapper's next event moves on from the corrected state.
	apply(t, p, ev("c", 5, event.KindTerminal, cancelled), Applied)
	late := withSpace(ev("c", 2, event.KindReconciliation, running), reconcileSource, "r1")
	if out := apply(t, p, late, TerminalImmutable); out.Changed {
		t.Fatal("a correction revived a terminal child")
	}
	if got := stateOf(view(t, p, "c", t0)); got != cancelled {
		t.Fatalf("state %s, want cancelled", got)
	}
}

// A heartbeat interval too long to mean anything never makes a child stale
// (3 × it would overflow).
func TestAbsurdIntervalNeverStale(t *testing.T) {
	p := New()
	apply(t, p, withDetails(ev("c", 1, event.KindCreated, created), map[string]any{"heartbeatIntervalMs": int64(1) << 62}), Applied)
	if v := view(t, p, "c", t0.Add(time.Hour)); v.Stale || v.Heartbeat != nil {
		t.Fatalf("%+v", v)
	}
}
