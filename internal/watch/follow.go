package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Key names one child: its host ("" in a journal) and its id.
type Key struct {
	Host    string `json:"host,omitempty"`
	ChildID string `json:"childId"`
}

func (k Key) String() string {
	if k.Host == "" {
		return k.ChildID
	}
	return k.Host + "/" + k.ChildID
}

// StateStale is the state a transition names when a child went stale: a
// judgement of silence, not a state of the contract.
const StateStale = "stale"

// Transition is one child moving into a state, or going stale.
type Transition struct {
	Key
	// State is the state it moved into, or StateStale.
	State string
	// Previous is the state it left ("" when no event had said).
	Previous string
	// EventID is the event's id; for StateStale, StaleID.
	EventID    string
	ObservedAt string
	// Source is the source of the event (for StateStale, the child's
	// lifecycle source).
	Source string
	// WaitingFor is the reason a move into waiting gives (event.WaitReason
	// vocabulary; "" when none was recorded).
	WaitingFor event.WaitReason
	// Exit is a terminal event's exit as recorded (nil when none).
	Exit *event.Exit
	// Event is the journal line (nil for StateStale); it is valid while
	// the handler runs.
	Event []byte
	// View is the child right after the transition.
	View projection.ChildView
	// History says it was read before the follower caught up with what
	// was there when it started.
	History bool
	// Before says it was handed on already: at or before the cursor the
	// follower started after, a stale id the cursor lists, or history
	// under Options.FromEnd.
	Before bool
	// At is where it was read; Resume is where reading on hands it on
	// again (the position of the item before it).
	At, Resume Position
}

// StaleID is the synthetic event id of a child going stale after its
// event lastEventID: stable, so a repeat can be dropped.
func StaleID(childID, lastEventID string) string {
	return "stale/" + childID + "/" + lastEventID
}

// Notice is something a follower noticed that a person should be told:
// a bad line it waits at, a journal replaced, damage in a fleet's output,
// a cursor that does not belong to what is read.
type Notice struct {
	Kind string // "missing", "blocked", "replaced", "quarantined", "damage", "cursor"
	Text string
}

