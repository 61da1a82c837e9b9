package journal

import (
	"fmt"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// checkLine judges line l at 1-based position pos: a complete line within
// the cap, valid UTF-8, a valid schema-v1 event, and journalSequence equal
// to pos.
func checkLine(path string, l linereader.Line, pos int64) (event.Record, *BlockedError) {
	bad := func(class event.Class, reason string) *BlockedError {
		return &BlockedError{Path: path, Line: pos, Offset: l.Offset, Class: class, size: l.Size,
			Reason: event.CutRunes(redact.Text(reason), event.MaxDiagnosticText)}
	}
	switch class := event.Class(l.Problem); class {
	case "":
	case event.ClassOversized:
		return event.Record{}, bad(class, fmt.Sprintf("line is %d bytes, over the line cap", l.Size))
	case event.ClassInvalidUTF8:
		return event.Record{}, bad(class, "line is not valid UTF-8")
	case event.ClassTruncated:
		return event.Record{}, bad(class, fmt.Sprintf("final line has no newline (%d bytes): a torn or unfinished write", l.Size))
	default:
		return event.Record{}, bad(class, string(l.Problem))
	}
	ev, js, err := event.Parse(l.Bytes)
	if err != nil {
		return event.Record{}, bad(event.ClassOf(err), err.Error())
	}
	if js != pos {
		if js == 0 {
			return event.Record{}, bad(ClassNonMonotonic, fmt.Sprintf("no journalSequence; the line is at position %d", pos))
		}
		return event.Record{}, bad(ClassNonMonotonic, fmt.Sprintf("journalSequence %d at position %d", js, pos))
	}
	return event.Record{Line: l, Event: ev, JournalSequence: js}, nil
}
