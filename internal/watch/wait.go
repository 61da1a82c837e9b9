package watch

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Condition is what `lcwrap wait --for` waits for: a terminal state
// (ForTerminal), StateStale, or one state of the contract.
type Condition string

// ForTerminal is the default condition: the child ended, however.
const ForTerminal Condition = "terminal"

// ParseCondition reads --for: terminal, stale or a state.
func ParseCondition(s string) (Condition, error) {
	switch s {
	case string(ForTerminal), StateStale:
		return Condition(s), nil
	}
	if slices.Contains(event.States, event.State(s)) {
		return Condition(s), nil
	}
	return "", fmt.Errorf("%q is not terminal, stale or a state (%s)", s, stateNames())
}

// ParseStates reads a comma-separated list of states (and stale), as
// `lcwrap watch --for` takes it.
func ParseStates(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			return nil, fmt.Errorf("an empty state in %q", s)
		case p == StateStale, slices.Contains(event.States, event.State(p)):
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		default:
			return nil, fmt.Errorf("%q is not a state (%s) or stale", p, stateNames())
		}
	}
	return out, nil
}

func stateNames() string {
	var names []string
	for _, s := range event.States {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// metBy reports whether a child in state (or going stale) meets c.
func (c Condition) metBy(state string) bool {
	switch c {
	case ForTerminal:
		return event.State(state).Terminal()
	}
	return state == string(c)
}

// Status is how one waited-for child stands.
type Status string

// The statuses of a waited-for child.
const (
	Pending Status = "pending" // not met yet
	Met     Status = "met"
	Unmet   Status = "unmet" // it ended without meeting the condition
	Missing Status = "never-appeared"
)

// Entry is one child a Wait waits for.
type Entry struct {
	Key    Key
	Status Status
	// View is the child as last seen (nil while it never appeared).
	View *projection.ChildView
	// Exit is its terminal event's exit (nil when none was read).
	Exit *event.Exit
}

// Select picks the children a Wait without named children waits for.
type Select struct {
	Source string        // lifecycle source ("" any)
	State  []event.State // current state, any of ("" any open child)
	Host   string        // fleet host ("" any)
}

// Wait decides `lcwrap wait`: feed it a follower's transitions (Observe)
// and call Start once the follower caught up; Done says when, and how,
// the waiting ended.
type Wait struct {
	For    Condition
	Any    bool
	Named  []string // child ids; with Select.Host, on that host only
	Select Select

	entries []*Entry
	byKey   map[Key]*Entry
	exits   map[Key]*event.Exit // terminal exits read before Start
	started bool
}

// ErrNothing means the selectors picked no child.
var ErrNothing = errors.New("no child matches")

// Observe takes one transition of the follower.
func (w *Wait) Observe(t *Transition) {
	if !w.started {
		if t.Exit != nil {
			if w.exits == nil {
				w.exits = map[Key]*event.Exit{}
			}
			if len(w.Named) > 0 && !slices.Contains(w.Named, t.ChildID) {
				return
			}
			w.exits[t.Key] = t.Exit
		}
		return
	}
	e := w.byKey[t.Key]
	if e == nil && slices.Contains(w.Named, t.ChildID) && (w.Select.Host == "" || t.Host == w.Select.Host) {
		e = w.add(t.Key)
	}
	if e == nil {
		return
	}
	v := t.View
	e.View = &v
	if t.Exit != nil {
		e.Exit = t.Exit
	}
	if e.Status != Pending && e.Status != Missing {
		return
	}
	switch {
	case w.For.metBy(t.State):
		e.Status = Met
	case event.State(t.State).Terminal():
		e.Status = Unmet
	default:
		e.Status = Pending
	}
}

func (w *Wait) add(k Key) *Entry {
	e := &Entry{Key: k, Status: Pending}
	// A named child seen only now replaces its placeholder.
	for i, old := range w.entries {
		if old.Key.ChildID == k.ChildID && old.Key.Host == "" && old.View == nil && old.Status == Missing {
			w.entries = slices.Delete(w.entries, i, i+1)
			delete(w.byKey, old.Key)
			break
		}
	}
	w.entries = append(w.entries, e)
	w.byKey[k] = e
	return e
}

// Start fixes the children waited for from what the follower has read
// (its history) and judges each as it stands. Outcomes: nil; ErrNothing
// when no child was named and the selectors picked none.
func (w *Wait) Start(f *Follower) error {
	w.started, w.byKey = true, map[Key]*Entry{}
	keys := f.Keys()
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.String(), b.String()) })
	if len(w.Named) > 0 {
		for _, id := range w.Named {
			found := false
			for _, k := range keys {
				if k.ChildID == id && (w.Select.Host == "" || k.Host == w.Select.Host) && w.byKey[k] == nil {
					w.judge(f, w.add(k))
					found = true
				}
			}
			if !found {
				e := &Entry{Key: Key{Host: w.Select.Host, ChildID: id}, Status: Missing}
				w.entries = append(w.entries, e)
				w.byKey[e.Key] = e
			}
		}
		w.exits = nil
		return nil
	}
	for _, k := range keys {
		v, ok := f.View(k)
		if ok && w.picks(k, &v) {
			w.judge(f, w.add(k))
		}
	}
	w.exits = nil
	if len(w.entries) == 0 {
		return ErrNothing
	}
	return nil
}

