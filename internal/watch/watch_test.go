package watch_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
	"github.com/lcwrap/lcwrap/internal/watch"
)

// run follows o until stop says so (or a deadline), collecting every
// transition.
type run struct {
	mu     sync.Mutex
	got    []watch.Transition
	caught bool
	notes  []watch.Notice
}

func (r *run) snapshot() ([]watch.Transition, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got), r.caught
}

func follow(t *testing.T, o watch.Options) (*run, func()) {
	t.Helper()
	r := &run{}
	o.OnNotice = func(n watch.Notice) { r.mu.Lock(); r.notes = append(r.notes, n); r.mu.Unlock() }
	f := watch.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.Run(ctx, watch.Handler{
			Transition: func(tr *watch.Transition) error {
				r.mu.Lock()
				r.got = append(r.got, *tr.Clone())
				r.mu.Unlock()
				return nil
			},
			CaughtUp: func() error { r.mu.Lock(); r.caught = true; r.mu.Unlock(); return nil },
		})
	}()
	return r, func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}
}

func until(t *testing.T, r *run, what string, cond func(got []watch.Transition, caught bool) bool) []watch.Transition {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, caught := r.snapshot()
		if cond(got, caught) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; got %+v", what, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func states(got []watch.Transition) []string {
	var s []string
	for _, t := range got {
		s = append(s, t.ChildID+":"+t.Previous+">"+t.State)
	}
	return s
}

// History, then following: every transition once, with the state it left;
// those of the history are marked, and with FromEnd they are Before.
func TestFollowHistoryThenLive(t *testing.T) {
	for _, fromEnd := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		s := viewtest.New(time.Now())
		a := viewtest.Child{ID: "a"}
		s.Created(a)
		s.States(a, event.StateStarting, event.StateRunning)
		if err := viewtest.Append(path, s.Out); err != nil {
			t.Fatal(err)
		}
		r, stop := follow(t, watch.Options{Journal: path, FromEnd: fromEnd})
		until(t, r, "the history", func(_ []watch.Transition, caught bool) bool { return caught })
		s.Out = nil
		s.States(a, event.StateWaiting)
		s.End(a, event.StateCompleted, 0)
		if err := viewtest.Append(path, s.Out); err != nil {
			t.Fatal(err)
		}
		got := until(t, r, "the live transitions", func(got []watch.Transition, _ bool) bool { return len(got) == 5 })
		stop()
		want := []string{"a:>created", "a:created>starting", "a:starting>running", "a:running>waiting", "a:waiting>completed"}
		if !slices.Equal(states(got), want) {
			t.Fatalf("transitions %q, want %q", states(got), want)
		}
		for i, tr := range got {
			if tr.History != (i < 3) || tr.Before != (fromEnd && i < 3) {
				t.Fatalf("fromEnd=%v: %d: history %v before %v", fromEnd, i, tr.History, tr.Before)
			}
			if tr.At.Line != int64(i+1) || tr.Resume.Line != int64(i) {
				t.Fatalf("%d: at %v resume %v", i, tr.At, tr.Resume)
			}
		}
		if x := got[4].Exit; x == nil || x.Code == nil || *x.Code != 0 {
			t.Fatalf("the terminal transition's exit: %+v", x)
		}
	}
}

// A cursor: what is at or before it is Before; a cursor whose line holds
// another event (a replaced journal) is dropped, with a notice, and
// everything is handed on (at least once).
func TestFollowAfterCursor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	s := viewtest.New(time.Now())
	a := viewtest.Child{ID: "a"}
	s.Created(a)
	s.States(a, event.StateStarting, event.StateRunning)
	if err := viewtest.Append(path, s.Out); err != nil {
		t.Fatal(err)
	}
	r, stop := follow(t, watch.Options{Journal: path, After: watch.Position{Line: 2, EventID: s.Out[1].EventID}})
	got := until(t, r, "the history", func(got []watch.Transition, caught bool) bool { return caught && len(got) == 3 })
	stop()
	if !got[0].Before || !got[1].Before || got[2].Before {
		t.Fatalf("before the cursor: %v %v %v", got[0].Before, got[1].Before, got[2].Before)
	}

	r, stop = follow(t, watch.Options{Journal: path, After: watch.Position{Line: 2, EventID: "another"}})
	got = until(t, r, "the history", func(got []watch.Transition, caught bool) bool { return caught && len(got) == 3 })
	stop()
	for _, tr := range got {
		if tr.Before {
			t.Fatalf("a cursor of another journal skipped %v", tr)
		}
	}
	if len(r.notes) != 1 || r.notes[0].Kind != "cursor" {
		t.Fatalf("notices %+v", r.notes)
	}
}