// Options configure a Follower. Exactly one of Journal and Fleet is set.
type Options struct {
	// Journal is the journal's path.
	Journal string
	// Fleet reads a gateway's output into Model (its Options decide when
	// a host is silent).
	Fleet *fleet.Reader
	Model *fleet.Fleet
	// After is the cursor: transitions at or before it are Before.
	After Position
	// FromEnd makes every transition of the history Before: a follower
	// without a cursor that hands on only what happens from now on.
	FromEnd bool
	// StaleSeen lists stale ids handed on already (a cursor's Stale).
	StaleSeen []string
	// Stale makes the follower judge staleness (it costs a timer per
	// deadline); without it no StateStale transition is made.
	Stale bool
	// OnNotice is told what a person should know (may be nil).
	OnNotice func(Notice)
	// FleetPoll is how often a fleet's output is read (200 ms when 0).
	FleetPoll time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Handler receives what a Follower reads, from its one goroutine.
type Handler struct {
	// Transition is called for each transition, in order (history
	// included, marked). An error stops Run and is returned.
	Transition func(*Transition) error
	// CaughtUp is called once, when what was there at the start has been
	// read (and the stale judged). An error stops Run.
	CaughtUp func() error
	// Read is called after each batch of items (may be nil): Position
	// has moved.
	Read func() error
}

// child is what the follower keeps of one child besides the projection.
type child struct {
	state     string
	lastEvent string // id of its newest event read
	staleID   string // the stale id handed on (or seen) since its last event
	deadline  time.Time
}

// Follower reads a journal or a fleet into transitions (see the package
// comment). It is used by one goroutine: Run calls the handler, which may
// call View, Keys and Position.
type Follower struct {
	o        Options
	p        *projection.Projection // journal
	children map[Key]*child
	pos      Position
	caught   bool
	seen     map[string]bool // stale ids handed on before the start
	h        Handler

	next, armed    time.Time // the earliest stale deadline; the one the timer is set for
	judged         time.Time // when every open child was last judged
	judgedOnce     bool
	judgingHistory bool
}

// New returns a follower; nothing is read until Run.
func New(o Options) *Follower {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FleetPoll <= 0 {
		o.FleetPoll = 200 * time.Millisecond
	}
	f := &Follower{o: o, p: projection.New(), children: map[Key]*child{}, seen: map[string]bool{}}
	for _, id := range o.StaleSeen {
		f.seen[id] = true
	}
	return f
}

// Position is where the follower has read to.
func (f *Follower) Position() Position { return f.pos }

// CaughtUp reports whether the history has been read.
func (f *Follower) CaughtUp() bool { return f.caught }

// View returns a child as it is now, and whether it has been seen.
func (f *Follower) View(k Key) (projection.ChildView, bool) {
	if f.o.Model != nil {
		c, ok := f.o.Model.Child(k.Host, k.ChildID)
		return c.ChildView, ok
	}
	if k.Host != "" {
		return projection.ChildView{}, false
	}
	return f.p.View(k.ChildID, f.o.Now())
}

// Keys returns every child seen, in no particular order.
func (f *Follower) Keys() []Key {
	keys := make([]Key, 0, len(f.children))
	for k := range f.children {
		keys = append(keys, k)
	}
	return keys
}

// item is one thing the reading goroutine hands the follower's loop.
type item struct {
	host    string
	ev      *event.Event
	raw     []byte
	pos     Position
	before  bool // the fleet reader's Before
	fleet   *fleet.Item
	caught  bool // marker: the history has been read
	pass    bool // marker: a batch ended
	notice  *Notice
	replace bool // marker: the journal was replaced; start over
}

// batch bounds how many items are handed over at once.
const batch = 256

// Run reads until ctx is done or the handler stops it. Outcomes:
// ctx.Err(); the handler's error; a reading error (a journal that is a
// symlink or not a regular file, I/O; a fleet cursor not found).
func (f *Follower) Run(ctx context.Context, h Handler) error {
	f.h = h
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan []item, 4)
	errc := make(chan error, 1)
	if f.o.Fleet != nil {
		go func() { errc <- f.readFleet(ctx, items) }()
	} else {
		if !f.o.After.IsZero() && f.o.After.Line > 0 {
			f.checkCursor()
		}
		go func() { errc <- f.readJournal(ctx, items) }()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		case b := <-items:
			for i := range b {
				if err := f.take(&b[i]); err != nil {
					return err
				}
			}
			if h.Read != nil {
				if err := h.Read(); err != nil {
					return err
				}
			}
		case <-timer.C:
			if err := f.judgeStale(false); err != nil {
				return err
			}
		}
		if f.o.Stale && f.caught {
			f.arm(timer)
		}
	}
}

// checkCursor makes sure the journal's line at the cursor is the one the
// cursor recorded; a cursor of another journal (or of one replaced since)
// would skip lines that were never handed on, so it is dropped: every
// transition is handed on from the start (at least once).
func (f *Follower) checkCursor() {
	want := f.o.After
	found := ""
	errStop := errors.New("stop")
	err := journal.Read(f.o.Journal, journal.ReadOptions{After: want.Line - 1}, func(rec event.Record, _ []byte) error {
		if rec.JournalSequence == want.Line {
			found = rec.Event.EventID
		}
		return errStop
	})
	if errors.Is(err, fs.ErrNotExist) {
		found = ""
	}
	if found != "" && (want.EventID == "" || found == want.EventID) {
		return
	}
	f.notify(Notice{Kind: "cursor", Text: fmt.Sprintf("the cursor's line %d (event %s) is not in journal %s (a replaced journal, or another one's cursor): handing on every transition from its start", want.Line, want.EventID, f.o.Journal)})
	f.o.After = Position{}
}

func (f *Follower) notify(n Notice) {
	if f.o.OnNotice != nil {
		f.o.OnNotice(n)
	}
}

