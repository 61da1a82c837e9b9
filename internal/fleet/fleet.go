package fleet

import (
	"slices"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/view"
)

// DefaultSilentAfter is how long a host may go unheard before its open
// children read stale. The agent config ships a line within its poll
// interval (200 ms) plus one send (at most the exporter's 5 s timeout)
// when all is well, and every open child lcwrap launched heartbeats every
// 10 s by default, so a healthy host with open children is heard from at
// least every ~15 s; the default is twice that.
const DefaultSilentAfter = 30 * time.Second

// DefaultSkewWindow is the window, in gateway time, over which a host's
// clock skew is estimated.
const DefaultSkewWindow = 10 * time.Minute

// MaxDamage is how many damage records a Fleet keeps (all are counted).
const MaxDamage = 32

// Options configure a Fleet.
type Options struct {
	// SilentAfter is the silence threshold (DefaultSilentAfter when 0).
	SilentAfter time.Duration
	// SkewWindow is the skew estimate's window (DefaultSkewWindow when 0).
	SkewWindow time.Duration
	// Now is the reader's clock (time.Now when nil). Silence is judged on
	// it against the gateway's receive stamps: run the reader where the
	// gateway writes, or on a clock in step with it.
	Now func() time.Time
}

// Fleet is the picture of every host and child in a gateway's output:
// one projection per host (a child is (host, childId)), what is known of
// each host's shipping, and the damage found. Memory grows with hosts and
// children, not with records. It is not safe for concurrent use.
type Fleet struct {
	opts        Options
	hosts       map[string]*host
	names       []string // the hosts' names, sorted
	records     int64
	duplicates  int64
	damage      []Damage
	damageCount int64
	noStamp     int64
	pending     []Pending
}

type host struct {
	name        string
	id          string // the first host.id seen
	idDisagree  int64  // records whose host.id differs from it
	p           *projection.Projection
	records     int64
	duplicates  int64
	damage      int64
	control     int64
	lastHeardNs int64 // newest gateway receive stamp
	lastLagNs   int64 // receive − observed of the newest record
	hasLag      bool
	skew        minWindow
}

