package projection

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

// SnapshotSource is the source of the snapshots `lcwrap snapshot` builds.
const SnapshotSource = "lcwrap-snapshot"

// SnapshotReasons are why a snapshot may be asked for: the contract's
// getSnapshot(reason).
var SnapshotReasons = []string{"session_open", "reconnect", "periodic"}

// Uncovered is a child a snapshot does not vouch for, and why.
type Uncovered struct {
	ChildID string
	Reason  string
}

// snapshotItem is one child as a snapshot needs it, copied out of the
// projection so the identity checks run without the tracker's lock.
type snapshotItem struct {
	cd          candidate
	state       event.State
	provisional bool
	seq         *int64 // the highest sequence of its lifecycle source
	source      *space
}

// BuildSnapshot checks, now, every child the tracker has read (call
// Refresh first) and returns what it can vouch for as an
// AuthoritativeSnapshot of SnapshotSource with the sourceEpoch epoch (a
// fresh one for each snapshot: emit.NewEpoch) and the snapshotId
// "<epoch>/<reason>".
//
// A terminal child is covered as it is: terminal states are final. A
// non-terminal one is covered only when its lifecycle source's recorded
// identity (the wrapper of a launched child, the process of an adopted
// one) gets a definite answer from event.CheckIdentity in table: alive keeps its
// projected state, gone makes it lost. Everything else is uncovered and
// listed with the reason: another host, no start time or no identity
// recorded, a pid that cannot be inspected, a state not known or possibly
// behind (provisional: events are missing), or a blocked journal (its
// later lines are unread). The snapshot says complete: true and coverage
// "all" only when nothing is uncovered and the journal is not blocked
// (past its bad line may be children no one has read); otherwise
// complete: false and coverage lists exactly the children it lists.
// Details are redacted.
func (t *Tracker) BuildSnapshot(table event.ProcTable, now time.Time, epoch, reason string) (event.Snapshot, []Uncovered) {
	var items []snapshotItem
	var blockedAt int64 // the journal's bad line; 0 when it is clean
	t.with(func(p *Projection) {
		for _, c := range p.children {
			it := snapshotItem{cd: c.candidate(""), state: c.state, provisional: c.provisional(), source: c.origin}
			if c.origin != nil && c.origin.sequenced {
				it.seq = event.Int64(c.origin.high)
			}
			items = append(items, it)
		}
		if be := t.blocked; be != nil {
			blockedAt = be.Line
		}
	})
	sort.Slice(items, func(i, j int) bool { return items[i].cd.f.ChildID < items[j].cd.f.ChildID })

	s := event.Snapshot{Source: SnapshotSource, SourceEpoch: epoch, SnapshotID: epoch + "/" + reason,
		ObservedAt: event.Timestamp(now), Children: []event.SnapshotChild{}}
	var uncovered []Uncovered
	covered := []string{}
	for _, it := range items {
		id := it.cd.f.ChildID
		sc, why := it.check(table, blockedAt)
		if why != "" {
			uncovered = append(uncovered, Uncovered{ChildID: id, Reason: why})
			continue
		}
		sc.ChildID, sc.Sequence = id, it.seq
		s.Children = append(s.Children, sc)
		covered = append(covered, id)
	}
	// Past a bad line, children may be waiting that no one has read.
	s.Complete = len(uncovered) == 0 && blockedAt == 0
	s.Coverage = event.Coverage{All: s.Complete}
	if !s.Complete {
		s.Coverage.ChildIDs = covered
	}
	return s, uncovered
}

// check decides one child's entry: its state and details, or why it
// cannot be covered.
func (it snapshotItem) check(table event.ProcTable, blockedAt int64) (event.SnapshotChild, string) {
	var d event.SnapshotDetails
	if it.source != nil {
		d.LifecycleSource = &event.LifecycleSource{Source: it.source.source, SourceEpoch: it.source.epoch}
	}
	switch {
	case it.state.Terminal():
		d.Checked, d.Result, d.Reason = "none", "ended", "terminal states are final: nothing to check"
		return event.SnapshotChild{State: it.state, Details: details(d)}, ""
	case blockedAt > 0:
		return event.SnapshotChild{}, fmt.Sprintf("the journal is blocked at line %d: its later events are unread", blockedAt)
	case it.state == "":
		return event.SnapshotChild{}, "no event has said its state (a stream joined mid-way)"
	case it.provisional:
		return event.SnapshotChild{}, "events of it are missing (a sequence gap): its state may be behind"
	}
	f := it.cd.check(table)
	d.Checked, d.Identity, d.Result, d.Reason = f.Checked, &f.Check.Identity, f.Check.Status, f.Check.Reason
	d.ChildProcess = f.ChildProcess
	switch {
	case f.Check.Status == event.Alive.String():
		return event.SnapshotChild{State: it.state, Details: details(d)}, ""
	case f.Gone():
		return event.SnapshotChild{State: event.StateLost, Details: details(d)}, ""
	case f.Checked == "":
		return event.SnapshotChild{}, f.Check.Reason
	}
	return event.SnapshotChild{}, "its " + f.Checked + " cannot be checked from here: " + f.Check.Reason
}

// details encodes snapshot details, redacted as emit redacts every
// event's details. They hold only strings, numbers and identities, so
// encoding cannot fail.
func details(d event.SnapshotDetails) json.RawMessage {
	b, _ := emit.EncodeDetails(d)
	return b
}
