package event

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/linereader"
)

// Class names what is wrong with a line.
type Class string

// The classes of bad input, as counted by Decoder and `lcwrap validate`.
const (
	ClassMalformed   Class = "malformed"                   // not a JSON object
	ClassOversized   Class = Class(linereader.Oversized)   // longer than the line cap
	ClassInvalidUTF8 Class = Class(linereader.InvalidUTF8) // not valid UTF-8
	ClassSchema      Class = "schema"                      // JSON object, but not a valid schema-v1 event
	ClassTruncated   Class = Class(linereader.Truncated)   // final line without a newline
)

// Classes lists the classes in report order.
var Classes = []Class{ClassMalformed, ClassOversized, ClassInvalidUTF8, ClassSchema, ClassTruncated}

// FieldError is a schema rejection: which field broke which rule.
type FieldError struct {
	Field string // dotted path, e.g. "lineage.attempt"
	Rule  string // what the field must be
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Rule }

// SyntaxError is a line that is not a JSON object.
type SyntaxError struct {
	Reason string
}

func (e *SyntaxError) Error() string { return "not a JSON object: " + e.Reason }

// ClassOf maps an error returned by Parse to its class.
func ClassOf(err error) Class {
	var fe *FieldError
	if errors.As(err, &fe) {
		return ClassSchema
	}
	return ClassMalformed
}

func fieldErr(field, rule string) error { return &FieldError{Field: field, Rule: rule} }

// typeRule names the JSON type a field must have, for decode errors
// (strings when the field is not named here).
func typeRule(field string) string {
	switch field {
	case "schemaVersion":
		return "must be the integer 1"
	case "sequence", "lineage.attempt":
		return "must be a non-negative integer"
	case "journalSequence":
		return "must be a positive integer"
	case "lineage", "capabilities", "details":
		return "must be an object"
	case "lineage.external":
		return "must be a boolean"
	case "lineage.rootChildId", "lineage.parentChildId", "lineage.adoptedAt":
		return "must be a string"
	case "capabilities.history", "capabilities.heartbeat", "capabilities.snapshot", "capabilities.cancel", "capabilities.terminalCause":
		return "must be known or unknown"
	}
	return "must be a string"
}

// Parse decodes one line (without its newline) and validates it as a
// schema-v1 event. Unknown top-level fields are dropped; journalSequence,
// the journal's own field, is returned separately (0 when absent).
//
// Outcomes: a normalized Event and nil; a *SyntaxError when the line is not
// a JSON object; a *FieldError naming the field and rule it breaks.
func Parse(line []byte) (Event, int64, error) {
	var ev Event
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return ev, 0, &SyntaxError{Reason: "empty line"}
	}
	if trimmed[0] != '{' {
		return ev, 0, &SyntaxError{Reason: "does not start with '{'"}
	}
	var f flat
	if err := decodeFlat(trimmed, &f); err != nil {
		return ev, 0, err
	}
	return f.finish()
}

// finish applies the presence rules, builds the event and validates it.
func (f *flat) finish() (Event, int64, error) {
	var ev Event
	if err := f.required(); err != nil {
		return ev, 0, err
	}
	ev = f.event()
	if err := ev.Validate(); err != nil {
		return ev, 0, err
	}
	var js int64
	if f.has&hasJournalSequence != 0 {
		if f.journalSequence < 1 {
			return ev, 0, fieldErr("journalSequence", typeRule("journalSequence"))
		}
		js = f.journalSequence
	}
	ev.Normalize()
	return ev, js, nil
}

func (f *flat) required() error {
	for _, r := range [...]struct {
		bit   uint32
		field string
	}{
		{hasSchemaVersion, "schemaVersion"}, {hasEventID, "eventId"}, {hasSource, "source"},
		{hasSourceEpoch, "sourceEpoch"}, {hasChildID, "childId"}, {hasLineage, "lineage"},
	} {
		if f.has&r.bit == 0 {
			return fieldErr(r.field, "is required")
		}
	}
	for _, r := range [...]struct {
		bit   uint8
		field string
	}{{hasRoot, "lineage.rootChildId"}, {hasAttempt, "lineage.attempt"}, {hasExternal, "lineage.external"}} {
		if f.lineage.has&r.bit == 0 {
			return fieldErr(r.field, "is required")
		}
	}
	if f.has&hasKind == 0 {
		return fieldErr("kind", "is required")
	}
	if f.has&hasObservedAt == 0 {
		return fieldErr("observedAt", "is required")
	}
	if d := f.details; f.has&hasDetails != 0 && d[0] != '{' && string(d) != "null" {
		return fieldErr("details", typeRule("details"))
	}
	return nil
}

