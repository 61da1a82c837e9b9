package reconcile

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Source is the source of every event a Reconciler appends. Each
// Reconciler has its own sourceEpoch, so its sequences never collide with
// another's.
const Source = "lcwrap-reconcile"

// Reconciler appends what reconciliation concludes to a journal: lost
// events for stale children whose lifecycle source is provably gone, and
// the corrections and omission counts of complete snapshots. Overlapping
// calls of the same kind (and, for snapshots, the same snapshot) coalesce:
// they share one run and its result.
type Reconciler struct {
	t     *projection.Tracker
	w     *Writer
	table event.ProcTable
	now   func() time.Time

	group   singleflight.Group
	callers atomic.Int32 // calls joined to the group and not returned
}

// New reconciles the journal t tracks, appending with opts, checking
// identities in table, at the times now returns.
func New(t *projection.Tracker, opts journal.Options, table event.ProcTable, now func() time.Time) *Reconciler {
	return &Reconciler{t: t, w: NewWriter(t, opts, now, Source), table: table, now: now}
}

// Close releases the journal (when an append opened it).
func (r *Reconciler) Close() error { return r.w.Close() }

// Finding is what reconciling one child found: the check of its lifecycle
// source, and whether a lost event was appended for it.
type Finding struct {
	projection.Finding
	// Appended says a lost event was appended for it (false for all when
	// appending failed: the journal, read again, tells what was written).
	Appended bool
}

// do runs fn once for every overlapping call with the same key.
func (r *Reconciler) do(ctx context.Context, key string, fn func() (any, error)) (any, error) {
	ch := r.group.DoChan(key, fn)
	r.callers.Add(1) // after DoChan: the call has joined the group
	defer r.callers.Add(-1)
	select {
	case res := <-ch:
		return res.Val, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Lost reconciles every stale child in what the tracker has read (call
// Tracker.Refresh first, or keep Tracker.Follow running), and every
// non-terminal adopted child whether stale or not (a PID-only child has no
// heartbeat to go stale by): it checks the recorded identity of its
// lifecycle source (the wrapper of a launched child, the process of an
// adopted one) and appends a terminal lost event only when the check says
// gone. Alive and unknown (another host, no start time, nothing recorded)
// change nothing. Before appending it reads the journal to its end, so a
// child that ended meanwhile is left alone.
//
// Outcomes: one Finding per stale child and per adopted child found gone
// (by child id; an adopted child neither stale nor gone has nothing to
// report) and nil; the Findings and a *journal.BlockedError when the
// journal is blocked (nothing is appended to a blocked journal); the
// Findings and an error when the journal cannot be read or appended to;
// ctx.Err() when ctx is done first.
func (r *Reconciler) Lost(ctx context.Context) ([]Finding, error) {
	v, err := r.do(ctx, "lost", func() (any, error) { return r.lost() })
	fs, _ := v.([]Finding)
	return fs, err
}

func (r *Reconciler) lost() ([]Finding, error) {
	var findings []Finding
	gone := false
	for _, f := range r.t.FindLost(r.now(), r.table) {
		findings = append(findings, Finding{Finding: f})
		gone = gone || f.Gone()
	}
	if !gone {
		return findings, nil
	}
	if err := r.t.Refresh(); err != nil {
		return findings, err
	}
	var events []Pending
	for _, f := range findings {
		if !f.Gone() {
			continue
		}
		if c, _ := r.t.Lookup(f.ChildID); !c.State.Terminal() {
			events = append(events, Pending{f.Target, emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: lostDetails(&f.Finding)}})
		}
	}
	if err := r.w.Append(events); err != nil {
		return findings, err
	}
	for i := range findings {
		for _, ev := range events {
			findings[i].Appended = findings[i].Appended || ev.ChildID == findings[i].ChildID
		}
	}
	return findings, nil
}

// lostDetails are the details of the terminal lost event for a finding
// (docs/events.md, "Reconciliation").
func lostDetails(f *projection.Finding) event.Terminal {
	return event.Terminal{
		Reconciliation: &event.Reconciliation{
			Checked:     f.Checked,
			Identity:    f.Check.Identity,
			Result:      f.Check.Status,
			Reason:      f.Check.Reason,
			StaleReason: f.StaleReason,
		},
		Claim:        event.ClaimExitStatusOnly,
		ExitStatus:   "unknown",
		ChildProcess: f.ChildProcess,
	}
}

// Snapshot applies a complete snapshot: a reconciliation event for each
// correction of a non-terminal child, a diagnostic event counting each
// omission of a covered non-terminal child (its intent is stale-unknown
// once the count reaches grace) or resetting the count of a child listed
// again. Terminal children are never touched (Plan.Refusals). Misses are
// recorded in the journal, so they count across invocations; a snapshot
// already counted is not counted again.
//
// Outcomes: the Plan and nil; projection.ErrIncomplete (nothing
// appended); the Plan and a *journal.BlockedError or another read or
// append error (events before the failure may have been appended);
// ctx.Err().
func (r *Reconciler) Snapshot(ctx context.Context, s event.Snapshot, grace int) (projection.Plan, error) {
	key := fmt.Sprintf("snapshot\x00%s\x00%s\x00%s\x00%d", s.Source, s.SourceEpoch, s.SnapshotID, grace)
	v, err := r.do(ctx, key, func() (any, error) { return r.snapshot(s, grace) })
	plan, _ := v.(projection.Plan)
	return plan, err
}

func (r *Reconciler) snapshot(s event.Snapshot, grace int) (projection.Plan, error) {
	if !s.Complete {
		return projection.Plan{}, projection.ErrIncomplete
	}
	if err := r.t.Refresh(); err != nil {
		return projection.Plan{}, err
	}
	plan, err := r.t.PlanSnapshot(s, grace)
	if err != nil {
		return plan, err
	}
	var events []Pending
	for i := range plan.Corrections {
		cr := &plan.Corrections[i]
		events = append(events, Pending{cr.Target, emit.Spec{Kind: event.KindReconciliation, State: cr.After, Details: correctionDetails(cr, s)}})
	}
	for _, o := range plan.Omissions {
		events = append(events, Pending{o.Target, emit.Spec{Kind: event.KindDiagnostic, Details: event.OmissionDiagnostic{Omission: &o.Record}}})
	}
	return plan, r.w.Append(events)
}

// correctionDetails are the details of a reconciliation event
// (docs/events.md, "Reconciliation").
func correctionDetails(cr *projection.Correction, s event.Snapshot) event.Correction {
	return event.Correction{
		Before:         string(cr.Before),
		After:          string(cr.After),
		SnapshotID:     s.SnapshotID,
		SnapshotSource: s.Source,
		SnapshotEpoch:  s.SourceEpoch,
	}
}
