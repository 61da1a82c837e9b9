package reconcile

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// refreshLost reads the journal and reconciles, as `status --reconcile`
// does.
func refreshLost(tr *projection.Tracker, r *Reconciler) ([]Finding, error) {
	if err := tr.Refresh(); err != nil {
		return nil, err
	}
	return r.Lost(context.Background())
}

func lostEvents(t *testing.T, path string) []event.Event {
	t.Helper()
	var out []event.Event
	for _, e := range readJournal(t, path) {
		if e.Kind == event.KindTerminal && e.State == lost {
			out = append(out, e)
		}
	}
	return out
}

// Item 3: heartbeats stop → stale first; lost only after a failed
// reconciliation, never for a live wrapper, never from another host.
func TestStaleBeforeLost(t *testing.T) {
	wrapper := localIdentity(4242, 77)
	far := event.Identity{PID: 4343, StartTime: 88, Host: "elsewhere.example"}
	events := launched("build", wrapper, 4250, 1000)
	events = append(events, launched("remote", far, 4350, 1000)...)
	path := writeJournal(t, events...)

	table := &event.FakeProcTable{}
	table.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	table.Set(4250, event.ProcInfo{StartTime: 500, State: 'S'})
	clk := &clock{t: t0.Add(4 * time.Second)} // 1s after the last heartbeat
	tr := projection.NewTracker(path)
	r := New(tr, journal.Options{}, table, clk.now)
	// Fresh: nothing to reconcile, even with the wrapper already gone.
	table.Remove(4242)
	fs, err := refreshLost(tr, r)
	if err != nil || len(fs) != 0 {
		t.Fatalf("fresh children reconciled: %+v, %v", fs, err)
	}
	if v := view(t, tr, "build", clk.now()); v.Stale || stateOf(v) != running {
		t.Fatalf("fresh: %+v", v)
	}

	// Past the deadline (3 × 1s) with the wrapper alive: stale, not lost.
	table.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	clk.set(t0.Add(7500 * time.Millisecond))
	fs, err = refreshLost(tr, r)
	if err != nil || len(fs) != 2 {
		t.Fatalf("stale children: %+v, %v", fs, err)
	}
	if fs[0].ChildID != "build" || fs[0].Check.Status != "alive" || fs[0].Appended {
		t.Fatalf("live wrapper: %+v", fs[0])
	}
	if fs[1].ChildID != "remote" || fs[1].Check.Status != "unknown" || fs[1].Appended {
		t.Fatalf("another host: %+v", fs[1])
	}
	v := view(t, tr, "build", clk.now())
	if !v.Stale || v.StaleReason != projection.StaleHeartbeat || stateOf(v) != running {
		t.Fatalf("stale with a live wrapper: %+v", v)
	}
	if n := len(lostEvents(t, path)); n != 0 {
		t.Fatalf("%d lost events for live or unknown wrappers", n)
	}

	// The pid now belongs to another process: gone. Lost, once.
	table.Set(4242, event.ProcInfo{StartTime: 999, State: 'S'})
	fs, err = refreshLost(tr, r)
	if err != nil || !fs[0].Appended || fs[1].Appended {
		t.Fatalf("gone wrapper: %+v, %v", fs, err)
	}
	lostEv := lostEvents(t, path)
	if len(lostEv) != 1 {
		t.Fatalf("%d lost events, want 1", len(lostEv))
	}
	e := lostEv[0]
	if e.Source != Source || e.ChildID != "build" || e.Lineage.RootChildID != "build" || e.Capabilities != event.Launched(true).Set || *e.Sequence != 1 {
		t.Fatalf("lost event identity: %+v", e)
	}
	d := e.DetailsMap()
	rec, _ := d["reconciliation"].(map[string]any)
	cp, _ := d["childProcess"].(map[string]any)
	if rec["checked"] != "wrapper" || rec["result"] != "gone" || cp["status"] != "alive" || d["claim"] != "process-exit-status-only" {
		t.Fatalf("lost details: %s", e.Details)
	}
	v = view(t, tr, "build", clk.now())
	if stateOf(v) != lost || v.Stale || v.ChildProcess == nil || v.ChildProcess.Status != "alive" {
		t.Fatalf("after reconciliation: %+v", v)
	}
	if v := view(t, tr, "remote", clk.now()); stateOf(v) != running || !v.Stale {
		t.Fatalf("the remote child changed: %+v", v)
	}

	// Again: the child has ended, nothing more is appended.
	if fs, err = refreshLost(tr, r); err != nil || len(fs) != 1 || fs[0].ChildID != "remote" {
		t.Fatalf("second pass: %+v, %v", fs, err)
	}
	if n := len(lostEvents(t, path)); n != 1 {
		t.Fatalf("%d lost events after a second pass", n)
	}
}

