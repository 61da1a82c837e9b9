package projection

import (
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection/projectiontest"
)

// The helpers every test here shares with those of reconcile and cancel.
var (
	t0             = projectiontest.T0
	ev             = projectiontest.Ev
	ts             = projectiontest.TS
	jsonString     = projectiontest.JSONString
	withDetails    = projectiontest.WithDetails
	withSpace      = projectiontest.WithSpace
	withActivity   = projectiontest.WithActivity
	at             = projectiontest.At
	line           = projectiontest.Line
	writeJournal   = projectiontest.WriteJournal
	appendJournal  = projectiontest.AppendJournal
	readJournal    = projectiontest.ReadJournal
	appendRaw      = projectiontest.AppendRaw
	localIdentity  = projectiontest.LocalIdentity
	launched       = projectiontest.Launched
	adoptedCreated = projectiontest.AdoptedCreated
)

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

// reconcileSource is the source internal/reconcile writes its corrections
// as (reconcile.Source, which this package cannot import).
const reconcileSource = "lcwrap-reconcile"
