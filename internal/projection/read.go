package projection

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// Tracker keeps the projection of one journal current. Each journal line
// is applied once, in journal order, whichever call reads it (Refresh, or
// Follow running alongside). It is safe for concurrent use.
type Tracker struct {
	path    string
	mu      sync.Mutex
	p       *Projection
	cursor  int64 // journalSequence of the last line applied
	blocked *journal.BlockedError
}

// NewTracker returns a tracker of the journal at path; nothing is read yet.
func NewTracker(path string) *Tracker { return &Tracker{path: path, p: New()} }

// Path returns the journal's path.
func (t *Tracker) Path() string { return t.path }

func (t *Tracker) apply(rec event.Record, raw []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec.JournalSequence <= t.cursor {
		return nil
	}
	t.p.Apply(&rec.Event, raw)
	t.cursor = rec.JournalSequence
	if t.blocked != nil && rec.JournalSequence >= t.blocked.Line {
		t.blocked = nil // repaired: a quarantine record now covers the line that blocked it
	}
	return nil
}

func (t *Tracker) block(be *journal.BlockedError) {
	t.mu.Lock()
	t.blocked = be
	t.mu.Unlock()
}

// Refresh reads what was appended since the last read.
//
// Outcomes: nil when the journal was read to its end, or does not exist
// (no evidence yet); a *journal.BlockedError (wrapping journal.ErrBlocked)
// after every valid line before the bad one was applied; other errors of
// journal.Scan (a symlink, I/O).
func (t *Tracker) Refresh() error {
	t.mu.Lock()
	after := t.cursor
	t.mu.Unlock()
	err := journal.Scan(t.path, after, t.apply)
	var be *journal.BlockedError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.As(err, &be):
		t.block(be)
	}
	return err
}

// Follow applies lines as they are appended until ctx is done. At a bad
// line it records it (see Blocked) and waits for a repair. Outcomes: those
// of journal.Follow (ctx.Err() when ctx is done).
func (t *Tracker) Follow(ctx context.Context) error {
	t.mu.Lock()
	after := t.cursor
	t.mu.Unlock()
	return journal.Follow(ctx, t.path, after, t.apply, t.block)
}

// Blocked returns the bad line the journal is blocked at, or nil.
func (t *Tracker) Blocked() *journal.BlockedError {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.blocked
}

// Report describes the journal's children at now (see Projection.Report),
// naming the journal and the line that blocks it, if any.
func (t *Tracker) Report(now time.Time, all bool) Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.p.Report(now, all)
	r.Input = t.path
	if be := t.blocked; be != nil {
		r.Blocked = &Blocked{Line: be.Line, Offset: be.Offset, Class: string(be.Class), Reason: be.Reason}
	}
	return r
}

// ChildRecord is what a child's events recorded that an action on it (a
// cancel, a correction) needs: who it is, its state ("" while no event
// has said) and its wrapper's identity (nil when none was recorded).
type ChildRecord struct {
	Target
	State   event.State
	Wrapper *event.Identity
}

// Lookup returns what the tracker has read of childID (call Refresh
// first), and whether any event named it.
func (t *Tracker) Lookup(childID string) (ChildRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.p.children[childID]
	if c == nil {
		return ChildRecord{}, false
	}
	r := ChildRecord{Target: c.target(), State: c.state}
	if c.wrapper != nil {
		w := *c.wrapper
		r.Wrapper = &w
	}
	return r, true
}

// errEnded stops following once the child has ended.
var errEnded = errors.New("ended")

// WaitEnded follows the journal from where the tracker has read until
// childID reaches a terminal state, and returns its view at that moment.
//
// Outcomes: the view and nil (at once when it has already ended);
// ctx.Err() when ctx ends first; the errors of journal.Follow.
func (t *Tracker) WaitEnded(ctx context.Context, childID string) (ChildView, error) {
	var v ChildView
	ended := func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		c := t.p.children[childID]
		if c == nil || !c.state.Terminal() {
			return false
		}
		v = c.view(time.Now().UnixMilli())
		return true
	}
	if ended() {
		return v, nil
	}
	t.mu.Lock()
	after := t.cursor
	t.mu.Unlock()
	err := journal.Follow(ctx, t.path, after, func(rec event.Record, raw []byte) error {
		t.apply(rec, raw)
		if rec.Event.ChildID == childID && ended() {
			return errEnded
		}
		return nil
	}, t.block)
	if errors.Is(err, errEnded) {
		return v, nil
	}
	return ChildView{}, err
}

// with runs fn on the projection under the tracker's lock.
func (t *Tracker) with(fn func(p *Projection)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn(t.p)
}

// ReadStream applies every valid event of r (a file, a pipe, a CI log with
// opts.Mixed) to p, skipping bad lines as the decoder does. Outcomes: the
// decoder's counts and retained diagnostics, with nil at the end of input
// or the read error that stopped it.
func ReadStream(r io.Reader, p *Projection, opts event.DecoderOptions) (event.Stats, []event.Diagnostic, error) {
	d := event.NewDecoder(r, opts)
	for {
		rec, err := d.Next()
		if errors.Is(err, io.EOF) {
			return d.Stats(), d.Diagnostics(), nil
		}
		if err != nil {
			return d.Stats(), d.Diagnostics(), err
		}
		p.Apply(&rec.Event, rec.Line.Bytes)
	}
}