// picks reports whether the selectors pick a child: open children only,
// unless --state names a terminal state.
func (w *Wait) picks(k Key, v *projection.ChildView) bool {
	s := w.Select
	if s.Host != "" && k.Host != s.Host || s.Source != "" && v.Source != s.Source {
		return false
	}
	if len(s.State) == 0 {
		return !v.Ended()
	}
	return v.State != nil && slices.Contains(s.State, *v.State)
}

// judge sets an entry's status from the child as it stands.
func (w *Wait) judge(f *Follower, e *Entry) {
	v, ok := f.View(e.Key)
	if !ok {
		e.Status = Missing
		return
	}
	e.View = &v
	e.Exit = w.exits[e.Key]
	state := ""
	if v.State != nil {
		state = string(*v.State)
	}
	switch {
	case w.For == StateStale && v.Stale:
		e.Status = Met
	case w.For.metBy(state):
		e.Status = Met
	case v.Ended():
		e.Status = Unmet
	default:
		e.Status = Pending
	}
}

// Done reports whether the waiting is over, and the exit status it ends
// with: exitcode.OK when the condition is met (every child's, or with Any
// one's), exitcode.Unmet when a child ended without meeting it (with Any:
// every child did). It is false before Start.
func (w *Wait) Done() (bool, int) {
	if !w.started {
		return false, 0
	}
	met, unmet, open := 0, 0, 0
	for _, e := range w.entries {
		switch e.Status {
		case Met:
			met++
		case Unmet:
			unmet++
		default:
			open++
		}
	}
	switch {
	case w.Any && met > 0:
		return true, exitcode.OK
	case w.Any && open == 0:
		return true, exitcode.Unmet
	case !w.Any && unmet > 0:
		return true, exitcode.Unmet
	case !w.Any && open == 0:
		return true, exitcode.OK
	}
	return false, 0
}

// Entries returns the children waited for: named ones in the order given,
// selected ones by key.
func (w *Wait) Entries() []*Entry { return w.entries }

// ExitCode is `wait --exit-code` for a child that ended: its own exit code
// when the journal records one, 128+N for a death by signal N, and
// exitcode.EndUnknown for an exit lcwrap does not know (an adopted
// process, a lost child) — never 0 for an unknown.
func ExitCode(e *Entry) int {
	if e.View == nil || !e.View.Ended() || *e.View.State == event.StateLost {
		return exitcode.EndUnknown
	}
	x := e.Exit
	switch {
	case x == nil:
		if v := e.View.Exit; v != nil && v.Code != nil && *v.Code >= 0 && *v.Code <= 255 {
			return *v.Code
		}
		return exitcode.EndUnknown
	case x.Code != nil && *x.Code >= 0 && *x.Code <= 255:
		return *x.Code
	case x.SignalNumber > 0 && x.SignalNumber < 128:
		return exitcode.SignalBase + x.SignalNumber
	}
	return exitcode.EndUnknown
}
