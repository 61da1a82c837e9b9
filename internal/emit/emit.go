package emit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// DefaultSource is the source name lcwrap uses unless told otherwise.
const DefaultSource = "lcwrap"

// NewEpoch returns a fresh sourceEpoch: the start time in milliseconds
// (base 36) and random characters, so two lcwrap processes never share one.
func NewEpoch() string {
	return strconv.FormatInt(time.Now().UnixMilli(), 36) + "-" + randomString(8)
}

// NewChildID returns a fresh child id that starts with a readable hint (the
// command's base name, say), e.g. "make-k3x9qa2m".
func NewChildID(hint string) string {
	if i := strings.LastIndexByte(hint, '/'); i >= 0 {
		hint = hint[i+1:]
	}
	var b strings.Builder
	for _, r := range hint {
		if b.Len() >= 24 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		}
	}
	h := strings.Trim(b.String(), "-_.")
	if h == "" {
		h = "child"
	}
	return h + "-" + randomString(8)
}

const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"

func randomString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// Options configures an Emitter.
type Options struct {
	// Source is the source name (DefaultSource when empty).
	Source string
	// Epoch is the sourceEpoch (NewEpoch() when empty). Only producers that
	// keep their own sequence space across processes set it.
	Epoch string
	// OnSinkError is called once per failing sink, with the sink's name.
	OnSinkError func(sink string, err error)
	// Now replaces the clock (tests).
	Now func() time.Time
}

// Emitter writes events of one source to a set of sinks.
type Emitter struct {
	mu      sync.Mutex
	source  string
	epoch   string
	sinks   []*sinkState
	onError func(string, error)
	now     func() time.Time
	failed  []error
	// borrowed: the sinks belong to another Emitter (WithSource).
	borrowed bool
}

type sinkState struct {
	event.Sink
	disabled bool
}

// New returns an Emitter writing to sinks.
func New(opts Options, sinks ...event.Sink) *Emitter {
	e := &Emitter{source: opts.Source, epoch: opts.Epoch, onError: opts.OnSinkError, now: opts.Now}
	if e.source == "" {
		e.source = DefaultSource
	}
	if e.epoch == "" {
		e.epoch = NewEpoch()
	}
	if e.now == nil {
		e.now = time.Now
	}
	for _, s := range sinks {
		if s != nil {
			e.sinks = append(e.sinks, &sinkState{Sink: s})
		}
	}
	return e
}

// Source returns the source name.
func (e *Emitter) Source() string { return e.source }

// Silent reports whether the emitter has no sink at all (--no-journal
// and no --emit): events would go nowhere, so a caller may skip building
// them.
func (e *Emitter) Silent() bool { return len(e.sinks) == 0 }

// Epoch returns the sourceEpoch.
func (e *Emitter) Epoch() string { return e.epoch }

// Now returns the emitter's clock reading.
func (e *Emitter) Now() time.Time { return e.now() }

// SinkErrors returns the errors of sinks that failed and were disabled.
func (e *Emitter) SinkErrors() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.failed...)
}

