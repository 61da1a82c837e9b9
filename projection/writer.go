package projection

import (
	"errors"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/capabilities"
	"github.com/lcwrap/lcwrap/emit"
	"github.com/lcwrap/lcwrap/journal"
)

// writer appends the events of one source (a reconciler, a canceller) to
// the journal a Tracker reads, with a sourceEpoch of its own, so that its
// sequences never collide with another writer's.
type writer struct {
	t      *Tracker
	opts   journal.Options
	now    func() time.Time
	source string

	mu    sync.Mutex
	epoch string
	next  map[string]int64 // last sequence appended per child
}

func newWriter(t *Tracker, opts journal.Options, now func() time.Time, source string) *writer {
	return &writer{t: t, opts: opts, now: now, source: source, epoch: emit.NewEpoch(), next: map[string]int64{}}
}

// pending is an event to append for a child.
type pending struct {
	target
	spec emit.Spec
}

// append writes events through the journal, each with the child's
// lineage and capabilities, waits until they are written, then reads the
// journal back so the projection includes them. When anything fails it
// moves to a new sourceEpoch, so that no sequence that may have reached the
// journal is used twice.
func (w *writer) append(events []pending) error {
	if len(events) == 0 {
		return nil
	}
	j, err := journal.Open(w.t.Path(), w.opts)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var sinkErr error
	em := emit.New(emit.Options{Source: w.source, Epoch: w.epoch, Now: w.now,
		OnSinkError: func(_ string, err error) { sinkErr = err }}, emit.NewJournalSink(j))
	for _, ev := range events {
		c := em.Child(ev.ChildID, ev.lineage, capabilities.Profile{Name: "recorded", Set: ev.caps})
		c.SetNextSequence(w.next[ev.ChildID] + 1)
		if _, err = c.Emit(ev.spec); err != nil {
			break
		}
		w.next[ev.ChildID]++
	}
	if err = errors.Join(err, em.Close(), sinkErr); err != nil {
		w.epoch, w.next = emit.NewEpoch(), map[string]int64{}
		return err
	}
	if err := w.t.Refresh(); err != nil && !errors.Is(err, journal.ErrBlocked) {
		return err
	}
	return nil
}