// readJournal reads the journal's history, then follows it, handing items
// over: in batches while reading the history, one by one after.
func (f *Follower) readJournal(ctx context.Context, out chan<- []item) error {
	var buf []item
	var last int64
	following := false
	send := func() error {
		if len(buf) == 0 {
			return nil
		}
		select {
		case out <- buf:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf = nil
		return nil
	}
	fn := func(rec event.Record, raw []byte) error {
		if rec.JournalSequence <= last {
			buf = append(buf, item{replace: true})
		}
		last = rec.JournalSequence
		ev := rec.Event
		buf = append(buf, item{ev: &ev, raw: append([]byte(nil), raw...), pos: Position{Line: rec.JournalSequence, EventID: ev.EventID}})
		if following || len(buf) >= batch {
			return send()
		}
		return nil
	}
	blocked := func(be *journal.BlockedError) {
		wait := "waiting for 'lcwrap journal repair'"
		if be.Torn() {
			wait = "a torn final line: waiting for the next writer to quarantine it (or for 'lcwrap journal repair')"
		}
		buf = append(buf, item{notice: &Notice{Kind: "blocked", Text: fmt.Sprintf("journal %s stops at line %d (byte %d): %s: %s; %s", be.Path, be.Line, be.Offset, be.Class, be.Reason, wait)}})
		if following {
			send()
		}
	}
	err := journal.Read(f.o.Journal, journal.ReadOptions{OnBlocked: blocked}, fn)
	var be *journal.BlockedError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		buf = append(buf, item{notice: &Notice{Kind: "missing", Text: fmt.Sprintf("no journal at %s yet: waiting for it to be created", f.o.Journal)}})
	case err == nil, errors.As(err, &be):
	default:
		return err
	}
	buf = append(buf, item{caught: true})
	if err := send(); err != nil {
		return err
	}
	following = true
	notice := func(n journal.Notice) {
		switch n.Kind {
		case journal.NoticeReplaced:
			buf = append(buf, item{notice: &Notice{Kind: "replaced", Text: fmt.Sprintf("journal %s was replaced by a file that does not continue it: reading it from its start", n.Path)}})
		case journal.NoticeQuarantined:
			buf = append(buf, item{notice: &Notice{Kind: "quarantined", Text: fmt.Sprintf("journal %s: a quarantined range was skipped (its record says which lines)", n.Path)}})
		default:
			return
		}
		send()
	}
	return journal.FollowWith(ctx, f.o.Journal, journal.ReadOptions{After: last, OnBlocked: blocked, OnNotice: notice, MaxPoll: time.Second, Watch: true}, fn)
}

