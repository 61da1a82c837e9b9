package emit

import (
	"github.com/lcwrap/lcwrap/journal"
	"github.com/lcwrap/lcwrap/jsonl"
)

// JournalSink appends events to the journal. A terminal event asks the
// journal to flush to stable storage (as its fsync mode allows).
type JournalSink struct {
	j *journal.Journal
}

// NewJournalSink wraps an open journal.
func NewJournalSink(j *journal.Journal) *JournalSink { return &JournalSink{j: j} }

// Name implements Sink.
func (s *JournalSink) Name() string { return "journal " + s.j.Path() }

// WriteEvent implements Sink.
func (s *JournalSink) WriteEvent(ev *jsonl.Event, line []byte) error {
	_, err := s.j.Append([][]byte{line}, ev.Kind == jsonl.KindTerminal)
	return err
}

// Close implements Sink.
func (s *JournalSink) Close() error { return s.j.Close() }