// An adopted PID-only child never goes stale (it has no heartbeat), so its
// process is checked whether stale or not: lost once the process is
// provably gone (say its observer, lcwrap adopt, died first), never while
// it is alive or cannot be checked.
func TestLostAdopted(t *testing.T) {
	proc := localIdentity(5151, 42)
	far := event.Identity{PID: 5252, StartTime: 43, Host: "elsewhere.example"}
	path := writeJournal(t, adoptedCreated("seen", proc), adoptedCreated("remote", far))
	table := &event.FakeProcTable{}
	table.Set(5151, event.ProcInfo{StartTime: 42, State: 'S'})
	clk := &clock{t: t0.Add(time.Hour)}
	tr := projection.NewTracker(path)
	r := New(tr, journal.Options{}, table, clk.now)

	// Alive, or on another host: nothing to report, nothing appended.
	fs, err := refreshLost(tr, r)
	if err != nil || len(fs) != 0 {
		t.Fatalf("alive or unknown adopted children: %+v, %v", fs, err)
	}
	if v := view(t, tr, "seen", clk.now()); v.Display != "observed" || v.Stale {
		t.Fatalf("a PID-only child (heartbeat unknown): %+v", v)
	}
	if n := len(lostEvents(t, path)); n != 0 {
		t.Fatalf("%d lost events for a live process", n)
	}

	// The process is gone (its pid now names another process): lost, not
	// stale, exit status unknown.
	table.Set(5151, event.ProcInfo{StartTime: 99, State: 'S'})
	fs, err = refreshLost(tr, r)
	if err != nil || len(fs) != 1 || fs[0].ChildID != "seen" || fs[0].Checked != projection.CheckedProcess || !fs[0].Appended || fs[0].StaleReason != "" || fs[0].ChildProcess != nil {
		t.Fatalf("gone adopted process: %+v, %v", fs, err)
	}
	lostEv := lostEvents(t, path)
	if len(lostEv) != 1 {
		t.Fatalf("%d lost events, want 1", len(lostEv))
	}
	e := lostEv[0]
	if !e.Lineage.External || e.Lineage.AdoptedAt != ts(t0) || e.Capabilities != event.AdoptedPIDOnly().Set {
		t.Fatalf("the lost event must keep the adoption lineage and capabilities: %+v", e)
	}
	d := e.DetailsMap()
	rec, _ := d["reconciliation"].(map[string]any)
	if rec["checked"] != "process" || rec["result"] != "gone" || rec["reason"] == "" || d["exitStatus"] != "unknown" || d["claim"] != "process-exit-status-only" {
		t.Fatalf("lost details: %s", e.Details)
	}
	if _, ok := rec["staleReason"]; ok {
		t.Fatalf("a child that was not stale has a staleReason: %s", e.Details)
	}
	if v := view(t, tr, "remote", clk.now()); stateOf(v) != created {
		t.Fatalf("the child on another host changed: %+v", v)
	}

	// Again: nothing more.
	if fs, err = refreshLost(tr, r); err != nil || len(fs) != 0 || len(lostEvents(t, path)) != 1 {
		t.Fatalf("second pass: %+v, %v", fs, err)
	}

	// With a heartbeat capability, a stale adopted child is reported even
	// while its process is alive.
	beating := adoptedCreated("beating", proc)
	beating.Capabilities.Heartbeat = event.Known
	beating = withDetails(beating, map[string]any{"pid": proc.PID, "startTime": 99, "host": proc.Host, "observation": "process-presence", "heartbeatIntervalMs": 1000})
	appendJournal(t, path, beating)
	fs, err = refreshLost(tr, r)
	if err != nil || len(fs) != 1 || fs[0].ChildID != "beating" || fs[0].StaleReason != projection.StaleHeartbeat || fs[0].Check.Status != "alive" || fs[0].Appended {
		t.Fatalf("stale adopted child: %+v, %v", fs, err)
	}
}

