package projection

import (
	"bytes"
	"hash/maphash"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/lazy"
)

// Result says what Apply did with one event.
type Result int

// The results of Apply, one per rule of the contract.
const (
	// Applied: the event is new and in order; its effect is projected.
	Applied Result = iota
	// Gap: the event is projected, but sequences of its space before it
	// are missing; the child is provisional until they arrive.
	Gap
	// OutOfOrder: the event is older than the highest sequence of its
	// space (it fills a gap). Its state counts only when its space has set
	// no later state, so the result is the same as in-order delivery.
	OutOfOrder
	// Duplicate: the same identity was seen with the same record (or so
	// long ago that only the identity can be compared). Nothing changes.
	Duplicate
	// Conflict: the same identity was seen with a different record. The
	// first one is kept; nothing changes.
	Conflict
	// IllegalTransition: the state change is not in the contract's table.
	// The state is kept; the event still counts as evidence of its source.
	IllegalTransition
	// TerminalImmutable: the child has already ended. The state is kept.
	TerminalImmutable
	numResults
)

var resultNames = [numResults]string{"applied", "gap", "out-of-order", "duplicate", "conflict", "illegal-transition", "terminal-immutable"}

func (r Result) String() string {
	if r < 0 || r >= numResults {
		return "unknown"
	}
	return resultNames[r]
}

// Outcome is Apply's report on one event.
type Outcome struct {
	Result  Result
	ChildID string
	// Changed says the child's state changed.
	Changed bool
	// Err says why, for Conflict (wrapping ErrConflict), IllegalTransition
	// and TerminalImmutable (a *event.TransitionError).
	Err error
}

// Projection is the current picture of every child seen in a stream. It
// is not safe for concurrent use.
type Projection struct {
	children map[string]*child
	counts   Counts
}

// New returns an empty projection.
func New() *Projection { return &Projection{children: map[string]*child{}} }

// Len is the number of children seen.
func (p *Projection) Len() int { return len(p.children) }

// Counts returns how many events ended in each result.
func (p *Projection) Counts() Counts { return p.counts }

// child is everything the projection keeps about one childId. Its size
// does not grow with the number of events.
type child struct {
	id      string
	lineage event.Lineage
	caps    event.Capabilities
	metaSet bool // lineage and caps taken (from created, or the first event)

	state   event.State // "" while no event has said
	stateAt int64

	created     bool   // its created event was seen
	origin      *space // the created event's space: the lifecycle source
	firstAt     int64  // observedAt of created, else of the first event seen
	command     []string
	intervalMs  int64
	wrapper     *event.Identity // launched: the lcwrap process
	process     *event.Identity // adopted: the observed process
	observed    bool            // a PID-only child: presence, never state
	agent       bool            // an agent's session or sub-agent (its events are the agent's reports)
	wait        *waitFacts      // why it waits, while its state is waiting
	usage       *Usage          // the agent's newest running totals
	usageKey    order
	childProc   *event.Identity // launched: the started process
	childStatus *ProcessCheck   // from a lost event: was the child's process still there

	activity    string
	activityKey order
	hasActivity bool
	heartbeatAt int64

	exit    *Exit
	endedAt int64
	endedBy string // source of the terminal event

	corrections int
	omissions   []omission // per snapshot source

	counts Counts
	spaces []*space
	unseq  *unsequenced
}

type omission struct {
	source string
	last   OmissionRecord
}

// order ranks events across spaces for fields where the newest wins:
// observedAt first, then source, epoch and sequence, so that the result
// does not depend on arrival order.
type order struct {
	at            int64
	source, epoch string
	seq           int64
}

func (a order) after(b order) bool {
	switch {
	case a.at != b.at:
		return a.at > b.at
	case a.source != b.source:
		return a.source > b.source
	case a.epoch != b.epoch:
		return a.epoch > b.epoch
	}
	return a.seq > b.seq
}

// maxUnsequenced bounds the eventIds remembered per child for events
// without a sequence.
const maxUnsequenced = 256