// readFleet reads the fleet's output pass after pass; the end of the
// first pass is the end of the history.
func (f *Follower) readFleet(ctx context.Context, out chan<- []item) error {
	r := f.o.Fleet
	if c := f.o.After.Fleet; c != "" {
		cur, err := fleet.ParseCursor(c)
		if err != nil {
			return err
		}
		r.After(cur)
	}
	var buf []item
	first := true
	send := func() error {
		select {
		case out <- buf:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf = nil
		return nil
	}
	fn := func(it *fleet.Item) error {
		cp := *it
		cp.Body = append([]byte(nil), it.Body...)
		buf = append(buf, item{host: it.Host, ev: it.Event, raw: cp.Body, fleet: &cp, before: it.Before, pos: Position{Fleet: it.Cursor.String()}})
		if len(buf) >= batch {
			return send()
		}
		return nil
	}
	idle := func() error {
		if first {
			buf = append(buf, item{caught: true})
			first = false
		}
		buf = append(buf, item{pass: true})
		return send()
	}
	return r.Follow(ctx, f.o.FleetPoll, fn, idle)
}

// take applies one item.
func (f *Follower) take(it *item) error {
	switch {
	case it.notice != nil:
		f.notify(*it.notice)
		return nil
	case it.replace:
		f.p, f.children, f.o.After, f.next = projection.New(), map[Key]*child{}, Position{}, time.Time{}
		return nil
	case it.caught:
		f.caught = true
		if f.o.Stale {
			if err := f.judgeStale(true); err != nil {
				return err
			}
		}
		if f.h.CaughtUp != nil {
			return f.h.CaughtUp()
		}
		return nil
	case it.pass:
		if f.o.Stale && f.caught && f.o.Now().Sub(f.judged) >= time.Second {
			return f.judgeStale(true)
		}
		return nil
	}
	resume := f.pos
	f.pos = it.pos
	if it.fleet != nil {
		out := f.o.Model.Apply(it.fleet)
		if d := it.fleet.Damage; out.Damage && d != nil && !it.before {
			f.notify(Notice{Kind: "damage", Text: fmt.Sprintf("not an event%s at %s byte %d (record %d): %s: %s", hostOf(d.Host), d.File, d.Offset, d.Index, d.Class, d.Reason)})
		}
		if !out.Shown() {
			return nil
		}
	} else {
		switch f.p.Apply(it.ev, it.raw).Result {
		case projection.Duplicate, projection.Conflict:
			return nil
		}
	}
	ev := it.ev
	k := Key{Host: it.host, ChildID: ev.ChildID}
	c := f.children[k]
	if c == nil {
		c = &child{}
		f.children[k] = c
	}
	stateful := ev.State != ""
	if !stateful && !f.o.Stale {
		return nil
	}
	v, _ := f.View(k)
	if v.Source == "" || (ev.Source == v.Source && ev.SourceEpoch == v.SourceEpoch) {
		c.lastEvent = ev.EventID
	}
	var now string
	if v.State != nil {
		now = string(*v.State)
	}
	if now != "" && now != c.state {
		t := Transition{Key: k, State: now, Previous: c.state, EventID: ev.EventID, ObservedAt: ev.ObservedAt,
			Source: ev.Source, Event: it.raw, View: v, History: !f.caught, At: it.pos, Resume: resume}
		t.Before = it.before || f.o.FromEnd && !f.caught || f.o.After.Line > 0 && it.pos.Line > 0 && it.pos.Line <= f.o.After.Line
		switch {
		case now == string(event.StateWaiting):
			if d, ok := event.DecodeDetails[struct {
				WaitingFor string `json:"waitingFor"`
			}](ev.Details); ok {
				t.WaitingFor = event.ParseWaitReason(d.WaitingFor)
			}
		case event.State(now).Terminal():
			if d, ok := event.DecodeDetails[event.Terminal](ev.Details); ok {
				t.Exit = d.Exit
			}
		}
		c.state = now
		if f.h.Transition != nil {
			if err := f.h.Transition(&t); err != nil {
				return err
			}
		}
	}
	if f.o.Stale && f.caught {
		return f.judge(k, c, &v)
	}
	return nil
}

func hostOf(h string) string {
	if h == "" {
		return " (no host)"
	}
	return " from host " + h
}

// judge hands on a stale transition when the child went stale, and
// otherwise keeps its next deadline.
func (f *Follower) judge(k Key, c *child, v *projection.ChildView) error {
	c.deadline = time.Time{}
	switch {
	case v.Ended():
		c.staleID = ""
		return nil
	case !v.Stale:
		c.staleID = ""
		if hb := v.Heartbeat; hb != nil && v.SinceEvidenceMs >= 0 {
			c.deadline = f.o.Now().Add(time.Duration(hb.DeadlineMs-v.SinceEvidenceMs+1) * time.Millisecond)
			if f.next.IsZero() || c.deadline.Before(f.next) {
				f.next = c.deadline
			}
		}
		return nil
	case c.staleID != "":
		return nil // still stale: handed on once
	}
	c.staleID = StaleID(k.ChildID, c.lastEvent)
	t := Transition{Key: k, State: StateStale, Previous: c.state, EventID: c.staleID, ObservedAt: event.Timestamp(f.o.Now()),
		Source: v.Source, View: *v, History: f.judgingHistory, At: f.pos, Resume: f.pos}
	t.Before = f.seen[c.staleID] || f.o.FromEnd && f.judgingHistory
	if f.h.Transition != nil {
		return f.h.Transition(&t)
	}
	return nil
}

// judgeStale judges the children whose deadline has come (all: every open
// child, as at the end of the history or after a fleet pass).
func (f *Follower) judgeStale(all bool) error {
	now := f.o.Now()
	f.judged, f.next = now, time.Time{}
	f.judgingHistory = all && !f.judgedOnce
	f.judgedOnce = true
	defer func() { f.judgingHistory = false }()
	for k, c := range f.children {
		if event.State(c.state).Terminal() {
			continue
		}
		if all || !c.deadline.IsZero() && !c.deadline.After(now) {
			v, ok := f.View(k)
			if !ok {
				continue
			}
			if err := f.judge(k, c, &v); err != nil {
				return err
			}
			continue
		}
		if !c.deadline.IsZero() && (f.next.IsZero() || c.deadline.Before(f.next)) {
			f.next = c.deadline
		}
	}
	return nil
}

// arm sets the timer for the next deadline.
func (f *Follower) arm(t *time.Timer) {
	if f.next.IsZero() || f.next.Equal(f.armed) {
		return
	}
	t.Stop()
	t.Reset(max(0, f.next.Sub(f.o.Now())))
	f.armed = f.next
}

// rawJSON returns b as a JSON value, or null.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}
