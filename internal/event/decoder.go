package event

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/linereader"
)

// MaxDiagnostics is how many diagnostics a Decoder retains.
const MaxDiagnostics = 32

// MaxDiagnosticText is how many characters of a bad line a diagnostic keeps.
const MaxDiagnosticText = 512

// Diagnostic describes one bad line, without ever holding it whole: its
// text is cut to MaxDiagnosticText characters after the decoder's Redact
// (DecoderOptions), and empty without one.
type Diagnostic struct {
	Line   int64  `json:"line"`
	Offset int64  `json:"offset"`
	Class  Class  `json:"class"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("line %d (byte %d): %s: %s: %s", d.Line, d.Offset, d.Class, d.Reason, d.Text)
}

// Stats counts what a Decoder saw.
type Stats struct {
	Lines   int64           `json:"lines"`
	Valid   int64           `json:"valid"`
	Invalid int64           `json:"invalid"`
	Log     int64           `json:"logLines"`
	ByClass map[Class]int64 `json:"byClass"`
}

// Record is one valid event and where it was read.
type Record struct {
	Line            linereader.Line
	Event           Event
	JournalSequence int64 // 0 when the line had none
}

// DecoderOptions configures a Decoder.
type DecoderOptions struct {
	// MaxLineBytes caps a line (linereader.DefaultMaxBytes when <= 0).
	MaxLineBytes int
	// Mixed counts lines that are not lifecycle events as ordinary log
	// lines instead of errors (a CI log with lifecycle lines in it): plain
	// text and JSON objects without a "schemaVersion" key. A line that
	// starts with '{' and mentions "schemaVersion" is still held to the
	// schema, so a damaged event is never mistaken for a log line.
	Mixed bool
	// Redact is applied to the text of a bad line (and the reason) a
	// diagnostic keeps (redact.Text, from a caller that shows them). The
	// core never redacts on its own: without Redact a diagnostic keeps no
	// text of the line.
	Redact func(string) string
}

// Decoder reads a stream of events, skipping and diagnosing bad lines.
type Decoder struct {
	lr    *linereader.Reader
	opts  DecoderOptions
	stats Stats
	diags []Diagnostic
}

// NewDecoder reads events from r.
func NewDecoder(r io.Reader, opts DecoderOptions) *Decoder {
	return &Decoder{
		lr:    linereader.New(r, opts.MaxLineBytes),
		opts:  opts,
		stats: Stats{ByClass: map[Class]int64{}},
	}
}

// LineReader exposes the underlying reader (to set Follow or an offset).
func (d *Decoder) LineReader() *linereader.Reader { return d.lr }

// Next returns the next valid event. Bad lines are counted and diagnosed,
// never returned. It returns io.EOF at the end of input and read errors as
// they are.
func (d *Decoder) Next() (Record, error) {
	for {
		l, err := d.lr.Next()
		if err != nil {
			return Record{}, err
		}
		d.stats.Lines++
		if d.opts.Mixed && isLogLine(l.Bytes) {
			d.stats.Log++
			continue
		}
		if l.Problem != "" {
			d.bad(l, Class(l.Problem), problemReason(l))
			continue
		}
		ev, js, perr := Parse(l.Bytes)
		if perr != nil {
			d.bad(l, ClassOf(perr), perr.Error())
			continue
		}
		d.stats.Valid++
		return Record{Line: l, Event: ev, JournalSequence: js}, nil
	}
}

// isLogLine reports whether a line in a mixed stream is ordinary output:
// anything that does not claim to be a lifecycle event. A line claims to be
// one when it starts with '{' and mentions "schemaVersion"; such a line is
// held to the schema even when it is damaged. Structured (JSON) log lines
// without that key are log lines.
func isLogLine(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return true
	}
	return !bytes.Contains(t, []byte(`"schemaVersion"`))
}

func problemReason(l linereader.Line) string {
	switch l.Problem {
	case linereader.Oversized:
		return fmt.Sprintf("line is %d bytes, over the line cap", l.Size)
	case linereader.InvalidUTF8:
		i := 0
		for i < len(l.Bytes) {
			r, n := utf8.DecodeRune(l.Bytes[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("invalid UTF-8 at byte %d of the line", i)
	case linereader.Truncated:
		return fmt.Sprintf("final line has no newline (%d bytes); end of input is not completion", l.Size)
	}
	return string(l.Problem)
}

func (d *Decoder) bad(l linereader.Line, class Class, reason string) {
	d.stats.Invalid++
	d.stats.ByClass[class]++
	if len(d.diags) >= MaxDiagnostics {
		return
	}
	d.diags = append(d.diags, Diagnostic{
		Line:   l.Number,
		Offset: l.Offset,
		Class:  class,
		Reason: d.redact(reason),
		Text:   d.diagnosticText(l.Bytes),
	})
}

// redact passes s through the Redact option and cuts it to
// MaxDiagnosticText characters.
func (d *Decoder) redact(s string) string {
	if d.opts.Redact != nil {
		s = d.opts.Redact(s)
	}
	return CutRunes(s, MaxDiagnosticText)
}

// diagnosticText makes raw input safe to show: valid UTF-8, redacted, then
// cut to MaxDiagnosticText characters; empty without a Redact option.
func (d *Decoder) diagnosticText(raw []byte) string {
	return DiagnosticText(raw, d.opts.Redact)
}

// DiagnosticText makes raw input safe to keep in a diagnostic: its first
// bytes as valid UTF-8, passed through redact, cut to MaxDiagnosticText
// characters; empty when redact is nil (the core redacts nothing itself).
func DiagnosticText(raw []byte, redact func(string) string) string {
	if redact == nil {
		return ""
	}
	if len(raw) > linereader.OversizedKeep {
		raw = raw[:linereader.OversizedKeep]
	}
	return CutRunes(redact(strings.ToValidUTF8(string(raw), "\uFFFD")), MaxDiagnosticText)
}

// Stats returns the counts so far.
func (d *Decoder) Stats() Stats {
	s := d.stats
	s.ByClass = make(map[Class]int64, len(d.stats.ByClass))
	for k, v := range d.stats.ByClass {
		s.ByClass[k] = v
	}
	return s
}

// Diagnostics returns the retained diagnostics (at most MaxDiagnostics).
func (d *Decoder) Diagnostics() []Diagnostic {
	return append([]Diagnostic(nil), d.diags...)
}
