package event

import (
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the event decoder: a single pass over one line that checks
// JSON syntax and fills the schema fields, without reflection. It follows
// encoding/json's semantics for everything the schema can observe — a
// syntax error anywhere wins over type errors, the first type error in
// document order is the one reported, null leaves a field absent, a later
// duplicate key overrides an earlier one, invalid UTF-8 and lone surrogates
// in strings become U+FFFD — with one deliberate difference: field names
// match exactly (encoding/json also accepts "EVENTID" for "eventId").
// The differential fuzz test in decode_test.go holds it to that.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// Presence bits of the top-level fields.
const (
	hasSchemaVersion uint32 = 1 << iota
	hasEventID
	hasSource
	hasSourceEpoch
	hasChildID
	hasLineage
	hasKind
	hasState
	hasObservedAt
	hasSequence
	hasActivity
	hasDetails
	hasCapabilities
	hasJournalSequence
)

// Presence bits of the lineage fields.
const (
	hasRoot uint8 = 1 << iota
	hasAttempt
	hasExternal
	hasParent
	hasAdoptedAt
)

type flatLineage struct {
	has           uint8
	rootChildID   string
	attempt       int64
	external      bool
	parentChildID string
	adoptedAt     string
}

// flat holds a decoded line: every field with a presence bit, the way
// encoding/json would fill pointer fields.
type flat struct {
	has             uint32
	schemaVersion   int64
	eventID         string
	source          string
	sourceEpoch     string
	childID         string
	lineage         flatLineage
	kind            string
	state           string
	observedAt      string
	sequence        int64
	activity        string
	details         []byte // the raw value, as encoding/json's RawMessage
	caps            [5]string
	capsHas         uint8
	journalSequence int64
}

type decoder struct {
	b       []byte
	i       int
	depth   int
	typeErr *FieldError // the first type error, in document order
}

type syntaxErr struct {
	msg string
	off int
}

// decodeFlat decodes one trimmed line that starts with '{'. It returns a
// *SyntaxError or the first *FieldError for a wrong type.
func decodeFlat(b []byte, f *flat) error {
	d := decoder{b: b}
	if err := d.object(func(key []byte) error { return d.topField(key, f) }); err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return d.syntax("invalid character " + quoteChar(d.b[d.i]) + " after top-level value")
	}
	if d.typeErr != nil {
		return d.typeErr
	}
	return nil
}

func (d *decoder) syntax(msg string) error {
	return &SyntaxError{Reason: msg + " at byte " + strconv.Itoa(d.i+1)}
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (d *decoder) typeError(field string) {
	if d.typeErr != nil {
		return
	}
	d.typeErr = &FieldError{Field: field, Rule: typeRule(field)}
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// object parses an object, calling field for each key with d.i at the
// start of the value (after the colon and whitespace); field must consume
// the value.
func (d *decoder) object(field func(key []byte) error) error {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return d.syntax("expected an object")
	}
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		d.depth--
		return nil
	}
	for {
		d.ws()
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of JSON input")
		}
		if d.b[d.i] != '"' {
			return d.syntax("invalid character " + quoteChar(d.b[d.i]) + " looking for beginning of object key string")
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of JSON input")
		}
		if d.b[d.i] != ':' {
			return d.syntax("invalid character " + quoteChar(d.b[d.i]) + " after object key")
		}
		d.i++
		d.ws()
		if err := field(key); err != nil {
			return err
		}
		if done, err := d.after('}', "object key:value pair"); done || err != nil {
			return err
		}
	}
}

func (d *decoder) topField(key []byte, f *flat) error {
	switch string(key) {
	case "schemaVersion":
		return field(d, &f.schemaVersion, &f.has, hasSchemaVersion, "schemaVersion", d.intValue)
	case "eventId":
		return field(d, &f.eventID, &f.has, hasEventID, "eventId", d.strValue)
	case "source":
		return field(d, &f.source, &f.has, hasSource, "source", d.strValue)
	case "sourceEpoch":
		return field(d, &f.sourceEpoch, &f.has, hasSourceEpoch, "sourceEpoch", d.strValue)
	case "childId":
		return field(d, &f.childID, &f.has, hasChildID, "childId", d.strValue)
	case "lineage":
		return d.lineage(f)
	case "kind":
		return field(d, &f.kind, &f.has, hasKind, "kind", d.strValue)
	case "state":
		return field(d, &f.state, &f.has, hasState, "state", d.strValue)
	case "observedAt":
		return field(d, &f.observedAt, &f.has, hasObservedAt, "observedAt", d.strValue)
	case "sequence":
		return field(d, &f.sequence, &f.has, hasSequence, "sequence", d.intValue)
	case "activity":
		return field(d, &f.activity, &f.has, hasActivity, "activity", d.strValue)
	case "details":
		start := d.i
		if err := d.skip(); err != nil {
			return err
		}
		f.details = append(f.details[:0], d.b[start:d.i]...)
		f.has |= hasDetails
		return nil
	case "capabilities":
		return d.capabilities(f)
	case "journalSequence":
		return field(d, &f.journalSequence, &f.has, hasJournalSequence, "journalSequence", d.intValue)
	}
	return d.skip()
}