// unsequenced remembers recent eventIds of events without a sequence, as
// hashes, oldest first out.
type unsequenced struct {
	ids  map[uint64]uint64 // hash(eventId) → hash(record)
	ring [maxUnsequenced]uint64
	next int
}

func (u *unsequenced) admit(id, h uint64) admission {
	if old, ok := u.ids[id]; ok {
		if old == h {
			return admitDup
		}
		return admitConflict
	}
	if len(u.ids) == maxUnsequenced {
		delete(u.ids, u.ring[u.next])
	}
	u.ring[u.next] = id
	u.next = (u.next + 1) % maxUnsequenced
	u.ids[id] = h
	return admitNext
}

// seed is this process's hash seed, made on first use: package
// initialisation is on every process's start-up path.
var seed = lazy.Value[maphash.Seed]{Make: maphash.MakeSeed}

// journalSuffix is how a journal line ends: the journal's own field after
// the event's, then up to 20 digits and the closing brace.
var journalSuffix = []byte(`,"journalSequence":`)

const maxSuffix = len(`,"journalSequence":`) + 20 + 1

// recordHash hashes the record as its writer wrote it: the line without
// the journalSequence a journal appended, so the same event stored twice
// is recognised as one.
func recordHash(raw []byte) uint64 {
	raw = bytes.TrimSpace(raw)
	tail := raw[max(0, len(raw)-maxSuffix):]
	if i := bytes.LastIndex(tail, journalSuffix); i >= 0 && digitsThenBrace(tail[i+len(journalSuffix):]) {
		var h maphash.Hash
		h.SetSeed(seed.Get())
		h.Write(raw[:len(raw)-len(tail)+i])
		h.WriteByte('}')
		return h.Sum64()
	}
	return maphash.Bytes(seed.Get(), raw)
}

