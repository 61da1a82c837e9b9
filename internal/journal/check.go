package journal

import (
	"fmt"

	"github.com/lcwrap/lcwrap/internal/jsonl"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// checkLine judges line l at 1-based position pos: a complete line within
// the cap, valid UTF-8, a valid schema-v1 event, and journalSequence equal
// to pos.
func checkLine(path string, l jsonl.Line, pos int64) (jsonl.Record, *BlockedError) {
	bad := func(class jsonl.Class, reason string) *BlockedError {
		return &BlockedError{Path: path, Line: pos, Offset: l.Offset, Class: class, size: l.Size,
			Reason: jsonl.CutRunes(redact.Text(reason), jsonl.MaxDiagnosticText)}
	}
	switch l.Problem {
	case "":
	case jsonl.ClassOversized:
		return jsonl.Record{}, bad(l.Problem, fmt.Sprintf("line is %d bytes, over the line cap", l.Size))
	case jsonl.ClassInvalidUTF8:
		return jsonl.Record{}, bad(l.Problem, "line is not valid UTF-8")
	case jsonl.ClassTruncated:
		return jsonl.Record{}, bad(l.Problem, fmt.Sprintf("final line has no newline (%d bytes): a torn or unfinished write", l.Size))
	default:
		return jsonl.Record{}, bad(l.Problem, string(l.Problem))
	}
	ev, js, err := jsonl.Parse(l.Bytes)
	if err != nil {
		return jsonl.Record{}, bad(jsonl.ClassOf(err), err.Error())
	}
	if js != pos {
		if js == 0 {
			return jsonl.Record{}, bad(ClassNonMonotonic, fmt.Sprintf("no journalSequence; the line is at position %d", pos))
		}
		return jsonl.Record{}, bad(ClassNonMonotonic, fmt.Sprintf("journalSequence %d at position %d", js, pos))
	}
	return jsonl.Record{Line: l, Event: ev, JournalSequence: js}, nil
}