func (d *decoder) lineage(f *flat) error {
	switch d.peekKind() {
	case 'n':
		f.has &^= hasLineage
		f.lineage = flatLineage{}
		return d.skip()
	case '{':
	default:
		d.typeError("lineage")
		return d.skip()
	}
	if f.has&hasLineage == 0 {
		f.lineage = flatLineage{}
		f.has |= hasLineage
	}
	l := &f.lineage
	return d.object(func(key []byte) error {
		switch string(key) {
		case "rootChildId":
			return field(d, &l.rootChildID, &l.has, hasRoot, "lineage.rootChildId", d.strValue)
		case "attempt":
			return field(d, &l.attempt, &l.has, hasAttempt, "lineage.attempt", d.intValue)
		case "external":
			return d.boolField8(&l.external, &l.has, hasExternal, "lineage.external")
		case "parentChildId":
			return field(d, &l.parentChildID, &l.has, hasParent, "lineage.parentChildId", d.strValue)
		case "adoptedAt":
			return field(d, &l.adoptedAt, &l.has, hasAdoptedAt, "lineage.adoptedAt", d.strValue)
		}
		return d.skip()
	})
}

var capFields = [5]string{"capabilities.history", "capabilities.heartbeat", "capabilities.snapshot", "capabilities.cancel", "capabilities.terminalCause"}

func (d *decoder) capabilities(f *flat) error {
	switch d.peekKind() {
	case 'n':
		f.has &^= hasCapabilities
		f.caps = [5]string{}
		f.capsHas = 0
		return d.skip()
	case '{':
	default:
		d.typeError("capabilities")
		return d.skip()
	}
	if f.has&hasCapabilities == 0 {
		f.caps = [5]string{}
		f.capsHas = 0
		f.has |= hasCapabilities
	}
	return d.object(func(key []byte) error {
		idx := -1
		switch string(key) {
		case "history":
			idx = 0
		case "heartbeat":
			idx = 1
		case "snapshot":
			idx = 2
		case "cancel":
			idx = 3
		case "terminalCause":
			idx = 4
		}
		if idx < 0 {
			return d.skip()
		}
		return field(d, &f.caps[idx], &f.capsHas, 1<<idx, capFields[idx], d.strValue)
	})
}

// peekKind returns the first byte of the value at d.i ('n' for null, '{',
// '[', '"', 't'/'f', or a number's first byte), or 0 at the end.
func (d *decoder) peekKind() byte {
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// isNull consumes a null literal if one is at d.i.
func (d *decoder) isNull() (bool, error) {
	if d.peekKind() != 'n' {
		return false, nil
	}
	return true, d.literal("null")
}

func (d *decoder) strValue(field string) (string, bool, error) {
	if d.peekKind() != '"' {
		d.typeError(field)
		return "", false, d.skip()
	}
	raw, err := d.str()
	if err != nil {
		return "", false, err
	}
	return intern(raw), true, nil
}

func (d *decoder) intValue(field string) (int64, bool, error) {
	c := d.peekKind()
	if c != '-' && (c < '0' || c > '9') {
		d.typeError(field)
		return 0, false, d.skip()
	}
	start := d.i
	if err := d.number(); err != nil {
		return 0, false, err
	}
	n, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	if err != nil {
		d.typeError(field)
		return 0, false, nil
	}
	return n, true, nil
}

// presence is a set of presence bits (flat.has, flatLineage.has, ...).
type presence interface{ ~uint8 | ~uint32 }

// field decodes one typed field the way encoding/json fills a pointer:
// null clears it (absent), a value of the right type sets it and its
// presence bit, a value of another type is a type error and leaves it.
func field[T any, B presence](d *decoder, dst *T, has *B, bit B, name string, value func(string) (T, bool, error)) error {
	if null, err := d.isNull(); null || err != nil {
		var zero T
		*has &^= bit
		*dst = zero
		return err
	}
	v, ok, err := value(name)
	if ok {
		*dst, *has = v, *has|bit
	}
	return err
}

func (d *decoder) boolField8(dst *bool, has *uint8, bit uint8, field string) error {
	switch d.peekKind() {
	case 'n':
		*has &^= bit
		*dst = false
		return d.literal("null")
	case 't':
		*dst, *has = true, *has|bit
		return d.literal("true")
	case 'f':
		*dst, *has = false, *has|bit
		return d.literal("false")
	}
	d.typeError(field)
	return d.skip()
}

func (d *decoder) literal(lit string) error {
	for j := 0; j < len(lit); j++ {
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of JSON input")
		}
		if d.b[d.i] != lit[j] {
			return d.syntax("invalid character " + quoteChar(d.b[d.i]) + " in literal " + lit)
		}
		d.i++
	}
	return nil
}

// skip consumes any JSON value, checking its syntax.
func (d *decoder) skip() error {
	if d.i >= len(d.b) {
		return d.syntax("unexpected end of JSON input")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		return d.array()
	case c == '"':
		_, err := d.str()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return d.syntax("invalid character " + quoteChar(c) + " looking for beginning of value")
	}
}