func digitsThenBrace(b []byte) bool {
	if len(b) < 2 || b[len(b)-1] != '}' {
		return false
	}
	for _, c := range b[:len(b)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Apply projects one valid event. raw is the line it was read from (its
// journalSequence, if any, is ignored); when raw is nil the event's own
// encoding stands in for it. Apply never fails: every outcome, including
// the refusals, is reported in the Outcome and counted.
func (p *Projection) Apply(ev *event.Event, raw []byte) Outcome {
	if raw == nil {
		raw, _ = ev.Marshal()
	}
	c := p.children[ev.ChildID]
	if c == nil {
		c = &child{id: ev.ChildID}
		p.children[ev.ChildID] = c
	}
	out := c.apply(ev, recordHash(raw))
	out.ChildID = c.id
	p.counts[out.Result]++
	c.counts[out.Result]++
	return out
}

func (c *child) space(source, epoch string) *space {
	for _, s := range c.spaces {
		if s.source == source && s.epoch == epoch {
			return s
		}
	}
	s := &space{source: source, epoch: epoch}
	c.spaces = append(c.spaces, s)
	return s
}

func (c *child) apply(ev *event.Event, h uint64) Outcome {
	sp := c.space(ev.Source, ev.SourceEpoch)
	seq, sequenced := ev.Seq()
	var adm admission
	if sequenced {
		adm = sp.admit(seq, h)
	} else {
		if c.unseq == nil {
			c.unseq = &unsequenced{ids: map[uint64]uint64{}}
		}
		adm = c.unseq.admit(maphash.String(seed.Get(), ev.EventID), h)
	}
	out := Outcome{Result: Applied}
	switch adm {
	case admitDup:
		return Outcome{Result: Duplicate}
	case admitConflict:
		return Outcome{Result: Conflict, Err: ErrConflict}
	case admitGap:
		out.Result = Gap
	case admitOld:
		out.Result = OutOfOrder
	}

	at := millis(ev.ObservedAt)
	sp.lastAt = max(sp.lastAt, at)
	if !c.metaSet || (ev.Kind == event.KindCreated && !c.created) {
		c.lineage, c.caps, c.metaSet = ev.Lineage, ev.Capabilities.Normalize(), true
	}
	if !c.created && (c.firstAt == 0 || at < c.firstAt) {
		c.firstAt = at
	}
	f := readFacts(ev)

	switch ev.Kind {
	case event.KindActivity:
		if k := (order{at, ev.Source, ev.SourceEpoch, seq}); !c.hasActivity || k.after(c.activityKey) {
			c.activity, c.activityKey, c.hasActivity = ev.Activity, k, true
		}
		return out
	case event.KindHeartbeat:
		c.heartbeatAt = max(c.heartbeatAt, at)
		return out
	case event.KindDiagnostic:
		if f != nil && f.Omission != nil {
			c.recordOmission(*f.Omission)
		}
		if f != nil && f.Usage != nil {
			if k := (order{at, ev.Source, ev.SourceEpoch, seq}); c.usage == nil || k.after(c.usageKey) {
				u := *f.Usage
				u.ObservedAt = ev.ObservedAt
				c.usage, c.usageKey = &u, k
			}
		}
		return out
	case event.KindCreated:
		if !c.created {
			c.created, c.origin, c.firstAt = true, sp, at
			if f != nil {
				c.command = f.Command
				c.intervalMs = f.HeartbeatIntervalMs
				c.wrapper = f.Wrapper
				c.process = f.Process
				c.observed = f.Observation == "process-presence"
				c.agent = f.Observation == "agent-report"
			}
		}
	case event.KindStateChanged:
		if f != nil && f.Child != nil && c.childProc == nil {
			c.childProc = f.Child
		}
	case event.KindReconciliation:
		if ev.State == "" {
			return out
		}
	}

	// Every kind left carries a state.
	if sequenced && sp.hasState && seq < sp.stateSeq {
		return out // history: its space has already moved past it
	}
	var err error
	switch {
	case c.state.Terminal():
		err = &event.TransitionError{From: c.state, To: ev.State}
	case ev.Kind == event.KindReconciliation, c.state == "":
		// A correction is not bound by the table; a child whose state
		// is unknown may be in any state.
	case sequenced && !sp.gapFree(seq):
		err = event.Reachable(c.state, ev.State)
	default:
		err = event.Transition(c.state, ev.State)
	}
	if err != nil {
		out.Err = err
		out.Result = IllegalTransition
		if c.state.Terminal() {
			out.Result = TerminalImmutable
		}
		return out
	}
	c.state, c.stateAt = ev.State, at
	c.wait = nil
	if ev.State == event.StateWaiting && f != nil {
		c.wait = f.Wait
	}
	if sequenced {
		sp.hasState, sp.stateSeq = true, seq
	}
	if ev.Kind == event.KindReconciliation {
		c.corrections++
	}
	if ev.State.Terminal() {
		c.endedAt, c.endedBy = at, ev.Source
		if f != nil {
			c.exit = exitOf(f.Exit)
			c.childStatus = f.ChildProcess
		}
	}
	out.Changed = true
	return out
}

func (c *child) recordOmission(r OmissionRecord) {
	for i := range c.omissions {
		if c.omissions[i].source == r.SnapshotSource {
			c.omissions[i].last = r
			return
		}
	}
	c.omissions = append(c.omissions, omission{source: r.SnapshotSource, last: r})
}

// provisional reports whether the child's picture may be missing events:
// its created event was not seen (a stream joined mid-way) or one of its
// sequence spaces has a gap.
func (c *child) provisional() bool {
	if !c.created {
		return true
	}
	for _, s := range c.spaces {
		if s.provisional() {
			return true
		}
	}
	return false
}

// millis reads a timestamp internal/event has already validated as unix
// milliseconds.
func millis(ts string) int64 {
	d := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			n = n*10 + int(s[i]-'0')
		}
		return n
	}
	if len(ts) < 20 {
		return 0
	}
	ms := 0
	if len(ts) == 24 {
		ms = d(ts[20:23])
	}
	t := time.Date(d(ts[0:4]), time.Month(d(ts[5:7])), d(ts[8:10]), d(ts[11:13]), d(ts[14:16]), d(ts[17:19]), ms*1e6, time.UTC)
	return t.UnixMilli()
}

// Millis reads a timestamp that internal/event has already validated (an event's
// observedAt) as unix milliseconds; it is 0 for anything shorter.
func Millis(ts string) int64 { return millis(ts) }
