package emit

import (
	"errors"
	"sync"

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
	j *journal.Journal

	mu       sync.Mutex
	cond     *sync.Cond // signals the writer and waiting WriteEvent calls
	queue    [][]byte
	terminal bool // the queue holds a terminal event
	closing  bool
	err      error // the append that ended the sink
	reported bool  // err was returned by WriteEvent
	done     chan struct{}
}

// NewJournalSink wraps an open journal and starts its writer.
func NewJournalSink(j *journal.Journal) *JournalSink {
	s := &JournalSink{j: j, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

// Name implements Sink.
func (s *JournalSink) Name() string { return "journal " + s.j.Path() }

// WriteEvent implements Sink: it queues line for the writer. It returns the
// error of an earlier append that failed.
func (s *JournalSink) WriteEvent(ev *event.Event, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) >= maxQueued && s.err == nil {
		s.cond.Wait()
	}
	if s.err != nil {
		s.reported = true
		return s.err
	}
	if s.closing {
		return errors.New("journal sink is closed")
	}
	s.queue = append(s.queue, append([]byte(nil), line...))
	s.terminal = s.terminal || ev.Kind == event.KindTerminal
	s.cond.Broadcast()
	return nil
}

func (s *JournalSink) run() {
	defer close(s.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.queue) == 0 && !s.closing {
			s.cond.Wait()
		}
		if len(s.queue) == 0 || s.err != nil {
			return
		}
		batch, terminal := s.queue, s.terminal
		s.queue, s.terminal = nil, false
		s.cond.Broadcast() // room for waiting WriteEvent calls
		s.mu.Unlock()
		_, err := s.j.AppendBuilt(batch, terminal) // built and validated by the emitter: not parsed again
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.queue = nil
		}
		s.cond.Broadcast()
	}
}

// Close implements Sink: it writes what is queued, waits for it, and
// closes the journal. It returns the append error no WriteEvent returned
// yet, and the error of closing the journal.
func (s *JournalSink) Close() error {
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
	var err error
	if s.err != nil && !s.reported {
		err = s.err // journal errors name the journal already
	}
	return errors.Join(err, s.j.Close())
}
