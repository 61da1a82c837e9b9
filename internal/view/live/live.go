package live

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/view"
)

// Lines is where a live view's events come from: a journal followed from
// a cursor (o.After). Follow calls fn for each valid line after the
// cursor, in order, until ctx is done, o.OnBlocked at a bad line and
// o.OnNotice for rotations, skipped ranges and replacements; a journal
// replaced under it is read again from its start (fn sees line 1 again).
type Lines interface {
	Path() string
	Follow(ctx context.Context, o journal.ReadOptions, fn func(rec event.Record, raw []byte) error) error
}

// JournalLines follows the journal at a path, its sealed files and its
// live one as one journal (journal.FollowWith).
type JournalLines string

// Path returns the journal's path.
func (j JournalLines) Path() string { return string(j) }

// Follow follows the journal (see Lines).
func (j JournalLines) Follow(ctx context.Context, o journal.ReadOptions, fn func(event.Record, []byte) error) error {
	return journal.FollowWith(ctx, string(j), o, fn)
}

// maxPoll is how long a quiet journal may go unlooked at where its
// directory cannot be watched: new lines are looked for every 50 ms while
// they come, then less and less often. Where it can (inotify), a quiet
// journal is looked at when its directory says it changed, and every 30 s
// in case a change went unsaid (journal.ReadOptions.Watch), so an idle
// view costs no wake-up.
const maxPoll = time.Second

// retryAfter is how long a Follower waits before following a journal again
// after an error.
const retryAfter = 250 * time.Millisecond

// Follower is a view.Model kept current by following Lines in a goroutine
// (Run). Use it through With; Changed is signalled after new lines are
// applied.
type Follower struct {
	src     Lines
	mu      sync.Mutex
	m       *view.Model
	blocked *journal.BlockedError
	err     error
	rereads int
	last    journal.Notice
	notify  chan struct{}
	caught  chan struct{}
	upTo    int64 // bytes the journal held at the start: caught up past them
	done    bool
	fl      *fleetSource // a fleet's gateway output instead of a journal
}

// New returns a live model of src; nothing is read until Run.
func New(src Lines) *Follower {
	return &Follower{src: src, m: view.NewModel(), notify: make(chan struct{}, 1), caught: make(chan struct{})}
}

// Changed is signalled (coalesced) whenever the model changed.
func (l *Follower) Changed() <-chan struct{} { return l.notify }

// CaughtUp is closed once everything the journal held when Run started
// has been applied (or a bad line stopped the reading).
func (l *Follower) CaughtUp() <-chan struct{} { return l.caught }

// With runs fn with the model under the lock.
func (l *Follower) With(fn func(m *view.Model)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(l.m)
}

// State is what the follower knows besides the model.
type State struct {
	Path    string
	Blocked *journal.BlockedError // the bad line the journal is blocked at
	Err     error                 // the last error following it, nil once it reads again
	Rereads int                   // times the journal was replaced or shrank and was read again
	Notice  journal.Notice        // the last rotation, skipped range or replacement noticed
	Missing bool                  // nothing read yet, and there is no file at Path
	// Fleet is set when the follower reads a fleet (NewFleet).
	Fleet *FleetState
}

// State returns the follower's state.
func (l *Follower) State() State {
	l.mu.Lock()
	if fs := l.fl; fs != nil {
		s := State{Path: fs.path, Err: l.err, Fleet: &FleetState{Hosts: fs.hosts,
			Totals: fs.f.Totals(), Pending: fs.pending}}
		l.mu.Unlock()
		return s
	}
	s := State{Path: l.src.Path(), Blocked: l.blocked, Err: l.err, Rereads: l.rereads, Notice: l.last}
	empty := l.m.Lines() == 0
	l.mu.Unlock()
	if empty {
		_, err := os.Stat(s.Path)
		s.Missing = errors.Is(err, fs.ErrNotExist)
	}
	return s
}

// Run follows the journal until ctx is done and returns ctx.Err(). A
// journal replaced by another file, or one that shrank below what was
// read (a truncating repair), is read again from its start into a new
// model; other errors are kept (State.Err) and the journal is followed
// again after a pause.
func (l *Follower) Run(ctx context.Context) error {
	if l.fl != nil {
		return l.runFleet(ctx)
	}
	if fi, err := os.Stat(l.src.Path()); err == nil {
		l.upTo = fi.Size()
	}
	if l.upTo == 0 {
		l.catchUp()
	}
	for {
		l.mu.Lock()
		after := l.m.Cursor()
		l.mu.Unlock()
		err := l.src.Follow(ctx, journal.ReadOptions{After: after, OnBlocked: l.block, OnNotice: l.notice, MaxPoll: maxPoll, Watch: true}, l.apply)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.mu.Lock()
		l.err = err
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			// The journal changed under the follower in a way it cannot
			// read on from (it shrank): start again from a new model.
			l.m, l.blocked = view.NewModel(), nil
			l.rereads++
		}
		l.mu.Unlock()
		l.signal()
		l.catchUp()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryAfter):
		}
	}
}

func (l *Follower) apply(rec event.Record, raw []byte) error {
	l.mu.Lock()
	if rec.JournalSequence <= l.m.Cursor() {
		// Line numbers went back: the journal was replaced.
		l.m, l.blocked = view.NewModel(), nil
		l.rereads++
	}
	l.m.Apply(&rec.Event, raw, rec.JournalSequence)
	l.err = nil
	if l.blocked != nil && rec.JournalSequence >= l.blocked.Line {
		l.blocked = nil
	}
	end := rec.Line.Offset + rec.Line.Size
	loading := !l.done
	l.mu.Unlock()
	switch {
	case loading && end >= l.upTo:
		l.catchUp()
	case !loading:
		l.signal() // while loading, nobody looks before CaughtUp
	}
	return nil
}

func (l *Follower) notice(n journal.Notice) {
	l.mu.Lock()
	l.last = n
	l.mu.Unlock()
	l.signal()
}

func (l *Follower) block(be *journal.BlockedError) {
	l.mu.Lock()
	l.blocked = be
	l.mu.Unlock()
	l.catchUp()
	l.signal()
}

func (l *Follower) catchUp() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.done = true
		close(l.caught)
	}
}

func (l *Follower) signal() {
	select {
	case l.notify <- struct{}{}:
	default:
	}
}
