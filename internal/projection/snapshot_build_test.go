package projection

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// snapshotOf builds a snapshot of path's journal and checks that it is
// well formed in the contract's shape (it survives a round trip through
// event.ParseSnapshot unchanged).
func snapshotOf(t *testing.T, path string, table event.ProcTable) (event.Snapshot, []Uncovered) {
	t.Helper()
	tr := NewTracker(path)
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
	if s.Source != SnapshotSource || s.SourceEpoch == "" || s.SnapshotID != s.SourceEpoch+"/reconnect" || s.ObservedAt != ts(t0.Add(time.Hour)) {
		t.Fatalf("identity: %+v", s)
	}
	return s, unc
}

func childStates(s event.Snapshot) map[string]event.State {
	m := map[string]event.State{}
	for _, c := range s.Children {
		m[c.ChildID] = c.State
	}
	return m
}

// Complete only when every open child got a definite answer now; anything
// it could not check makes it incomplete, and coverage lists exactly what
// it covered.
func TestBuildSnapshotCoverage(t *testing.T) {
	aliveW, goneW := localIdentity(4242, 77), localIdentity(4343, 88)
	var events []event.Event
	events = append(events, launched("alive", aliveW, 4250, 1000)...)
	events = append(events, launched("gone", goneW, 4350, 1000)...)
	events = append(events, launched("done", goneW, 4350, 1000)...)
	events = append(events, ev("done", 5, event.KindTerminal, completed))
	events = append(events, adoptedCreated("seen", localIdentity(5151, 42)), adoptedCreated("vanished", localIdentity(5252, 42)))
	path := writeJournal(t, events...)
	table := &event.FakeProcTable{}
	table.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	table.Set(4343, event.ProcInfo{StartTime: 99, State: 'S'}) // the pid was recycled
	table.Set(5151, event.ProcInfo{StartTime: 42, State: 'S'})

	s, unc := snapshotOf(t, path, table)
	want := map[string]event.State{"alive": running, "gone": lost, "done": completed, "seen": created, "vanished": lost}
	if !s.Complete || !s.Coverage.All || len(unc) != 0 || !equalStates(childStates(s), want) {
		t.Fatalf("every child verified: %+v, uncovered %+v", s, unc)
	}
	for _, c := range s.Children {
		var d map[string]any
		if err := json.Unmarshal(c.Details, &d); err != nil {
			t.Fatal(err)
		}
		src, _ := d["lifecycleSource"].(map[string]any)
		if c.Sequence == nil || src["source"] != "lcwrap" || src["sourceEpoch"] != "e1" {
			t.Errorf("%s: sequence %v, details %s", c.ChildID, c.Sequence, c.Details)
		}
		switch c.ChildID {
		case "alive":
			if d["checked"] != "wrapper" || d["result"] != "alive" || *c.Sequence != 4 {
				t.Errorf("alive: %s", c.Details)
			}
		case "gone":
			cp, _ := d["childProcess"].(map[string]any)
			if d["checked"] != "wrapper" || d["result"] != "gone" || !strings.Contains(d["reason"].(string), "start time differs") || cp["status"] != "gone" {
				t.Errorf("gone: %s", c.Details)
			}
		case "vanished":
			if d["checked"] != "process" || d["result"] != "gone" {
				t.Errorf("vanished: %s", c.Details)
			}
		case "done":
			if d["checked"] != "none" || d["result"] != "ended" {
				t.Errorf("done: %s", c.Details)
			}
		}
	}

	// Children it cannot check: another host, no identity, no state yet, a
	// gap. Incomplete; coverage lists exactly the children listed.
	hook := ev("hook", 1, event.KindCreated, created) // no identity recorded
	remote := launched("remote", event.Identity{PID: 1, StartTime: 1, Host: "elsewhere.example"}, 2, 1000)
	midway := ev("midway", 7, event.KindStateChanged, running) // its created event was never seen
	gap := launched("gap", aliveW, 4250, 1000)
	gap = append(gap[:2], gap[3:]...) // sequence 3 is missing
	appendJournal(t, path, append(append(remote, hook, midway), gap...)...)
	s, unc = snapshotOf(t, path, table)
	var ids []string
	for _, u := range unc {
		ids = append(ids, u.ChildID)
	}
	if s.Complete || s.Coverage.All || !slices.Equal(ids, []string{"gap", "hook", "midway", "remote"}) {
		t.Fatalf("incomplete: %+v, uncovered %+v", s, unc)
	}
	if !slices.Equal(s.Coverage.ChildIDs, []string{"alive", "done", "gone", "seen", "vanished"}) || !equalStates(childStates(s), want) {
		t.Fatalf("coverage %v, children %v", s.Coverage.ChildIDs, childStates(s))
	}
	for _, u := range unc {
		if u.Reason == "" || (u.ChildID == "remote" && !strings.Contains(u.Reason, "elsewhere.example")) {
			t.Errorf("uncovered %+v", u)
		}
	}

	// A blocked journal: only what ended before the bad line is covered.
	appendRaw(t, path, "not json\n")
	s, unc = snapshotOf(t, path, table)
	if s.Complete || !slices.Equal(s.Coverage.ChildIDs, []string{"done"}) || len(unc) != 8 || !strings.Contains(unc[0].Reason, "blocked at line") {
		t.Fatalf("blocked: %+v, uncovered %+v", s, unc)
	}
	// Even with every child it read ended: children may follow the bad
	// line.
	ended := writeJournal(t, ev("done", 1, event.KindCreated, created), ev("done", 2, event.KindTerminal, lost))
	appendRaw(t, ended, "not json\n")
	if s, unc = snapshotOf(t, ended, table); s.Complete || len(unc) != 0 || !slices.Equal(s.Coverage.ChildIDs, []string{"done"}) {
		t.Fatalf("blocked, every child ended: %+v, uncovered %+v", s, unc)
	}
}

func equalStates(a, b map[string]event.State) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