// A child that ended between the identity check and the append is not
// declared lost: the journal is read again first.
func TestLostRereadsBeforeAppending(t *testing.T) {
	wrapper := localIdentity(4242, 77)
	path := writeJournal(t, launched("build", wrapper, 4250, 1000)...)
	table := &blockingTable{release: make(chan struct{}), entered: make(chan struct{}, 8)}
	clk := &clock{t: t0.Add(time.Hour)}
	r := New(projection.NewTracker(path), journal.Options{}, table, clk.now)
	if err := r.t.Refresh(); err != nil {
		t.Fatal(err)
	}
	done := make(chan []Finding)
	go func() {
		fs, err := r.Lost(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- fs
	}()
	<-table.entered
	appendJournal(t, path, withDetails(ev("build", 5, event.KindTerminal, completed), map[string]any{"exit": map[string]any{"code": 0}}))
	close(table.release)
	fs := <-done
	if len(fs) != 1 || !fs[0].Gone() || fs[0].Appended {
		t.Fatalf("%+v", fs)
	}
	if n := len(lostEvents(t, path)); n != 0 {
		t.Fatalf("%d lost events for a child that completed", n)
	}
}

// blockingTable says every pid is gone, once released; it counts calls.
type blockingTable struct {
	release chan struct{}
	entered chan struct{}
	calls   atomic.Int32
}

func (b *blockingTable) Stat(int) (event.ProcInfo, error) {
	b.calls.Add(1)
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	return event.ProcInfo{}, event.ErrNoProcess
}

// Overlapping reconcile requests in one process share one run.
func TestOverlappingRequestsCoalesce(t *testing.T) {
	path := writeJournal(t, launched("build", localIdentity(4242, 77), 4250, 1000)...)
	table := &blockingTable{release: make(chan struct{}), entered: make(chan struct{}, 8)}
	clk := &clock{t: t0.Add(time.Hour)}
	r := New(projection.NewTracker(path), journal.Options{}, table, clk.now)
	if err := r.t.Refresh(); err != nil {
		t.Fatal(err)
	}
	const n = 5
	results := make(chan []Finding, n)
	for range n {
		go func() {
			fs, err := r.Lost(context.Background())
			if err != nil {
				t.Error(err)
			}
			results <- fs
		}()
	}
	<-table.entered
	if !testtool.Poll(10*time.Second, func() bool { return r.callers.Load() == n }) {
		t.Fatalf("only %d of %d requests arrived", r.callers.Load(), n)
	}
	close(table.release)
	for range n {
		if fs := <-results; len(fs) != 1 || !fs[0].Appended {
			t.Fatalf("a coalesced caller got %+v", fs)
		}
	}
	if c := table.calls.Load(); c != 2 { // the wrapper, then the child's process
		t.Fatalf("%d identity checks for %d overlapping requests, want one run (2 checks)", c, n)
	}
	if got := len(lostEvents(t, path)); got != 1 {
		t.Fatalf("%d lost events, want 1", got)
	}
}

func snapshot(id string, coverage event.Coverage, children ...event.SnapshotChild) event.Snapshot {
	return event.Snapshot{Source: "orchestrator", SourceEpoch: "o1", SnapshotID: id, ObservedAt: ts(t0.Add(time.Minute)),
		Complete: true, Coverage: coverage, Children: children}
}

func kid(id string, s event.State) event.SnapshotChild {
	return event.SnapshotChild{ChildID: id, State: s}
}

func reconciliations(t *testing.T, path string) []event.Event {
	t.Helper()
	var out []event.Event
	for _, e := range readJournal(t, path) {
		if e.Source == Source {
			out = append(out, e)
		}
	}
	return out
}

// Item 4: a complete snapshot corrects a non-terminal state with an audit
// event, and cannot change a terminal one.
func TestSnapshotCorrects(t *testing.T) {
	events := launched("a", localIdentity(1, 1), 2, 1000)
	events = append(events, launched("done", localIdentity(1, 1), 2, 1000)...)
	events = append(events, ev("done", 5, event.KindTerminal, completed))
	path := writeJournal(t, events...)
	tr := projection.NewTracker(path)
	clk := &clock{t: t0.Add(5 * time.Second)}
	r := New(tr, journal.Options{}, &event.FakeProcTable{}, clk.now)
	s := snapshot("snap-1", event.Coverage{All: true}, kid("a", waiting), kid("done", running), kid("stranger", running))
	plan, err := r.Snapshot(context.Background(), s, projection.DefaultGrace)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Corrections) != 1 || plan.Corrections[0].ChildID != "a" || plan.Corrections[0].Before != running || plan.Corrections[0].After != waiting {
		t.Fatalf("corrections %+v", plan.Corrections)
	}
	if len(plan.Refusals) != 1 || plan.Refusals[0] != (projection.Refusal{ChildID: "done", State: completed, SnapshotState: running}) {
		t.Fatalf("refusals %+v", plan.Refusals)
	}
	if len(plan.Unknown) != 1 || plan.Unknown[0] != "stranger" {
		t.Fatalf("unknown %+v", plan.Unknown)
	}
	audit := reconciliations(t, path)
	if len(audit) != 1 || audit[0].Kind != event.KindReconciliation || audit[0].State != waiting || audit[0].ChildID != "a" {
		t.Fatalf("audit events %+v", audit)
	}
	d := audit[0].DetailsMap()
	if d["before"] != "running" || d["after"] != "waiting" || d["snapshotId"] != "snap-1" || d["snapshotSource"] != "orchestrator" || d["snapshotEpoch"] != "o1" {
		t.Fatalf("audit details %s", audit[0].Details)
	}
	if v := view(t, tr, "a", clk.now()); stateOf(v) != waiting || v.Corrections != 1 {
		t.Fatalf("a: %+v", v)
	}
	if v := view(t, tr, "done", clk.now()); stateOf(v) != completed {
		t.Fatalf("the terminal child changed: %+v", v)
	}
	// Applying it again changes nothing.
	if plan, err = r.Snapshot(context.Background(), s, projection.DefaultGrace); err != nil || len(plan.Corrections) != 0 {
		t.Fatalf("again: %+v, %v", plan, err)
	}
	if n := len(reconciliations(t, path)); n != 1 {
		t.Fatalf("%d audit events after a repeat", n)
	}
	// An older report from the lifecycle source itself is not a correction.
	old := snapshot("snap-2", event.Coverage{All: true}, event.SnapshotChild{ChildID: "a", State: starting, Sequence: event.Int64(2)})
	old.Source, old.SourceEpoch = "lcwrap", "e1"
	if plan, err = r.Snapshot(context.Background(), old, projection.DefaultGrace); err != nil || len(plan.Older) != 1 || len(plan.Corrections) != 0 {
		t.Fatalf("older: %+v, %v", plan, err)
	}
}

