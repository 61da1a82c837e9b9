package projection

import (
	"sort"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// What a loss check looked at.
const (
	CheckedWrapper = "wrapper" // a launched child: the lcwrap process that is its lifecycle source
	CheckedProcess = "process" // an adopted child: the observed process itself
)

// Finding is the check of one child's lifecycle source: the identity
// checked and what the process table said. Only Status "gone" can make a
// child lost, and only a writer (internal/reconcile) makes it so.
type Finding struct {
	Target
	// StaleReason says why the child is stale; "" for an adopted child
	// that is not (its process is checked all the same).
	StaleReason string
	// Checked is CheckedWrapper or CheckedProcess; "" when the child
	// recorded no identity, so nothing could be checked.
	Checked string
	Check   ProcessCheck
	// ChildProcess is, for a launched child whose wrapper is gone, whether
	// its own process is still present (it can then be adopted); nil when
	// not checked.
	ChildProcess *ProcessCheck
}

// Gone reports whether the check proved the lifecycle source gone.
func (f *Finding) Gone() bool { return f.Check.Status == event.Gone.String() }

// FindLost checks in table, at now, the recorded lifecycle source of every
// non-terminal child that reconciliation looks at, from what the tracker
// has read (call Refresh first): every stale child, and every child with
// no heartbeat to go stale by (an adopted PID-only child, a run whose
// wrapper declared none), whether stale or not. It returns, by child id,
// one Finding per stale child and per other child found gone; one neither
// stale nor gone has nothing to report. It appends nothing:
// internal/reconcile records what the findings prove.
func (t *Tracker) FindLost(now time.Time, table event.ProcTable) []Finding {
	var cands []candidate
	t.with(func(p *Projection) { cands = p.lostCandidates(now) })
	var findings []Finding
	for _, cd := range cands {
		f := cd.check(table)
		if f.StaleReason == "" && !f.Gone() {
			continue
		}
		findings = append(findings, f)
	}
	return findings
}

// candidate is a stale child with what is needed to check it, copied out
// of the projection so the checks run without its lock.
type candidate struct {
	f         Finding
	id        *event.Identity
	childProc *event.Identity
}

// lostCandidates lists, by id, the non-terminal children whose lifecycle
// source reconciliation checks at now: every stale child, and every
// adopted child that recorded its process. A PID-only child has no
// heartbeat to go stale by: if its observer (lcwrap adopt) dies, only this
// check can tell that its process is gone.
func (p *Projection) lostCandidates(now time.Time) []candidate {
	var out []candidate
	for _, c := range p.children {
		if c.state.Terminal() {
			continue
		}
		cd := c.candidate(c.staleReason(now.UnixMilli()))
		// A child with no heartbeat to go stale by is checked on every
		// reconcile: an adopted PID-only child (its process), and one whose
		// wrapper declared no heartbeat (an agent's session, whose events
		// the wrapper owns, or a run with --heartbeat 0: its wrapper).
		noHeartbeat := cd.f.Checked == CheckedProcess || cd.f.Checked == CheckedWrapper && c.intervalMs == 0
		if cd.f.StaleReason == "" && !noHeartbeat {
			continue
		}
		out = append(out, cd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].f.ChildID < out[j].f.ChildID })
	return out
}

// candidate copies out what checking c's lifecycle source needs: the
// observed process of an adopted child, else the wrapper of a launched one
// (with the child's own process, to say whether it outlived its wrapper).
func (c *child) candidate(staleReason string) candidate {
	cd := candidate{f: Finding{Target: c.target(), StaleReason: staleReason}}
	switch {
	case c.lineage.External && c.process != nil:
		cd.f.Checked, cd.id = CheckedProcess, c.process
	case c.wrapper != nil:
		cd.f.Checked, cd.id, cd.childProc = CheckedWrapper, c.wrapper, c.childProc
	}
	return cd
}

// check runs the identity checks of one candidate against t.
func (cd candidate) check(t event.ProcTable) Finding {
	f := cd.f
	if cd.id == nil {
		f.Check = ProcessCheck{Status: event.ProcUnknown.String(), Reason: "no wrapper or process identity was recorded: nothing to check"}
		return f
	}
	f.Check = processCheck(t, *cd.id)
	if f.Gone() && cd.childProc != nil {
		// The child's identity holds pid and start time; it lives on the
		// wrapper's host and boot.
		id := *cd.childProc
		id.Host, id.BootID = cd.id.Host, cd.id.BootID
		pc := processCheck(t, id)
		f.ChildProcess = &pc
	}
	return f
}

func processCheck(t event.ProcTable, id event.Identity) ProcessCheck {
	v := event.CheckIdentity(t, id)
	return ProcessCheck{Identity: id, Status: v.Status.String(), Reason: v.Reason}
}