func (f *flat) event() Event {
	ev := Event{
		SchemaVersion: int(f.schemaVersion),
		EventID:       f.eventID,
		Source:        f.source,
		SourceEpoch:   f.sourceEpoch,
		ChildID:       f.childID,
		Lineage: Lineage{
			RootChildID:   f.lineage.rootChildID,
			Attempt:       f.lineage.attempt,
			External:      f.lineage.external,
			ParentChildID: f.lineage.parentChildID,
			AdoptedAt:     f.lineage.adoptedAt,
		},
		Kind:       Kind(f.kind),
		State:      State(f.state),
		ObservedAt: f.observedAt,
		Activity:   f.activity,
	}
	if f.has&hasSequence != 0 {
		ev.Sequence = Int64(f.sequence)
	}
	if f.has&hasDetails != 0 && f.details[0] == '{' {
		ev.Details = f.details
	}
	if f.has&hasCapabilities != 0 {
		ev.Capabilities = Capabilities{
			History:       CapValue(f.caps[0]),
			Heartbeat:     CapValue(f.caps[1]),
			Snapshot:      CapValue(f.caps[2]),
			Cancel:        CapValue(f.caps[3]),
			TerminalCause: CapValue(f.caps[4]),
		}
	}
	return ev
}

// Validate checks e against every schema-v1 rule. Empty capabilities are
// accepted (they normalize to unknown); anything else must be known or
// unknown. It returns the first *FieldError found, in field order.
func (e *Event) Validate() error {
	if e.SchemaVersion != SchemaVersion {
		return fieldErr("schemaVersion", "must be the integer 1")
	}
	for _, f := range [...]struct{ name, v string }{
		{"eventId", e.EventID}, {"source", e.Source}, {"sourceEpoch", e.SourceEpoch}, {"childId", e.ChildID},
	} {
		if f.v == "" {
			return fieldErr(f.name, "must be a non-empty string")
		}
	}
	if e.Lineage.RootChildID == "" {
		return fieldErr("lineage.rootChildId", "must be a non-empty string")
	}
	if e.Lineage.Attempt < 0 {
		return fieldErr("lineage.attempt", "must be a non-negative integer")
	}
	if e.Lineage.AdoptedAt != "" && !ValidTimestamp(e.Lineage.AdoptedAt) {
		return fieldErr("lineage.adoptedAt", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.mmm]Z")
	}
	if !e.Kind.Valid() {
		return fieldErr("kind", "must be one of "+joinKinds())
	}
	if e.State != "" && !e.State.Valid() {
		return fieldErr("state", "must be one of "+joinStates())
	}
	switch e.Kind {
	case KindCreated:
		if e.State != StateCreated {
			return fieldErr("state", "must be created when kind is created")
		}
	case KindStateChanged:
		if e.State == "" {
			return fieldErr("state", "is required when kind is state_changed")
		}
	case KindTerminal:
		if !e.State.Terminal() {
			return fieldErr("state", "must be completed, failed, cancelled or lost when kind is terminal")
		}
	case KindActivity, KindHeartbeat:
		if e.State != "" {
			return fieldErr("state", "must be absent when kind is "+string(e.Kind))
		}
	}
	if !ValidTimestamp(e.ObservedAt) {
		return fieldErr("observedAt", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.mmm]Z")
	}
	if e.Sequence != nil && *e.Sequence < 0 {
		return fieldErr("sequence", "must be a non-negative integer")
	}
	if len(e.Details) > 0 && e.Details[0] != '{' {
		return fieldErr("details", "must be an object")
	}
	if !utf8.ValidString(e.Activity) {
		return fieldErr("activity", "must be valid UTF-8")
	}
	set := e.Capabilities
	for _, name := range CapabilityNames {
		v, _ := set.Get(name)
		if v != "" && !v.Valid() {
			return fieldErr("capabilities."+name, "must be known or unknown")
		}
	}
	return nil
}

// Normalize applies the contract's defaults in place: empty capabilities
// become unknown and activity is cut to MaxActivity characters.
func (e *Event) Normalize() {
	e.Capabilities = e.Capabilities.Normalize()
	e.Activity = CutRunes(e.Activity, MaxActivity)
}

// CutRunes returns s cut to at most n characters (runes).
func CutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func joinKinds() string {
	parts := make([]string, len(Kinds))
	for i, k := range Kinds {
		parts[i] = string(k)
	}
	return strings.Join(parts, "|")
}

func joinStates() string {
	parts := make([]string, len(States))
	for i, s := range States {
		parts[i] = string(s)
	}
	return strings.Join(parts, "|")
}

// ValidTimestamp reports whether s has the strict UTC form
// YYYY-MM-DDTHH:MM:SS[.mmm]Z and names a real calendar time.
func ValidTimestamp(s string) bool {
	switch len(s) {
	case 20:
	case 24:
		if s[19] != '.' || !digits(s[20:23]) {
			return false
		}
	default:
		return false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return false
	}
	if !digits(s[0:4]) || !digits(s[5:7]) || !digits(s[8:10]) || !digits(s[11:13]) || !digits(s[14:16]) || !digits(s[17:19]) {
		return false
	}
	year, month, day := atoi(s[0:4]), atoi(s[5:7]), atoi(s[8:10])
	hour, minute, sec := atoi(s[11:13]), atoi(s[14:16]), atoi(s[17:19])
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return false
	}
	return hour < 24 && minute < 60 && sec < 60
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