// Item 6: an incomplete snapshot is refused; omission counts only under
// complete coverage, and only the grace count surfaces stale/unknown —
// across invocations, since misses are recorded in the journal.
func TestSnapshotOmission(t *testing.T) {
	events := launched("a", localIdentity(1, 1), 2, 0) // no heartbeat interval: only omission can make it stale
	events = append(events, launched("b", localIdentity(1, 1), 2, 0)...)
	path := writeJournal(t, events...)
	clk := &clock{t: t0.Add(time.Hour)}
	fresh := func() (*projection.Tracker, *Reconciler) { // a new lcwrap process
		tr := projection.NewTracker(path)
		return tr, New(tr, journal.Options{}, &event.FakeProcTable{}, clk.now)
	}
	ctx := context.Background()
	_, r := fresh()

	incomplete := snapshot("i-1", event.Coverage{All: true})
	incomplete.Complete = false
	if _, err := r.Snapshot(ctx, incomplete, 1); !errors.Is(err, projection.ErrIncomplete) {
		t.Fatalf("incomplete snapshot: %v", err)
	}
	// Complete, but covering only b: a's omission proves nothing.
	for i := range 3 {
		plan, err := r.Snapshot(ctx, snapshot("partial-"+jsonString(i), event.Coverage{ChildIDs: []string{"b"}}, kid("b", running)), 1)
		if err != nil || len(plan.Omissions) != 0 {
			t.Fatalf("partial coverage: %+v, %v", plan, err)
		}
	}
	if n := len(reconciliations(t, path)); n != 0 {
		t.Fatalf("%d events from snapshots that prove nothing", n)
	}

	miss := func(r *Reconciler, id string) projection.Plan {
		t.Helper()
		plan, err := r.Snapshot(ctx, snapshot(id, event.Coverage{All: true}, kid("b", running)), projection.DefaultGrace)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	plan := miss(r, "s-1")
	if len(plan.Omissions) != 1 || plan.Omissions[0].Record.ConsecutiveMisses != 1 || plan.Omissions[0].Record.Intent != "" {
		t.Fatalf("first miss: %+v", plan.Omissions)
	}
	tr, r := fresh()
	if miss(r, "s-1"); len(reconciliations(t, path)) != 1 {
		t.Fatal("the same snapshot was counted twice")
	}
	if v := view(t, tr, "a", clk.now()); v.Stale || v.Omission.ConsecutiveMisses != 1 {
		t.Fatalf("one miss, grace 2: %+v", v)
	}
	tr, r = fresh()
	plan = miss(r, "s-2")
	if rec := plan.Omissions[0].Record; rec.ConsecutiveMisses != 2 || rec.Intent != projection.IntentStaleUnknown {
		t.Fatalf("second miss: %+v", rec)
	}
	v := view(t, tr, "a", clk.now())
	if !v.Stale || v.StaleReason != projection.StaleOmitted || stateOf(v) != running {
		t.Fatalf("after the grace count: %+v", v)
	}
	// Listed again: the count is reset, the child is fresh again.
	plan, err := r.Snapshot(ctx, snapshot("s-3", event.Coverage{All: true}, kid("a", running), kid("b", running)), projection.DefaultGrace)
	if err != nil || len(plan.Omissions) != 1 || plan.Omissions[0].Record.ConsecutiveMisses != 0 {
		t.Fatalf("reset: %+v, %v", plan, err)
	}
	if v := view(t, tr, "a", clk.now()); v.Stale || v.Omission != nil {
		t.Fatalf("after the reset: %+v", v)
	}
	if v := view(t, tr, "b", clk.now()); v.Stale || v.Omission != nil {
		t.Fatalf("b was listed every time: %+v", v)
	}
}

// A blocked journal: the valid prefix is projected, nothing is appended.
func TestBlockedJournal(t *testing.T) {
	path := writeJournal(t, launched("build", localIdentity(4242, 77), 4250, 1000)...)
	appendRaw(t, path, "not json\n")
	tr := projection.NewTracker(path)
	err := tr.Refresh()
	var be *journal.BlockedError
	if !errors.As(err, &be) || be.Line != 5 {
		t.Fatalf("refresh: %v", err)
	}
	if v := view(t, tr, "build", t0); stateOf(v) != running {
		t.Fatalf("valid prefix: %+v", v)
	}
	r := New(tr, journal.Options{}, &event.FakeProcTable{}, func() time.Time { return t0.Add(time.Hour) })
	if _, err := refreshLost(tr, r); !errors.Is(err, journal.ErrBlocked) {
		t.Fatalf("reconciling a blocked journal: %v", err)
	}
	if n := len(lostEvents(t, path)); n != 0 {
		t.Fatal("appended to a blocked journal")
	}
}

// Round trip: a snapshot of a consistent journal (every open child
// alive) is accepted by reconciliation and changes nothing.
func TestBuildSnapshotRoundTrip(t *testing.T) {
	w := localIdentity(4242, 77)
	var events []event.Event
	events = append(events, launched("alive", w, 4250, 1000)...)
	events = append(events, launched("done", w, 4250, 1000)...)
	events = append(events, ev("done", 5, event.KindTerminal, completed))
	events = append(events, adoptedCreated("seen", localIdentity(5151, 42)))
	path := writeJournal(t, events...)
	table := &event.FakeProcTable{}
	table.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	table.Set(5151, event.ProcInfo{StartTime: 42, State: 'S'})
	s, _ := snapshotOf(t, path, table)
	if !s.Complete {
		t.Fatalf("not complete: %+v", s)
	}
	before := len(readJournal(t, path))
	r := New(projection.NewTracker(path), journal.Options{}, table, func() time.Time { return t0.Add(time.Hour) })
	plan, err := r.Snapshot(context.Background(), s, projection.DefaultGrace)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Corrections)+len(plan.Refusals)+len(plan.Omissions)+len(plan.Unknown)+len(plan.Older) != 0 {
		t.Fatalf("a consistent journal was changed: %+v", plan)
	}
	if after := len(readJournal(t, path)); after != before {
		t.Fatalf("%d events appended", after-before)
	}
}
