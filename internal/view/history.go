package view

import (
	"bytes"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Bounds of what is kept per child, whatever the number of its events.
const (
	// RecentEvents is how many of a child's latest events are kept.
	RecentEvents = 16
	// RecentDiagnostics is how many of its latest diagnostics are kept.
	RecentDiagnostics = 4
	// MaxSegments bounds the state segments kept (the first ones and the
	// latest ones; the count of those in between is kept).
	MaxSegments = 128
	// MaxStaleSpans bounds the stale spans kept (the latest ones).
	MaxStaleSpans = 32
)

// Event is one event as the history keeps it.
type Event struct {
	Line       int64 // journalSequence, 0 outside a journal
	ObservedAt string
	Kind       event.Kind
	State      event.State
	Source     string
	Activity   string
	Details    []byte // a copy, not yet redacted
	Result     projection.Result
}

// Segment is the state a child entered at At (unix ms), with the
// evidence its event named (details.evidence) and, for a waiting state,
// its reason as written (details.waitingFor): a waiting episode is opened
// by its segment's evidence and closed by the next segment's.
type Segment struct {
	At       int64
	State    string
	Reason   string
	Evidence string
}

// Span is a stretch of time, unix ms.
type Span struct{ From, To int64 }

// History is what the view keeps of one child beyond the projection:
// recent events, state segments over time, stale spans.
type History struct {
	// recent and diags are rings that grow to their bound as events
	// come (most children have a handful: each costs no more).
	recent     []Event
	diags      []Event
	Events     int64 // events seen (duplicates included)
	Heartbeats int64 // heartbeats among them (not kept in Recent)
	kept       int64 // events put in recent
	nDiags     int64
	Segs       []Segment
	Dropped    int // segments between the first and the latest ones not kept
	Stale      []Span

	// freshness tracking: the lifecycle source and its last word
	originSource, originEpoch string
	deadlineMs                int64
	lastOrigin                int64
}

// Recent returns the kept events, oldest first.
// Heartbeats are counted, not kept.
func (h *History) Recent() []Event { return ring(h.recent, h.kept) }

// Diagnostics returns the kept diagnostics, oldest first.
func (h *History) Diagnostics() []Event { return ring(h.diags, h.nDiags) }

// grow makes room in a ring of bound events for its event number n.
func grow(r []Event, n int64, bound int) []Event {
	if n < int64(len(r)) || len(r) == bound {
		return r
	}
	if len(r) == cap(r) {
		r = append(make([]Event, 0, min(max(2*cap(r), 4), bound)), r...)
	}
	return append(r, Event{})
}

func ring(r []Event, n int64) []Event {
	size := int64(len(r))
	if n <= size {
		return append([]Event(nil), r[:n]...)
	}
	i := int(n % size)
	return append(append([]Event(nil), r[i:]...), r[:i]...)
}

func (h *History) record(ev *event.Event, line int64, res projection.Result, changed bool) {
	h.Events++
	if ev.Kind == event.KindHeartbeat && res == projection.Applied {
		// Liveness only: counted, and kept in the stale spans, not in
		// the timeline of recent events.
		h.Heartbeats++
	} else {
		h.recent = grow(h.recent, h.kept, RecentEvents)
		e := &h.recent[h.kept%RecentEvents]
		*e = Event{Line: line, ObservedAt: ev.ObservedAt, Kind: ev.Kind, State: ev.State, Source: ev.Source, Activity: ev.Activity, Result: res, Details: e.Details[:0]}
		if len(ev.Details) > 0 {
			e.Details = append(e.Details, ev.Details...)
		} else {
			e.Details = nil
		}
		h.kept++
		if ev.Kind == event.KindDiagnostic && !bytes.Contains(ev.Details, []byte(`"agentUsage"`)) {
			// (an agent's running totals are shown as its usage, not
			// among the diagnostics)
			d := *e
			d.Details = append([]byte(nil), e.Details...)
			h.diags = grow(h.diags, h.nDiags, RecentDiagnostics)
			h.diags[h.nDiags%RecentDiagnostics] = d
			h.nDiags++
		}
	}
	if res == projection.Duplicate || res == projection.Conflict {
		return
	}
	tracked := h.deadlineMs > 0 && ev.Source == h.originSource && ev.SourceEpoch == h.originEpoch
	if !changed && !tracked {
		return
	}
	ms := projection.Millis(ev.ObservedAt)
	if changed {
		seg := Segment{At: ms, State: string(ev.State)}
		if len(ev.Details) > 0 {
			if d, ok := event.DecodeDetails[segmentFacts](ev.Details); ok {
				seg.Evidence = d.Evidence
				if ev.State == event.StateWaiting {
					seg.Reason = d.WaitingFor
				}
			}
		}
		h.addSegment(seg)
	}
	if tracked {
		if h.lastOrigin > 0 && ms-h.lastOrigin > h.deadlineMs {
			if len(h.Stale) == MaxStaleSpans {
				h.Stale = append(h.Stale[:0], h.Stale[1:]...)
			}
			h.Stale = append(h.Stale, Span{h.lastOrigin + h.deadlineMs, ms})
		}
		h.lastOrigin = max(h.lastOrigin, ms)
	}
}

// addSegment keeps the first half of the bound and the latest ones.
func (h *History) addSegment(s Segment) {
	if n := len(h.Segs); n > 0 && s.At < h.Segs[n-1].At {
		// an event that arrived late: its segment goes where it belongs
		i := n
		for i > 0 && h.Segs[i-1].At > s.At {
			i--
		}
		h.Segs = append(h.Segs, Segment{})
		copy(h.Segs[i+1:], h.Segs[i:])
		h.Segs[i] = s
	} else {
		h.Segs = append(h.Segs, s)
	}
	if len(h.Segs) > MaxSegments {
		keep := MaxSegments / 2
		h.Segs = append(h.Segs[:keep], h.Segs[keep+1:]...)
		h.Dropped++
	}
}

// track starts freshness tracking once the child's created event named
// its lifecycle source and heartbeat deadline.
func (h *History) track(v *projection.ChildView) {
	if v.Heartbeat == nil || v.Source == "" {
		return
	}
	h.originSource, h.originEpoch, h.deadlineMs = v.Source, v.SourceEpoch, v.Heartbeat.DeadlineMs
	h.lastOrigin = max(h.lastOrigin, at(v.Heartbeat.LastEvidenceAt))
}

// segmentFacts are the members of a state change's details a segment
// keeps (an agent source's; other sources have none).
type segmentFacts struct {
	Evidence   string `json:"evidence"`
	WaitingFor string `json:"waitingFor"`
}