// Stale has no event: it is judged on the clock, once per silence, with a
// synthetic id made of the child and its last event's id; a stale id the
// cursor lists is Before; new evidence makes it fresh, and a later silence
// is a new stale with a new id.
func TestFollowStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	s := viewtest.New(time.Now().Add(-time.Minute))
	c := viewtest.Child{ID: "quiet", Caps: event.Launched(true).Set, HeartbeatMs: 100}
	s.Created(c)
	s.States(c, event.StateStarting, event.StateRunning)
	if err := viewtest.Append(path, s.Out); err != nil {
		t.Fatal(err)
	}
	first := watch.StaleID("quiet", s.Out[2].EventID)
	r, stop := follow(t, watch.Options{Journal: path, Stale: true})
	got := until(t, r, "stale at the start", func(got []watch.Transition, caught bool) bool { return caught && len(got) == 4 })
	if st := got[3]; st.State != watch.StateStale || st.EventID != first || st.Previous != "running" || !st.History || st.Before {
		t.Fatalf("the stale transition: %+v", st)
	}
	// Fresh evidence, then silence again: stale once more, a new id.
	s.At = time.Now()
	s.Event(c, event.KindHeartbeat, "", "", nil)
	beat := s.Out[len(s.Out)-1].EventID
	if err := viewtest.Append(path, s.Out[3:]); err != nil {
		t.Fatal(err)
	}
	got = until(t, r, "stale again", func(got []watch.Transition, _ bool) bool { return len(got) == 5 })
	stop()
	if st := got[4]; st.State != watch.StateStale || st.EventID != watch.StaleID("quiet", beat) || st.History {
		t.Fatalf("the second stale transition: %+v", st)
	}

	// Restarted with the first id confirmed: it is Before; without, it is
	// handed on again (at least once).
	r, stop = follow(t, watch.Options{Journal: path, Stale: true, StaleSeen: []string{watch.StaleID("quiet", beat)}})
	got = until(t, r, "the history", func(got []watch.Transition, caught bool) bool { return caught && len(got) == 4 })
	stop()
	if st := got[3]; st.State != watch.StateStale || !st.Before {
		t.Fatalf("a confirmed stale id handed on again: %+v", st)
	}
}

// Wait's conditions, from the history and then live.
func TestWaitConditions(t *testing.T) {
	s := viewtest.New(time.Now())
	done, live := viewtest.Child{ID: "done"}, viewtest.Child{ID: "live"}
	s.Created(done)
	s.States(done, event.StateStarting, event.StateRunning, event.StateWaiting, event.StateRunning)
	s.End(done, event.StateCompleted, 0)
	s.Created(live)
	s.States(live, event.StateStarting, event.StateRunning)
	for _, tc := range []struct {
		name   string
		w      watch.Wait
		live   []event.State
		status []watch.Status
		code   int
	}{
		{"waiting once is not waiting now", watch.Wait{For: "waiting", Named: []string{"done"}}, nil, []watch.Status{watch.Unmet}, 122},
		{"terminal already", watch.Wait{For: watch.ForTerminal, Named: []string{"done"}}, nil, []watch.Status{watch.Met}, 0},
		{"any: one met", watch.Wait{For: watch.ForTerminal, Any: true, Named: []string{"done", "live"}}, nil, []watch.Status{watch.Met, watch.Pending}, 0},
		{"live into waiting", watch.Wait{For: "waiting", Named: []string{"live"}}, []event.State{event.StateWaiting}, []watch.Status{watch.Met}, 0},
		{"selected open ones", watch.Wait{For: "completed"}, []event.State{event.StateFailed}, []watch.Status{watch.Unmet}, 122},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			if err := viewtest.Append(path, s.Out); err != nil {
				t.Fatal(err)
			}
			f := watch.New(watch.Options{Journal: path})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			errDone := errors.New("done")
			check := func() error {
				if ok, _ := w.Done(); ok {
					return errDone
				}
				return nil
			}
			err := f.Run(ctx, watch.Handler{
				Transition: func(tr *watch.Transition) error { w.Observe(tr); return check() },
				CaughtUp: func() error {
					if err := w.Start(f); err != nil {
						return err
					}
					if tc.live != nil {
						more := viewtest.New(time.Now())
						more.Created(live) // sequence 1 again: a duplicate, skipped
						more.Out = nil
						for range 3 {
							more.Event(live, event.KindHeartbeat, "", "", nil)
						}
						more.Out = nil
						for _, st := range tc.live {
							if st.Terminal() {
								more.End(live, st, 1)
							} else {
								more.States(live, st)
							}
						}
						if err := viewtest.Append(path, more.Out); err != nil {
							return err
						}
					}
					return check()
				},
			})
			if !errors.Is(err, errDone) {
				t.Fatalf("Run: %v", err)
			}
			var got []watch.Status
			for _, e := range w.Entries() {
				got = append(got, e.Status)
			}
			_, code := w.Done()
			if !slices.Equal(got, tc.status) || code != tc.code {
				t.Fatalf("statuses %v code %d, want %v %d", got, code, tc.status, tc.code)
			}
		})
	}
}
