package reconcile

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/projection/projectiontest"
)

const (
	created   = event.StateCreated
	starting  = event.StateStarting
	running   = event.StateRunning
	waiting   = event.StateWaiting
	completed = event.StateCompleted
	lost      = event.StateLost
)

// The helpers the tests here share with those of the projection.
var (
	t0             = projectiontest.T0
	ev             = projectiontest.Ev
	ts             = projectiontest.TS
	jsonString     = projectiontest.JSONString
	withDetails    = projectiontest.WithDetails
	writeJournal   = projectiontest.WriteJournal
	appendJournal  = projectiontest.AppendJournal
	readJournal    = projectiontest.ReadJournal
	appendRaw      = projectiontest.AppendRaw
	localIdentity  = projectiontest.LocalIdentity
	launched       = projectiontest.Launched
	adoptedCreated = projectiontest.AdoptedCreated
)

// view returns one child's view at now, as the tracker has read it,
// failing when it is absent.
func view(t testing.TB, tr *projection.Tracker, id string, now time.Time) projection.ChildView {
	t.Helper()
	for _, v := range tr.Report(now, true).Children {
		if v.ChildID == id {
			return v
		}
	}
	t.Fatalf("child %s not in the projection", id)
	return projection.ChildView{}
}

func stateOf(v projection.ChildView) event.State {
	if v.State == nil {
		return ""
	}
	return *v.State
}

// snapshotOf builds a snapshot of path's journal and checks that it is
// well formed in the contract's shape (it survives a round trip through
// event.ParseSnapshot unchanged).
func snapshotOf(t *testing.T, path string, table event.ProcTable) (event.Snapshot, []projection.Uncovered) {
	t.Helper()
	tr := projection.NewTracker(path)
	_ = tr.Refresh() // a blocked journal is part of some tests
	s, unc := tr.BuildSnapshot(table, t0.Add(time.Hour), "e-snapshot", "reconnect")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := event.ParseSnapshot(b)
	if err != nil {
		t.Fatalf("the snapshot does not parse: %v\n%s", err, b)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(b) {
		t.Fatalf("round trip changed the snapshot:\n%s\n%s", b, again)
	}
	if s.Source != projection.SnapshotSource || s.SourceEpoch == "" || s.SnapshotID != s.SourceEpoch+"/reconnect" || s.ObservedAt != ts(t0.Add(time.Hour)) {
		t.Fatalf("identity: %+v", s)
	}
	return s, unc
}
