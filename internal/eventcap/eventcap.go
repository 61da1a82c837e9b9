package eventcap

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Sink keeps every event written, with its line. Safe for concurrent use.
type Sink struct {
	mu    sync.Mutex
	evs   []event.Event
	lines [][]byte
}

// Name implements event.Sink.
func (c *Sink) Name() string { return "capture" }

// WriteEvent implements event.Sink: it keeps a copy of ev and its line.
func (c *Sink) WriteEvent(ev *event.Event, line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, *ev)
	c.lines = append(c.lines, append([]byte(nil), line...))
	return nil
}

// Close implements event.Sink.
func (c *Sink) Close() error { return nil }

// Events returns a copy of the events written so far.
func (c *Sink) Events() []event.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event.Event(nil), c.evs...)
}

// Check validates and projects every event written so far, failing the
// test on any refusal, and returns the projection.
func (c *Sink) Check(t testing.TB) *projection.Projection {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	p := projection.New()
	for i := range c.evs {
		if err := c.evs[i].Validate(); err != nil {
			t.Fatalf("event %d invalid: %v\n%s", i, err, c.lines[i])
		}
		if out := p.Apply(&c.evs[i], c.lines[i]); out.Result != projection.Applied {
			t.Fatalf("event %d: %v %v\n%s", i, out.Result, out.Err, c.lines[i])
		}
	}
	return p
}

// Summary is "kind state activity" of an event, blanks folded.
func Summary(ev event.Event) string {
	return strings.Join(strings.Fields(string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity), " ")
}

// Of lists the summaries of one child's events, in order.
func (c *Sink) Of(childID string) []string {
	var out []string
	for _, ev := range c.Events() {
		if ev.ChildID == childID {
			out = append(out, Summary(ev))
		}
	}
	return out
}

// Summaries lists the summaries of every event, one a line.
func (c *Sink) Summaries() string {
	var b strings.Builder
	for _, ev := range c.Events() {
		b.WriteString(Summary(ev) + "\n")
	}
	return b.String()
}

// All returns every line written, joined.
func (c *Sink) All() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(bytes.Join(c.lines, nil))
}
