package journal

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

// cursor reads one file of a journal, line by line, from where it stopped:
// valid lines at their positions, quarantined ranges skipped, the first
// unresolved bad line reported. Writers and readers share it, so they
// agree on what the file holds.
type cursor struct {
	path string
	f    io.ReaderAt
	off  int64 // end of the whole lines consumed
	pos  int64 // journalSequence of the last line consumed (the base before any)
	// basePos is the position before the file's first line (0, or what
	// its segment-start record says).
	basePos int64
	// partial is the size of an unfinished final line the last run left
	// unread (0 when the file ended on a newline).
	partial int64
	lastOff int64  // offset of the last valid line consumed
	last    []byte // that line, without newline (kept only when keepLast)
	// keepLast makes run remember the last line (the writer checks it).
	keepLast bool
	// resolving is true while fn sees a quarantine record that resolved
	// the bad range before it (a record that names no range just read is
	// only a record).
	resolving bool
}

// visit is called for each valid line; ctl is its control content or nil.
type visit func(rec event.Record, raw []byte, ctl *controlDetails) error

// run consumes whole lines in [c.off, size). With final false an
// unfinished final line is left unread (a write in progress); with final
// true it is a bad (truncated) line.
//
// A bad line at position p starts a range that a quarantine record may
// resolve: run reads on, counting lines, for a control record naming
// exactly [that line's offset, the record's offset) with that many lines
// at position p+lines. Found, the range is skipped (fn sees the record);
// not found by the end, run stops at the bad line.
//
// Outcomes: nil at the end (c.partial says whether a line was left); a
// *BlockedError for an unresolved bad line (c.off is its offset); fn's
// error as it is; an I/O error.
func (c *cursor) run(size int64, final bool, maxLine int, fn visit) error {
	c.partial = 0
	if size <= c.off {
		return nil
	}
	lr := linereader.New(io.NewSectionReader(c.f, c.off, size-c.off), maxLine)
	lr.SetOffset(c.off, c.pos)
	lr.Follow = !final
	var bad *BlockedError // the unresolved bad line, while looking for its record
	var badLines int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			c.partial = int64(lr.Buffered())
			if bad != nil {
				return bad
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal %s: %w", c.path, err)
		}
		if bad != nil {
			badLines++
			if q := quarantineRecord(c.path, l, bad, badLines); q != nil {
				if err := c.take(l, q, fn); err != nil {
					return err
				}
				bad, badLines = nil, 0
			}
			continue
		}
		if l.Offset == 0 && c.pos == 0 {
			// A file started by rotation goes on from its first record.
			if ctl := segmentRecord(l); ctl != nil {
				c.pos = ctl.Journal.Segment.FirstSequence - 1
				c.basePos = c.pos
			}
		}
		rec, be := checkLine(c.path, l, c.pos+1)
		if be != nil {
			bad, badLines = be, 0
			continue
		}
		var ctl *controlDetails
		if rec.Event.Source == ControlSource {
			ctl = control(&rec.Event)
		}
		if err := c.advance(l, rec, ctl, fn); err != nil {
			return err
		}
	}
}

// take consumes a quarantine record that resolves the range before it.
func (c *cursor) take(l linereader.Line, ctl *controlDetails, fn visit) error {
	rec, _ := checkLine(c.path, l, ctl.Journal.Quarantined.FirstSequence+ctl.Journal.Quarantined.Lines)
	c.resolving = true
	defer func() { c.resolving = false }()
	return c.advance(l, rec, ctl, fn)
}

func (c *cursor) advance(l linereader.Line, rec event.Record, ctl *controlDetails, fn visit) error {
	c.off, c.pos = l.Offset+l.Size, rec.JournalSequence
	c.lastOff = l.Offset
	if c.keepLast {
		c.last = append(c.last[:0], l.Bytes...)
	}
	if fn != nil {
		return fn(rec, l.Bytes, ctl)
	}
	return nil
}

// quarantineRecord returns l's control content when l is the quarantine
// record that resolves the bad range starting at bad with lines lines.
func quarantineRecord(path string, l linereader.Line, bad *BlockedError, lines int64) *controlDetails {
	if l.Problem != "" {
		return nil
	}
	rec, be := checkLine(path, l, bad.Line+lines)
	if be != nil {
		return nil
	}
	ctl := control(&rec.Event)
	if ctl == nil || ctl.Journal.Quarantined == nil {
		return nil
	}
	q := ctl.Journal.Quarantined
	if q.From != bad.Offset || q.To != l.Offset || q.Lines != lines || q.FirstSequence != bad.Line {
		return nil
	}
	return ctl
}

// segmentRecord returns the control content of a segment-start record.
func segmentRecord(l linereader.Line) *controlDetails {
	if l.Problem != "" {
		return nil
	}
	ev, js, err := event.Parse(l.Bytes)
	if err != nil {
		return nil
	}
	ctl := control(&ev)
	if ctl == nil || ctl.Journal.Segment == nil || ctl.Journal.Segment.FirstSequence != js || js < 1 {
		return nil
	}
	return ctl
}

// fileSize is the size of an open file.
func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