func (d *decoder) array() error {
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		d.depth--
		return nil
	}
	for {
		d.ws()
		if err := d.skip(); err != nil {
			return err
		}
		if done, err := d.after(']', "array element"); done || err != nil {
			return err
		}
	}
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() error {
	b := d.b
	if d.i < len(b) && b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i >= len(b):
		return d.syntax("unexpected end of JSON input")
	case b[d.i] == '0':
		d.i++
	case b[d.i] >= '1' && b[d.i] <= '9':
		for d.i < len(b) && b[d.i] >= '0' && b[d.i] <= '9' {
			d.i++
		}
	default:
		return d.syntax("invalid character " + quoteChar(b[d.i]) + " in numeric literal")
	}
	if d.i < len(b) && b[d.i] == '.' {
		d.i++
		if d.i >= len(b) {
			return d.syntax("unexpected end of JSON input")
		}
		if b[d.i] < '0' || b[d.i] > '9' {
			return d.syntax("invalid character " + quoteChar(b[d.i]) + " after decimal point in numeric literal")
		}
		for d.i < len(b) && b[d.i] >= '0' && b[d.i] <= '9' {
			d.i++
		}
	}
	if d.i < len(b) && (b[d.i] == 'e' || b[d.i] == 'E') {
		d.i++
		if d.i < len(b) && (b[d.i] == '+' || b[d.i] == '-') {
			d.i++
		}
		if d.i >= len(b) {
			return d.syntax("unexpected end of JSON input")
		}
		if b[d.i] < '0' || b[d.i] > '9' {
			return d.syntax("invalid character " + quoteChar(b[d.i]) + " in exponent of numeric literal")
		}
		for d.i < len(b) && b[d.i] >= '0' && b[d.i] <= '9' {
			d.i++
		}
	}
	return nil
}

// str consumes a string at d.i (which holds '"') and returns its decoded
// bytes. They alias the input when no unescaping was needed.
func (d *decoder) str() ([]byte, error) {
	b := d.b
	start := d.i + 1
	escaped, ascii := false, true
	j := start
	for {
		if j >= len(b) {
			d.i = j
			return nil, d.syntax("unexpected end of JSON input")
		}
		c := b[j]
		switch {
		case c == '"':
			d.i = j + 1
			if !escaped && (ascii || utf8.Valid(b[start:j])) {
				return b[start:j], nil
			}
			return unquote(b[start:j]), nil
		case c == '\\':
			escaped = true
			j++
			if j >= len(b) {
				d.i = j
				return nil, d.syntax("unexpected end of JSON input")
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				j++
				for k := 0; k < 4; k++ {
					if j >= len(b) {
						d.i = j
						return nil, d.syntax("unexpected end of JSON input")
					}
					if !isHex(b[j]) {
						d.i = j
						return nil, d.syntax("invalid character " + quoteChar(b[j]) + " in \\u hexadecimal character escape")
					}
					j++
				}
			default:
				d.i = j
				return nil, d.syntax("invalid character " + quoteChar(b[j]) + " in string escape code")
			}
		case c < 0x20:
			d.i = j
			return nil, d.syntax("invalid character " + quoteChar(c) + " in string literal")
		case c >= utf8.RuneSelf:
			ascii = false
			j++
		default:
			j++
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote decodes the body of a syntactically valid string the way
// encoding/json does: escapes resolved, invalid UTF-8 and lone surrogates
// replaced with U+FFFD.
func unquote(s []byte) []byte {
	out := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							r += 6
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, rr)
				continue
			default: // '"', '\\', '/'
				out = append(out, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			out = utf8.AppendRune(out, rr)
		}
	}
	return out
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r*16 + rune(c)
	}
	return r
}

// intern returns a constant for the strings every event repeats, so that
// decoding them allocates nothing.
func intern(b []byte) string {
	switch string(b) {
	case "known":
		return "known"
	case "unknown":
		return "unknown"
	case "lcwrap":
		return "lcwrap"
	case "created":
		return "created"
	case "starting":
		return "starting"
	case "running":
		return "running"
	case "waiting":
		return "waiting"
	case "completed":
		return "completed"
	case "failed":
		return "failed"
	case "cancelled":
		return "cancelled"
	case "lost":
		return "lost"
	case "state_changed":
		return "state_changed"
	case "activity":
		return "activity"
	case "heartbeat":
		return "heartbeat"
	case "terminal":
		return "terminal"
	case "reconciliation":
		return "reconciliation"
	case "diagnostic":
		return "diagnostic"
	}
	return string(b)
}

// after reads what follows a member of an object or array: a comma (more
// members follow) or the closing byte (done, one level up).
func (d *decoder) after(closing byte, what string) (done bool, err error) {
	d.ws()
	if d.i >= len(d.b) {
		return false, d.syntax("unexpected end of JSON input")
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return false, nil
	case closing:
		d.i++
		d.depth--
		return true, nil
	}
	return false, d.syntax("invalid character " + quoteChar(d.b[d.i]) + " after " + what)
}
