package journal

import (
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/lazy"
)

// ControlSource is the source of the journal's own records: schema-v1
// diagnostic events that every reader of the format accepts, which lcwrap
// readers act on instead of passing them on as a child's events.
const ControlSource = "lcwrap-journal"

// controlChild is the childId of control records.
const controlChild = "lcwrap-journal"

// Quarantined describes a bad byte range left in place: [From, To) of the
// file holding the record, To being the record's own offset. The range
// holds Lines lines (each ends with a newline; the last was terminated by
// the writer that quarantined it, with "#\n"); they keep the positions FirstSequence
// .. FirstSequence+Lines-1 and carry no event, and the record itself is
// at FirstSequence+Lines.
type Quarantined struct {
	From          int64  `json:"from"`
	To            int64  `json:"to"`
	Lines         int64  `json:"lines"`
	FirstSequence int64  `json:"firstSequence"`
	Class         string `json:"class"`
	Reason        string `json:"reason"`
	// Copy is the base name of the file holding a copy of the range for
	// people ("" when the copy could not be made: the range itself is
	// still in place).
	Copy string `json:"copy,omitempty"`
	// By is "repair" (lcwrap journal repair) or "heal" (the next lock
	// holder terminating a dead writer's torn final line).
	By string `json:"by"`
	// Terminated is true when the writer appended "#\n" to end the range
	// (a torn final line had no newline; the '#' keeps it from reading as
	// a whole line).
	Terminated bool `json:"terminated,omitempty"`
}

// SegmentStart is the first record of every file started by rotation: the
// file before it was sealed under the name Sealed, and journalSequence
// goes on at FirstSequence (this record's own).
type SegmentStart struct {
	Sealed        string `json:"sealed"`
	FirstSequence int64  `json:"firstSequence"`
}

// controlDetails is the details object of a control record.
type controlDetails struct {
	Journal struct {
		Quarantined *Quarantined  `json:"quarantined,omitempty"`
		Segment     *SegmentStart `json:"segment,omitempty"`
	} `json:"journal"`
}

// control returns the control content of a record, nil for any other.
func control(ev *event.Event) *controlDetails {
	if ev.Source != ControlSource || ev.Kind != event.KindDiagnostic || ev.ChildID != controlChild || len(ev.Details) == 0 {
		return nil
	}
	var d controlDetails
	if json.Unmarshal(ev.Details, &d) != nil || (d.Journal.Quarantined == nil) == (d.Journal.Segment == nil) {
		return nil
	}
	return &d
}

// IsControl reports whether rec is one of the journal's own records.
func IsControl(rec *event.Record) bool { return control(&rec.Event) != nil }

// controlLine encodes a control record (without journalSequence).
func controlLine(d controlDetails) []byte {
	var raw [8]byte
	random(raw[:])
	details, _ := json.Marshal(d)
	ev := event.Event{
		SchemaVersion: event.SchemaVersion,
		EventID:       "journal-" + hex.EncodeToString(raw[:]),
		Source:        ControlSource,
		SourceEpoch:   controlEpoch.Get(),
		ChildID:       controlChild,
		Lineage:       event.Lineage{RootChildID: controlChild},
		Kind:          event.KindDiagnostic,
		ObservedAt:    time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		Details:       details,
		Capabilities:  event.AllUnknown(),
	}
	b, _ := ev.Marshal()
	return b
}

// controlEpoch is this process's sourceEpoch for control records, made
// on first use: package initialisation is on every process's start-up
// path.
var controlEpoch = lazy.Value[string]{Make: func() string {
	var raw [8]byte
	random(raw[:])
	return hex.EncodeToString(raw[:])
}}