// New returns an empty fleet.
func New(opts Options) *Fleet {
	if opts.SilentAfter <= 0 {
		opts.SilentAfter = DefaultSilentAfter
	}
	if opts.SkewWindow <= 0 {
		opts.SkewWindow = DefaultSkewWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Fleet{opts: opts, hosts: map[string]*host{}}
}

// SilentAfter returns the silence threshold in use.
func (f *Fleet) SilentAfter() time.Duration { return f.opts.SilentAfter }

// Outcome is what Apply did with one item.
type Outcome struct {
	Host string
	// Result is the host projection's result for an event (Duplicate: a
	// record delivered again, not to be shown twice).
	Result projection.Result
	// Damage says the item was damage, counted and skipped.
	Damage bool
	// Control says it was one of a journal's own records, counted and
	// not shown (as lcwrap's journal readers do).
	Control bool
	// Changed says the event changed its child's state (the host
	// projection's Outcome.Changed).
	Changed bool
}

// Shown reports whether a reader that shows each record once shows it.
func (o Outcome) Shown() bool { return !o.Damage && !o.Control && o.Result != projection.Duplicate }

// Apply takes one item of the reader, in any order across hosts.
func (f *Fleet) Apply(it *Item) Outcome {
	f.records++
	var h *host
	if it.Host != "" {
		h = f.host(it.Host)
		h.heard(it)
	}
	if it.Damage != nil || it.Event == nil {
		f.damageCount++
		if len(f.damage) < MaxDamage && it.Damage != nil {
			f.damage = append(f.damage, *it.Damage)
		}
		if h != nil {
			h.damage++
		}
		return Outcome{Host: it.Host, Damage: true}
	}
	if it.ReceivedNs == 0 {
		f.noStamp++
	}
	if it.Control {
		h.control++
		return Outcome{Host: it.Host, Control: true}
	}
	out := h.p.Apply(it.Event, it.Body)
	if out.Result == projection.Duplicate {
		h.duplicates++
		f.duplicates++
	}
	return Outcome{Host: it.Host, Result: out.Result, Changed: out.Changed}
}

// Projection returns host's projection, or nil for a host not heard
// from. A live view (internal/view) keeps its tree and histories beside
// it rather than projecting every event twice; it must not Apply to it.
func (f *Fleet) Projection(host string) *projection.Projection {
	if h := f.hosts[host]; h != nil {
		return h.p
	}
	return nil
}

// HostViews describes every host now, by name, as Report does but
// without its children: Children is how many the host has, Open and
// Ended are left 0 and Events empty. It costs a few operations per host,
// for a live view's every pass.
func (f *Fleet) HostViews() []HostView {
	now := f.opts.Now()
	out := make([]HostView, 0, len(f.hosts))
	for _, n := range f.names {
		h := f.hosts[n]
		v, _ := h.view(now, f.opts.SilentAfter)
		v.Children = h.p.Len()
		out = append(out, v)
	}
	return out
}

// HostClock is host's clock at the reader's now (now less its skew; now
// when unknown) and, when the host is silent at now, the stale reason
// of its open children (SilentReason).
func (f *Fleet) HostClock(host string, now time.Time) (time.Time, string) {
	h := f.hosts[host]
	if h == nil {
		return now, ""
	}
	hostNow := now
	if skew, ok := h.skewNs(); ok {
		hostNow = now.Add(-time.Duration(skew))
	}
	if h.lastHeardNs != 0 {
		if heard := time.Unix(0, h.lastHeardNs); now.Sub(heard) > f.opts.SilentAfter {
			return hostNow, SilentReason(event.Timestamp(heard)) // as view says it
		}
	}
	return hostNow, ""
}

// Totals are the counts of everything a fleet read.
type Totals struct {
	Records, Duplicates, Damage, NoReceiveStamp int64
}

// Totals returns what was read so far.
func (f *Fleet) Totals() Totals {
	return Totals{Records: f.records, Duplicates: f.duplicates, Damage: f.damageCount, NoReceiveStamp: f.noStamp}
}

// Now is the fleet's clock (Options.Now).
func (f *Fleet) Now() time.Time { return f.opts.Now() }

// SetPending records the partly written lines the reader waits for.
func (f *Fleet) SetPending(p []Pending) { f.pending = append(f.pending[:0], p...) }

func (f *Fleet) host(name string) *host {
	h := f.hosts[name]
	if h == nil {
		h = &host{name: name, p: projection.New(), skew: newMinWindow(f.opts.SkewWindow)}
		f.hosts[name] = h
		i, _ := slices.BinarySearch(f.names, name)
		f.names = slices.Insert(f.names, i, name)
	}
	return h
}

func (h *host) heard(it *Item) {
	h.records++
	switch {
	case it.HostID == "":
	case h.id == "":
		h.id = it.HostID
	case h.id != it.HostID:
		h.idDisagree++
	}
	if it.ReceivedNs == 0 {
		return
	}
	if it.ReceivedNs >= h.lastHeardNs {
		h.lastHeardNs = it.ReceivedNs
		if it.ObservedNs != 0 {
			h.lastLagNs, h.hasLag = it.ReceivedNs-it.ObservedNs, true
		}
	}
	if it.ObservedNs != 0 {
		h.skew.add(it.ReceivedNs, it.ReceivedNs-it.ObservedNs)
	}
}

// skewNs estimates the host's clock skew: the least (receive − observed)
// over the window ending at its newest record. Every difference is the
// clock offset plus that record's shipping delay, and the least is the
// one that waited least, so the estimate is the offset plus the fastest
// delivery seen (the poll interval at most, when the host ships steadily).
func (h *host) skewNs() (int64, bool) { return h.skew.min(h.lastHeardNs) }

// minWindow keeps the minimum of a value over a sliding window of time in
// a fixed number of buckets: constant memory and time per sample.
type minWindow struct {
	width int64
	ids   [skewBuckets]int64
	mins  [skewBuckets]int64
	set   [skewBuckets]bool
}

const skewBuckets = 10

func newMinWindow(window time.Duration) minWindow {
	return minWindow{width: max(int64(window)/skewBuckets, 1)}
}

func (w *minWindow) add(at, v int64) {
	id := at / w.width
	s := int(uint64(id) % skewBuckets)
	if !w.set[s] || w.ids[s] != id {
		if w.set[s] && w.ids[s] > id {
			return // older than the window this slot holds
		}
		w.ids[s], w.mins[s], w.set[s] = id, v, true
		return
	}
	w.mins[s] = min(w.mins[s], v)
}

func (w *minWindow) min(at int64) (int64, bool) {
	id := at / w.width
	var m int64
	ok := false
	for s := range skewBuckets {
		if w.set[s] && w.ids[s] > id-skewBuckets && w.ids[s] <= id {
			if !ok || w.mins[s] < m {
				m, ok = w.mins[s], true
			}
		}
	}
	return m, ok
}

// HostView is one host as a reader shows it.
type HostView struct {
	Host   string `json:"host"`
	HostID string `json:"hostId,omitempty"`
	// HostIDDisagreements counts records of this host.name whose host.id
	// differs from the first one seen.
	HostIDDisagreements int64 `json:"hostIdDisagreements"`
	// LastHeardAt is the gateway's receive time of the host's newest
	// record ("" when no record carried the gateway's stamp);
	// SinceHeardMs how long ago that is on the reader's clock (-1 when
	// unknown).
	LastHeardAt  string `json:"lastHeardAt,omitempty"`
	SinceHeardMs int64  `json:"sinceHeardMs"`
	// LastHeard is LastHeardAt as a time (zero when unknown): a live view
	// says how long ago at its own moment of drawing.
	LastHeard time.Time `json:"-"`
	// Silent says nothing has arrived from the host for longer than the
	// threshold: its shipper or its network may be down, its work may not
	// be. SilentSince is then LastHeardAt.
	Silent      bool   `json:"silent"`
	SilentSince string `json:"silentSince,omitempty"`
	// SkewMs estimates how far the gateway's clock is ahead of the
	// host's (plus the fastest delivery seen); DelayMs is the newest
	// record's shipping delay beyond that. Nil when unknown.
	SkewMs     *int64 `json:"skewMs"`
	DelayMs    *int64 `json:"delayMs"`
	Records    int64  `json:"records"`
	Duplicates int64  `json:"duplicates"`
	Damage     int64  `json:"damage"`
	// JournalRecords counts the journal's own records (segment starts,
	// quarantine records): read, not shown.
	JournalRecords int64             `json:"journalRecords"`
	Children       int               `json:"children"`
	Open           int               `json:"open"`
	Ended          int               `json:"ended"`
	Events         projection.Counts `json:"events"`
}

// Child is one child of a fleet: its host and its projected view.
type Child struct {
	Host string `json:"host"`
	projection.ChildView
	hostNow time.Time // the report's moment on the host's clock
}

// Report is the fleet at one moment: `lcwrap status --fleet --json`.
type Report struct {
	Schema      string `json:"schema"`
	GeneratedAt string `json:"generatedAt"`
	Input       string `json:"input"`
	Evidence    bool   `json:"evidence"`
	Message     string `json:"message,omitempty"`
	// Basis says what the picture rests on.
	Basis         string            `json:"basis"`
	SilentAfterMs int64             `json:"silentAfterMs"`
	Hosts         []HostView        `json:"hosts"`
	Children      []Child           `json:"children"`
	Ended         int               `json:"ended"`
	Hidden        int               `json:"hidden"`
	Events        projection.Counts `json:"events"`
	// Records counts every record and damaged part read; Duplicates the
	// records delivered more than once (shown once).
	Records    int64 `json:"records"`
	Duplicates int64 `json:"duplicates"`
	// NoReceiveStamp counts events without the gateway's receive stamp:
	// their host's silence, skew and delay cannot be judged from them.
	NoReceiveStamp int64     `json:"noReceiveStamp"`
	DamageCount    int64     `json:"damageCount"`
	Damage         []Damage  `json:"damage"`
	Pending        []Pending `json:"pending"`
}

// ReportSchema names the shape of Report.
const ReportSchema = "lcwrap-fleet-status/1"

// Basis is what every fleet picture says it rests on.
const Basis = "shipped evidence: journal lines as the gateway received them; no process was checked"

// SilentReason is the stale reason of an open child of a silent host.
func SilentReason(since string) string { return view.HostSilent + " since " + since }

// Report describes every host and child now: hosts by name; children by
// host, then as projection.Report orders them. A host's children are
// judged on the host's clock (the reader's now less the host's skew), so
// a host whose clock is off neither ages nor freshens them; an open child
// of a silent host is stale with SilentReason, never lost or ended.
func (f *Fleet) Report(all bool) Report {
	now := f.opts.Now()
	r := Report{Schema: ReportSchema, GeneratedAt: event.Timestamp(now), Evidence: len(f.hosts) > 0,
		Basis: Basis, SilentAfterMs: f.opts.SilentAfter.Milliseconds(), Hosts: []HostView{}, Children: []Child{},
		Records: f.records, Duplicates: f.duplicates, NoReceiveStamp: f.noStamp, DamageCount: f.damageCount,
		Damage: append([]Damage{}, f.damage...), Pending: append([]Pending{}, f.pending...)}
	if !r.Evidence {
		r.Message = projection.NoEvidence
	}
	for _, n := range f.names {
		h := f.hosts[n]
		hv, hostNow := h.view(now, f.opts.SilentAfter)
		pr := h.p.Report(hostNow, all)
		hv.Children, hv.Ended, hv.Open = h.p.Len(), pr.Ended, h.p.Len()-pr.Ended
		hv.Events = h.p.Counts()
		for i, c := range hv.Events {
			r.Events[i] += c
		}
		r.Ended += pr.Ended
		r.Hidden += pr.Hidden
		for _, v := range pr.Children {
			if hv.Silent && !v.Ended() {
				v.Stale, v.StaleReason = true, SilentReason(hv.SilentSince)
			}
			r.Children = append(r.Children, Child{Host: n, ChildView: v, hostNow: hostNow})
		}
		r.Hosts = append(r.Hosts, hv)
	}
	return r
}

// view describes h at now and returns the host's clock at now.
func (h *host) view(now time.Time, silentAfter time.Duration) (HostView, time.Time) {
	v := HostView{Host: h.name, HostID: h.id, HostIDDisagreements: h.idDisagree, SinceHeardMs: -1,
		Records: h.records, Duplicates: h.duplicates, Damage: h.damage, JournalRecords: h.control}
	hostNow := now
	if h.lastHeardNs != 0 {
		heard := time.Unix(0, h.lastHeardNs)
		v.LastHeard = heard
		v.LastHeardAt = event.Timestamp(heard)
		v.SinceHeardMs = max(0, now.Sub(heard).Milliseconds())
		if now.Sub(heard) > silentAfter {
			v.Silent, v.SilentSince = true, v.LastHeardAt
		}
	}
	if skew, ok := h.skewNs(); ok {
		ms := time.Duration(skew).Milliseconds()
		v.SkewMs = &ms
		hostNow = now.Add(-time.Duration(skew))
		if h.hasLag {
			d := time.Duration(h.lastLagNs - skew).Milliseconds()
			v.DelayMs = &d
		}
	}
	return v, hostNow
}

// Hosts returns the names of the hosts heard from, sorted.
func (f *Fleet) Hosts() []string { return slices.Clone(f.names) }

// NewModel returns an empty live model (internal/view) whose hosts are
// judged by this fleet: on each host's clock, stale while it is silent.
// Fill it with ApplyTo.
func (f *Fleet) NewModel() *view.Model {
	m := view.NewModel()
	m.SetHostClock(f.HostClock)
	return m
}

// ApplyTo applies it as Apply does and records its event in m (a model
// from NewModel), which keeps its tree and histories beside the fleet's
// host projections: the child is (host, childId), and a record delivered
// again is m's Duplicate too.
func (f *Fleet) ApplyTo(m *view.Model, it *Item) Outcome {
	o := f.Apply(it)
	if !o.Damage && !o.Control {
		m.ApplyHost(it.Host, f.Projection(it.Host), projection.Outcome{Result: o.Result, ChildID: it.Event.ChildID, Changed: o.Changed}, it.Event, it.JournalSequence)
	}
	return o
}
