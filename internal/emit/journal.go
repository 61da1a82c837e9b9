package emit

import (
	"errors"
	"sync/atomic"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// maxQueued is how many lines JournalSink holds before WriteEvent waits
// for the journal to catch up (it never drops one).
const maxQueued = 4096

// JournalSink appends events to the journal from a goroutine of its own,
// so that the work being observed never waits for the journal lock:
// WriteEvent queues the line and returns. The goroutine writes whatever is
// queued in one Append (one lock acquisition); a batch holding a terminal
// event asks for an fsync (as the journal's fsync mode allows).
//
// The lines are the emitter's, validated once when they were built
// (Child.Emit): the journal appends them without parsing them again
// (journal.AppendBuilt).
//
// An append that fails ends the sink: the error is returned by the next
// WriteEvent, or by Close when no WriteEvent follows, so the emitter
// reports it once and drops the sink; lines queued after it are not
// written. Close writes what is queued, waits, and closes the journal.
type JournalSink struct {
	j        *journal.Journal
	q        *Queue[queued]
	reported atomic.Bool // the append error was returned by WriteEvent
}

// queued is one line waiting for the journal.
type queued struct {
	line     []byte
	terminal bool
}

// NewJournalSink wraps an open journal and starts its writer.
func NewJournalSink(j *journal.Journal) *JournalSink {
	s := &JournalSink{j: j}
	s.q = NewQueue(maxQueued, nil, false, s.append)
	return s
}

// append writes one batch in one Append; a batch holding a terminal event
// asks for an fsync.
func (s *JournalSink) append(batch []queued) error {
	lines := make([][]byte, len(batch))
	terminal := false
	for i, q := range batch {
		lines[i] = q.line
		terminal = terminal || q.terminal
	}
	_, err := s.j.AppendBuilt(lines, terminal) // built and validated by the emitter: not parsed again
	return err
}

// Name implements Sink.
func (s *JournalSink) Name() string { return "journal " + s.j.Path() }

// WriteEvent implements Sink: it queues line for the writer. It returns the
// error of an earlier append that failed.
func (s *JournalSink) WriteEvent(ev *event.Event, line []byte) error {
	err := s.q.Put(queued{line: append([]byte(nil), line...), terminal: ev.Kind == event.KindTerminal})
	switch {
	case errors.Is(err, ErrQueueClosed):
		return errors.New("journal sink is closed")
	case err != nil:
		s.reported.Store(true)
	}
	return err
}

// Close implements Sink: it writes what is queued, waits for it, and
// closes the journal. It returns the append error no WriteEvent returned
// yet, and the error of closing the journal.
func (s *JournalSink) Close() error {
	_, err := s.q.Close()
	if s.reported.Load() {
		err = nil // journal errors name the journal already
	}
	return errors.Join(err, s.j.Close())
}
