package event

import "time"

// TimeFormat is the strict observedAt form: UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Timestamp formats t in the strict UTC form.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Sink receives events as whole lines.
type Sink interface {
	// Name identifies the sink in warnings ("stderr", "file:/tmp/x").
	Name() string
	// WriteEvent writes line (the encoded event and its newline) with a
	// single write. ev is the event the line encodes; emit validated it
	// before encoding it, so a sink has no need to parse line again.
	WriteEvent(ev *Event, line []byte) error
	// Close releases the sink. Closing a sink that wraps a stream the
	// caller owns (stdout, stderr) leaves the stream open.
	Close() error
}
