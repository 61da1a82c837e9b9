package reconcile

import (
	"errors"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Writer appends the events of one source (a reconciler, a canceller) to
// the journal a Tracker reads, with a sourceEpoch of its own, so that its
// sequences never collide with another writer's. It opens the journal on
// its first append and keeps it, with one emitter, until Close: each
// append builds its lines and writes them in one journal Append, on the
// caller's goroutine.
type Writer struct {
	t    *projection.Tracker
	opts journal.Options
	now  func() time.Time

	mu     sync.Mutex
	source string
	em     *emit.Emitter    // builds the events (no sinks); a new one per sourceEpoch
	next   map[string]int64 // last sequence appended per child
	j      *journal.Journal // nil until the first append, and after Close
}

// NewWriter appends events of source to the journal t tracks, with opts,
// at the times now returns.
func NewWriter(t *projection.Tracker, opts journal.Options, now func() time.Time, source string) *Writer {
	w := &Writer{t: t, opts: opts, now: now, source: source}
	w.newEpoch()
	return w
}

// newEpoch moves to a fresh sourceEpoch, with its sequences from 1.
func (w *Writer) newEpoch() {
	w.em = emit.New(emit.Options{Source: w.source, Now: w.now})
	w.next = map[string]int64{}
}

// Pending is an event to append for a child.
type Pending struct {
	projection.Target
	Spec emit.Spec
}

// Append writes events to the journal, each with its child's lineage and
// capabilities, then reads the journal back so the tracker includes them.
// When anything fails it moves to a new sourceEpoch, so that no sequence
// that may have reached the journal is used twice.
//
// Outcomes: nil once they are in the journal; the error of an event that
// does not build (nothing was written); the journal's open or append
// errors (a *journal.BlockedError among them); a read error other than a
// blocked journal.
func (w *Writer) Append(events []Pending) error {
	if len(events) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.j == nil {
		j, err := journal.Open(w.t.Path(), w.opts)
		if err != nil {
			return err
		}
		w.j = j
	}
	lines := make([][]byte, 0, len(events))
	terminal := false
	next := map[string]int64{}
	for _, ev := range events {
		seq := w.next[ev.ChildID] + next[ev.ChildID] + 1
		c := w.em.Child(ev.ChildID, ev.Lineage, event.Profile{Name: "recorded", Set: ev.Capabilities})
		c.SetNextSequence(seq)
		_, line, err := c.Build(ev.Spec)
		if err != nil {
			return err // nothing was written: the sequences stay unused
		}
		lines = append(lines, line)
		next[ev.ChildID]++
		terminal = terminal || ev.Spec.Kind == event.KindTerminal
	}
	if _, err := w.j.Append(lines, terminal); err != nil {
		w.newEpoch()
		return err
	}
	for id, n := range next {
		w.next[id] += n
	}
	if err := w.t.Refresh(); err != nil && !errors.Is(err, journal.ErrBlocked) {
		return err
	}
	return nil
}

// Close releases the journal (when an append opened it).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.j == nil {
		return nil
	}
	err := w.j.Close()
	w.j = nil
	return err
}
