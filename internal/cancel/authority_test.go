package cancel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/projection/projectiontest"
)

const (
	created   = event.StateCreated
	running   = event.StateRunning
	completed = event.StateCompleted
	cancelled = event.StateCancelled
)

// The helpers the tests here share with those of the projection.
var (
	t0             = projectiontest.T0
	ev             = projectiontest.Ev
	withDetails    = projectiontest.WithDetails
	writeJournal   = projectiontest.WriteJournal
	appendJournal  = projectiontest.AppendJournal
	readJournal    = projectiontest.ReadJournal
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

// permissionTable cannot inspect any pid.
type permissionTable struct{}

func (permissionTable) Stat(int) (event.ProcInfo, error) {
	return event.ProcInfo{}, event.ErrPermission
}

// Cancel authority fails closed, each refusal with its own sentinel, and
// is granted only for a started launched child whose wrapper is verified
// alive on this host.
func TestCancelAuthority(t *testing.T) {
	wrapper := localIdentity(4242, 77)
	noHost := event.Identity{PID: 4242, StartTime: 77}
	noStart := localIdentity(4242, 0)
	remote := event.Identity{PID: 4242, StartTime: 77, Host: "elsewhere.example"}
	hook := ev("hook", 1, event.KindCreated, created)
	hook.Capabilities = event.External().Set
	var events []event.Event
	events = append(events, launched("run", wrapper, 4250, 1000)...)
	events = append(events, launched("done", wrapper, 4250, 1000)...)
	events = append(events, ev("done", 5, event.KindTerminal, completed))
	events = append(events, launched("remote", remote, 4250, 1000)...)
	events = append(events, launched("nohost", noHost, 4250, 1000)...)
	events = append(events, launched("nostart", noStart, 4250, 1000)...)
	events = append(events, launched("new", wrapper, 4250, 1000)[0])
	events = append(events, adoptedCreated("adopted", wrapper), hook)
	tr := projection.NewTracker(writeJournal(t, events...))
	if err := tr.Refresh(); err != nil {
		t.Fatal(err)
	}

	alive := &event.FakeProcTable{}
	alive.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	recycled := &event.FakeProcTable{}
	recycled.Set(4242, event.ProcInfo{StartTime: 78, State: 'S'})
	zombie := &event.FakeProcTable{}
	zombie.Set(4242, event.ProcInfo{StartTime: 77, State: 'Z'})
	cases := []struct {
		child string
		table event.ProcTable
		want  error
		state event.State
		says  string
	}{
		{"stranger", alive, ErrUnknownChild, "", "no event"},
		{"adopted", alive, ErrNoAuthority, created, "adopted (external)"},
		{"hook", alive, ErrNoAuthority, created, "cancel capability is unknown"},
		{"done", alive, ErrEnded, completed, "already ended: completed"},
		{"remote", alive, ErrNoAuthority, running, "runs on host elsewhere.example"},
		{"nohost", alive, ErrNoAuthority, running, "host was not recorded"},
		{"nostart", alive, ErrNoAuthority, running, "start time was not recorded"},
		{"run", &event.FakeProcTable{}, ErrWrapperGone, running, "no process has that pid"},
		{"run", recycled, ErrWrapperGone, running, "start time differs"},
		{"run", zombie, ErrWrapperGone, running, "zombie"},
		{"run", permissionTable{}, ErrNoAuthority, running, "cannot be verified"},
		{"new", alive, ErrNotStarted, created, "not started yet"},
		{"run", alive, nil, running, ""},
	}
	for _, c := range cases {
		a, err := CheckAuthority(tr, c.child, c.table)
		var ae *AuthorityError
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: refused: %v", c.child, err)
		case c.want == nil:
			if a.ChildID != c.child || a.State != c.state || a.Wrapper != wrapper {
				t.Errorf("%s: authority %+v", c.child, a)
			}
		case !errors.Is(err, c.want) || !errors.As(err, &ae):
			t.Errorf("%s: %v, want %v", c.child, err, c.want)
		case ae.State != c.state || !strings.Contains(ae.Reason, c.says):
			t.Errorf("%s: state %q reason %q, want %q and %q", c.child, ae.State, ae.Reason, c.state, c.says)
		}
	}
}

// The request is recorded as a diagnostic of its own source with the
// child's lineage and capabilities, the reason redacted; it changes no
// state. WaitEnded returns once the child's terminal event is appended.
func TestCancelRecorderAndWait(t *testing.T) {
	wrapper := localIdentity(4242, 77)
	path := writeJournal(t, launched("run", wrapper, 4250, 1000)...)
	tr := projection.NewTracker(path)
	if err := tr.Refresh(); err != nil {
		t.Fatal(err)
	}
	alive := &event.FakeProcTable{}
	alive.Set(4242, event.ProcInfo{StartTime: 77, State: 'S'})
	a, err := CheckAuthority(tr, "run", alive)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(tr, journal.Options{}, time.Now, a)
	by := localIdentity(5000, 1)
	if err := rec.Requested("superseded --token hunter2", by, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	if err := rec.NotDelivered(errors.New("pid 4242: the process is gone")); err != nil {
		t.Fatal(err)
	}
	var reqs []event.Event
	for _, e := range readJournal(t, path) {
		if e.Source == Source {
			reqs = append(reqs, e)
		}
	}
	if len(reqs) != 2 {
		t.Fatalf("%d events from the canceller, want 2", len(reqs))
	}
	for i, e := range reqs {
		if e.Kind != event.KindDiagnostic || e.State != "" || e.ChildID != "run" || e.Lineage.RootChildID != "run" ||
			e.Capabilities != event.Launched(true).Set || *e.Sequence != int64(i+1) || e.SourceEpoch != reqs[0].SourceEpoch {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	d := reqs[0].DetailsMap()
	w, _ := d["wrapper"].(map[string]any)
	rb, _ := d["requestedBy"].(map[string]any)
	if d["request"] != "cancel" || d["reason"] != "superseded --token [REDACTED]" || d["signal"] != "SIGTERM" || w["pid"] != 4242.0 || rb["pid"] != 5000.0 {
		t.Fatalf("request details: %s", reqs[0].Details)
	}
	if d := reqs[1].DetailsMap(); d["request"] != "cancel" || d["delivered"] != false || d["error"] == "" {
		t.Fatalf("not-delivered details: %s", reqs[1].Details)
	}
	if v := view(t, tr, "run", t0); stateOf(v) != running {
		t.Fatalf("a request changed the state: %+v", v)
	}

	// Not ended: WaitEnded gives up with ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := tr.WaitEnded(ctx, "run"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitEnded before the end: %v", err)
	}
	// Ended while waiting: it returns the terminal view.
	done := make(chan projection.ChildView, 1)
	go func() {
		v, err := tr.WaitEnded(context.Background(), "run")
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	appendJournal(t, path, withDetails(ev("run", 5, event.KindTerminal, cancelled), map[string]any{"exit": map[string]any{"signal": "SIGTERM"}}))
	select {
	case v := <-done:
		if stateOf(v) != cancelled || v.Exit == nil || v.Exit.Signal != "SIGTERM" {
			t.Fatalf("WaitEnded = %+v", v)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("WaitEnded did not see the terminal event")
	}
	// Already ended: at once.
	if v, err := tr.WaitEnded(ctx, "run"); err != nil || stateOf(v) != cancelled {
		t.Fatalf("WaitEnded after the end: %+v, %v", v, err)
	}
}