// Close closes every sink and returns their errors joined.
func (e *Emitter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.borrowed {
		return nil
	}
	var errs []error
	for _, s := range e.sinks {
		if err := s.Close(); err != nil && !s.disabled {
			if !strings.HasPrefix(err.Error(), s.Name()) {
				err = fmt.Errorf("%s: %w", s.Name(), err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Emitter) write(ev *event.Event, line []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.sinks {
		if s.disabled {
			continue
		}
		if err := s.WriteEvent(ev, line); err != nil {
			s.disabled = true
			if !strings.HasPrefix(err.Error(), s.Name()) {
				err = fmt.Errorf("%s: %w", s.Name(), err)
			}
			e.failed = append(e.failed, err)
			if e.onError != nil {
				e.onError(s.Name(), err)
			}
		}
	}
}

// Child numbers and writes the events of one lifecycle.
type Child struct {
	e       *Emitter
	mu      sync.Mutex
	id      string
	lineage event.Lineage
	caps    event.Capabilities
	seq     int64
}

// Child returns the event builder for one lifecycle. The profile is the
// only way its capabilities are chosen.
func (e *Emitter) Child(id string, lineage event.Lineage, profile event.Profile) *Child {
	if lineage.RootChildID == "" {
		lineage.RootChildID = id
	}
	return &Child{e: e, id: id, lineage: lineage, caps: profile.Set.Normalize()}
}

// ID returns the child id.
func (c *Child) ID() string { return c.id }

// Silent reports whether the child's events go nowhere (Emitter.Silent).
func (c *Child) Silent() bool { return c.e.Silent() }

// Lineage returns the child's lineage.
func (c *Child) Lineage() event.Lineage { return c.lineage }

// SetNextSequence makes the next event carry sequence n (for stateless
// producers that reserved it elsewhere).
func (c *Child) SetNextSequence(n int64) {
	c.mu.Lock()
	c.seq = n - 1
	c.mu.Unlock()
}

// Spec is what the caller decides about an event; the Child fills in the
// identity, sequence, time and capabilities.
type Spec struct {
	Kind     event.Kind
	State    event.State
	Activity string
	// Details is one of the typed shapes of jsonl (docs/events.md), or
	// event.FreeDetails for details a caller supplied; nil for none.
	Details event.Details
}

// Emit builds, redacts, validates and writes one event. It returns the
// event as written. A validation error means nothing was written and the
// sequence number was not used. Sink failures are not returned: they are
// reported through Options.OnSinkError and SinkErrors.
func (c *Child) Emit(s Spec) (event.Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev, line, err := c.build(s, c.seq+1)
	if err != nil {
		return ev, err
	}
	c.seq++
	c.e.write(&ev, line)
	return ev, nil
}

// Build makes the event Emit would write next, and its line (newline
// included), without writing it or using its sequence number. Outcomes:
// those of Emit, nothing written either way.
func (c *Child) Build(s Spec) (event.Event, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.build(s, c.seq+1)
}

func (c *Child) build(s Spec, seq int64) (event.Event, []byte, error) {
	ev := event.Event{
		SchemaVersion: event.SchemaVersion,
		Source:        c.e.source,
		SourceEpoch:   c.e.epoch,
		ChildID:       c.id,
		Lineage:       c.lineage,
		Kind:          s.Kind,
		State:         s.State,
		ObservedAt:    event.Timestamp(c.e.now()),
		Sequence:      event.Int64(seq),
		Activity:      event.CutRunes(redact.Text(s.Activity), event.MaxActivity), // redacted here, as the details below
		Capabilities:  c.caps,
	}
	ev.EventID = fmt.Sprintf("%s/%s/%d", ev.SourceEpoch, ev.ChildID, seq)
	if s.Details != nil {
		d, err := EncodeDetails(s.Details)
		if err != nil {
			return ev, nil, fmt.Errorf("emit: details of %s event: %w", s.Kind, err)
		}
		ev.Details = d
	}
	if err := ev.Validate(); err != nil {
		return ev, nil, fmt.Errorf("emit: refusing to write an invalid %s event: %w", s.Kind, err)
	}
	line, err := ev.Marshal()
	if err != nil {
		return ev, nil, fmt.Errorf("emit: encoding %s event: %w", s.Kind, err)
	}
	if line = append(line, '\n'); len(line) > MaxLine {
		return fit(ev, line) // cut, never dropped (fit.go)
	}
	return ev, line, nil
}

// EncodeDetails encodes d as Emit writes it, redacted: encoding/json's
// encoding of the shape, decoded and passed through redact.Value (values
// under sensitive keys replaced, every string redacted), written with its
// keys sorted. With the activity text in build, this is the one place an
// event's free text is redacted: the event core never redacts.
func EncodeDetails(d event.Details) (json.RawMessage, error) {
	return event.EncodeDetails(d, redact.Value)
}
