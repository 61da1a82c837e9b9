package projection

import (
	"sort"

	"github.com/lcwrap/lcwrap/internal/event"
)

// DefaultGrace is how many consecutive complete snapshots must leave a
// non-terminal child out before it is surfaced as stale, state unknown.
const DefaultGrace = 2

// Target is the child an action is about, with the lineage and
// capabilities its events carry: a writer acting on the child copies them
// into its own events.
type Target struct {
	ChildID      string
	Lineage      event.Lineage
	Capabilities event.Capabilities
}

// Correction is a non-terminal child whose state the snapshot corrects.
// Before is "" when the projection did not know the state.
type Correction struct {
	Target
	Before, After event.State
}

// Refusal is a terminal child the snapshot disagrees with: terminal states
// are immutable, so nothing is changed.
type Refusal struct {
	ChildID       string
	State         event.State // the terminal state kept
	SnapshotState event.State
}

// Omission is a covered, non-terminal child the snapshot left out (Record
// counts the consecutive misses), or one it lists again after misses
// (Record.ConsecutiveMisses 0: the count is reset).
type Omission struct {
	Target
	Record OmissionRecord
}

// Plan is what a complete snapshot asks for, every list sorted by child id.
type Plan struct {
	SnapshotID  string
	Corrections []Correction
	Refusals    []Refusal
	Omissions   []Omission
	// Unknown lists children the snapshot names that no event has shown:
	// a snapshot corrects records, it does not invent them.
	Unknown []string
	// Older lists children for which the snapshot reports a sequence of
	// the same source and epoch below what the events already show.
	Older []string
}

// PlanSnapshot compares a snapshot with the projection. It changes
// nothing: the caller appends the plan's events, and the projection learns
// them by reading them back. A grace below 1 counts as 1.
//
// Outcomes: the Plan and nil; ErrIncomplete when the snapshot does not
// declare complete: true (an incomplete view proves nothing).
func (p *Projection) PlanSnapshot(s event.Snapshot, grace int) (Plan, error) {
	if !s.Complete {
		return Plan{}, ErrIncomplete
	}
	grace = max(grace, 1)
	plan := Plan{SnapshotID: s.SnapshotID}
	listed := make(map[string]bool, len(s.Children))
	for _, sc := range s.Children {
		if listed[sc.ChildID] {
			continue // the first entry for a child counts
		}
		listed[sc.ChildID] = true
		c := p.children[sc.ChildID]
		switch {
		case c == nil:
			plan.Unknown = append(plan.Unknown, sc.ChildID)
			continue
		case c.state.Terminal():
			if sc.State != c.state {
				plan.Refusals = append(plan.Refusals, Refusal{ChildID: c.id, State: c.state, SnapshotState: sc.State})
			}
			continue
		case c.newerThan(s, sc):
			plan.Older = append(plan.Older, sc.ChildID)
			continue
		}
		if sc.State != c.state {
			plan.Corrections = append(plan.Corrections, Correction{Target: c.target(), Before: c.state, After: sc.State})
		}
		if prev := c.omissionBy(s.Source); prev.ConsecutiveMisses > 0 {
			plan.Omissions = append(plan.Omissions, Omission{Target: c.target(), Record: omissionRecord(s, 0, grace)})
		}
	}
	covered := make(map[string]bool, len(s.Coverage.ChildIDs))
	for _, id := range s.Coverage.ChildIDs {
		covered[id] = true
	}
	for id, c := range p.children {
		if listed[id] || c.state.Terminal() || !(s.Coverage.All || covered[id]) {
			continue
		}
		prev := c.omissionBy(s.Source)
		if prev.SnapshotID == s.SnapshotID && prev.SnapshotEpoch == s.SourceEpoch {
			continue // this snapshot was counted already
		}
		plan.Omissions = append(plan.Omissions, Omission{Target: c.target(), Record: omissionRecord(s, prev.ConsecutiveMisses+1, grace)})
	}
	sort.Slice(plan.Corrections, func(i, j int) bool { return plan.Corrections[i].ChildID < plan.Corrections[j].ChildID })
	sort.Slice(plan.Refusals, func(i, j int) bool { return plan.Refusals[i].ChildID < plan.Refusals[j].ChildID })
	sort.Slice(plan.Omissions, func(i, j int) bool { return plan.Omissions[i].ChildID < plan.Omissions[j].ChildID })
	sort.Strings(plan.Unknown)
	sort.Strings(plan.Older)
	return plan, nil
}

func omissionRecord(s event.Snapshot, misses, grace int) OmissionRecord {
	r := OmissionRecord{SnapshotID: s.SnapshotID, SnapshotSource: s.Source, SnapshotEpoch: s.SourceEpoch, ConsecutiveMisses: misses, Grace: grace}
	if misses >= grace {
		r.Intent = IntentStaleUnknown
	}
	return r
}

func (c *child) target() Target {
	return Target{ChildID: c.id, Lineage: c.lineage, Capabilities: c.caps}
}

// omissionBy returns the last omission record of a snapshot source.
func (c *child) omissionBy(source string) OmissionRecord {
	for _, o := range c.omissions {
		if o.source == source {
			return o.last
		}
	}
	return OmissionRecord{}
}

// newerThan reports whether the events already show a later sequence of
// the snapshot's own source and epoch than the one it reports.
func (c *child) newerThan(s event.Snapshot, sc event.SnapshotChild) bool {
	if sc.Sequence == nil {
		return false
	}
	for _, sp := range c.spaces {
		if sp.source == s.Source && sp.epoch == s.SourceEpoch && sp.sequenced {
			return sp.high > *sc.Sequence
		}
	}
	return false
}

// PlanSnapshot compares a snapshot with what the tracker has read (call
// Refresh first), as Projection.PlanSnapshot does.
func (t *Tracker) PlanSnapshot(s event.Snapshot, grace int) (Plan, error) {
	var plan Plan
	var err error
	t.with(func(p *Projection) { plan, err = p.PlanSnapshot(s, grace) })
	return plan, err
}
