package view

import (
	"slices"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

// Model is the picture a live view keeps current: the projection, every
// child's history and the lineage tree. Apply costs one event's work;
// Sync recomputes only the children touched since the last Sync, and
// rebuilds the tree only when children appeared or their lineage
// changed. It is not safe for concurrent use (Live guards it).
type Model struct {
	p      *projection.Projection
	nodes  map[string]*Node
	order  []*Node
	roots  []*Node
	dirty  []*Node // touched since the last Sync (Node.dirty set)
	added  []*Node // new since the last Sync
	relink bool    // a known child's lineage or start changed: rebuild the tree
	placed map[*Node]bool
	// orphans are roots waiting for the child they would go under.
	orphans map[string][]*Node
	// openRoots are the roots with a child not ended in their tree, in
	// roots' order (a view that hides ended children walks these
	// alone); ended counts the ended children; touched are the roots
	// whose tree changed in this Sync.
	openRoots []*Node
	ended     int
	touched   []*Node
	cursor    int64
	lines     int64
	tally     map[string]int
	// A fleet's: its hosts' nodes, and each host's clock and silence.
	byHost    map[string][]*Node
	hostClock HostClock
	// histories says which children keep a History (nil: all).
	histories func(key string) bool
}

// HostClock says, for a fleet's host at the reader's now, the host's own
// clock (now less the host's clock skew: the host's events are judged on
// it) and why its open children are stale regardless of their own
// evidence ("" when nothing makes them so; "host silent since T" when
// nothing arrived from the host for too long).
type HostClock func(host string, now time.Time) (hostNow time.Time, staleReason string)

// NewModel returns an empty model.
func NewModel() *Model {
	return &Model{p: projection.New(), nodes: map[string]*Node{}, tally: map[string]int{}}
}

// Apply projects one valid event; raw is the line it came from, line its
// journalSequence (0 outside a journal).
func (m *Model) Apply(ev *event.Event, raw []byte, line int64) {
	m.record("", m.p, m.p.Apply(ev, raw), ev, line)
}

// ApplyHost records one event of a fleet's host that p, the host's own
// projection, has applied with outcome out (internal/fleet keeps one
// projection per host for its dedup; the model keeps the tree and the
// histories beside it). The child is (host, childId); line is the
// event's journalSequence on its host.
func (m *Model) ApplyHost(host string, p *projection.Projection, out projection.Outcome, ev *event.Event, line int64) {
	m.record(host, p, out, ev, line)
}

// SetHistories says which children keep a History (by key; nil: every
// child, the default): the others get none (Node.Hist is nil), so a
// reader that shows few of many children (lcwrap report) holds the
// histories of those it shows only. Set it before the first event.
func (m *Model) SetHistories(keep func(key string) bool) { m.histories = keep }

// SetHostClock sets how a fleet's hosts are judged (see HostClock).
func (m *Model) SetHostClock(c HostClock) { m.hostClock = c }

// TouchHost makes every child of host be judged again at the next Sync
// (its silence or clock changed, with no event of its own).
func (m *Model) TouchHost(host string) {
	for _, n := range m.byHost[host] {
		if !n.dirty {
			n.dirty = true
			m.dirty = append(m.dirty, n)
		}
	}
}

// HostNow is host's clock at the reader's now (now itself for one
// journal's children, or without a HostClock).
func (m *Model) HostNow(host string, now time.Time) time.Time {
	if host == "" || m.hostClock == nil {
		return now
	}
	t, _ := m.hostClock(host, now)
	return t
}

func (m *Model) record(host string, p *projection.Projection, out projection.Outcome, ev *event.Event, line int64) {
	key := KeyOf(host, ev.ChildID)
	n := m.nodes[key]
	if n == nil {
		n = &Node{Host: host, key: key}
		if m.histories == nil || m.histories(key) {
			n.Hist = &History{}
		}
		if host != "" {
			n.p = p
			if m.byHost == nil {
				m.byHost = map[string][]*Node{}
			}
			m.byHost[host] = append(m.byHost[host], n)
		}
		n.View.ChildID = ev.ChildID
		m.nodes[key] = n
		m.order = append(m.order, n)
		m.added = append(m.added, n)
	}
	if n.Hist != nil {
		if ev.Kind == event.KindCreated && out.Changed {
			if v, ok := p.View(ev.ChildID, time.Time{}); ok {
				n.Hist.track(&v)
			}
		}
		n.Hist.record(ev, line, out.Result, out.Changed)
	}
	if !n.dirty {
		n.dirty = true
		m.dirty = append(m.dirty, n)
	}
	m.lines++
	if line > 0 {
		m.cursor = line
	}
}

// Cursor is the journalSequence of the last line applied.
func (m *Model) Cursor() int64 { return m.cursor }

// Lines is how many events were applied.
func (m *Model) Lines() int64 { return m.lines }

// Len is how many children were seen.
func (m *Model) Len() int { return len(m.order) }

// Evidence reports whether any lifecycle evidence was seen.
func (m *Model) Evidence() bool { return len(m.order) > 0 }

// Report is the projection's picture at now (projection.Report: what
// `lcwrap status --json` prints), for a reader that serves it.
func (m *Model) Report(now time.Time, all bool) projection.Report { return m.p.Report(now, all) }

// View is one child's picture at now, and whether any event named it.
func (m *Model) View(childID string, now time.Time) (projection.ChildView, bool) {
	return m.p.View(childID, now)
}

// Counts returns the projection's result counts (one journal's; a
// fleet's are its hosts' projections').
func (m *Model) Counts() projection.Counts { return m.p.Counts() }

// Sync brings the children touched since the last Sync up to date at now
// and reports whether anything changed.
func (m *Model) Sync(now time.Time) bool {
	if len(m.dirty) == 0 && len(m.added) == 0 {
		return false
	}
	for _, n := range m.dirty {
		v := m.judge(n, now)
		if n.View.Display != "" {
			m.tally[n.View.Display]--
		}
		m.tally[v.Display]++
		if m.placed[n] && (v.Lineage != n.View.Lineage || v.FirstSeenAt != n.View.FirstSeenAt) {
			m.relink = true
		}
		n.View, n.dirty = v, false
		if e := v.Ended(); e != n.ended {
			n.ended = e
			if e {
				m.ended++
			} else {
				m.ended--
			}
		}
	}
	switch {
	case m.relink || m.placed == nil:
		m.rebuild()
		m.openRoots = m.openRoots[:0]
		for _, n := range m.order {
			n.open = false
		}
		for _, r := range m.roots {
			if r.open = openTree(r); r.open {
				m.openRoots = append(m.openRoots, r)
			}
		}
	default:
		for _, n := range m.added {
			m.insert(n)
		}
		for _, n := range m.dirty {
			m.touched = append(m.touched, n)
		}
		m.reopen(m.touched)
	}
	m.dirty, m.touched = m.dirty[:0], m.touched[:0]
	m.added, m.relink = m.added[:0], false
	return true
}

// reopen judges again whether the trees of the nodes touched have a
// child not ended, and keeps openRoots so. A node touched need not be a
// root any more: a root that went under another node leaves openRoots.
func (m *Model) reopen(touched []*Node) {
	var roots map[*Node]bool
	for _, n := range touched {
		if n.parent != nil && n.open {
			n.open = false
			if i, ok := slices.BinarySearchFunc(m.openRoots, n, newest); ok {
				m.openRoots = slices.Delete(m.openRoots, i, i+1)
			}
		}
		r := n
		for r.parent != nil {
			r = r.parent
		}
		if roots == nil {
			roots = make(map[*Node]bool, len(touched))
		}
		roots[r] = true
	}
	for r := range roots {
		open := openTree(r)
		if open == r.open {
			continue
		}
		r.open = open
		i, found := slices.BinarySearchFunc(m.openRoots, r, newest)
		switch {
		case open && !found:
			m.openRoots = slices.Insert(m.openRoots, i, r)
		case !open && found:
			m.openRoots = slices.Delete(m.openRoots, i, i+1)
		}
	}
}

// openTree reports whether n or a node under it is not ended.
func openTree(n *Node) bool {
	if !n.ended {
		return true
	}
	for _, k := range n.kids {
		if openTree(k) {
			return true
		}
	}
	return false
}

// judge is n's view at now: on its host's clock, stale while its host
// is silent.
func (m *Model) judge(n *Node, now time.Time) projection.ChildView {
	if n.p == nil {
		v, _ := m.p.View(n.ID(), now)
		return v
	}
	reason := ""
	if m.hostClock != nil {
		now, reason = m.hostClock(n.Host, now)
	}
	v, _ := n.p.View(n.ID(), now)
	if reason != "" && !v.Ended() {
		v.Stale, v.StaleReason = true, reason
	}
	return v
}

// rebuild links the whole tree again.
func (m *Model) rebuild() {
	m.roots = Tree(m.order)
	m.placed = make(map[*Node]bool, len(m.order))
	m.orphans = map[string][]*Node{}
	for _, n := range m.order {
		m.placed[n] = true
	}
	for _, r := range m.roots {
		if w := wants(r); w != "" {
			m.orphans[w] = append(m.orphans[w], r)
		}
	}
}

// insert places one new child in the tree without touching the rest: under
// its parent (or as a retry under its root) when that child is placed,
// else as a root; roots that were waiting for it move under it, unless
// that would close a loop.
func (m *Model) insert(n *Node) {
	n.start = at(n.View.FirstSeenAt)
	n.parent, n.Retry = placement(n, func(key string) *Node {
		if p := m.nodes[key]; p != nil && m.placed[p] {
			return p
		}
		return nil
	})
	if p := n.parent; p != nil {
		p.kids = insertSorted(p.kids, n, oldest)
	} else {
		m.roots = insertSorted(m.roots, n, newest)
		if w := wants(n); w != "" {
			m.orphans[w] = append(m.orphans[w], n)
		}
	}
	m.placed[n] = true
	waiting := m.orphans[n.Key()]
	delete(m.orphans, n.Key())
	for _, o := range waiting {
		if o.parent != nil || isAncestor(o, n) {
			continue
		}
		p, retry := placement(o, func(key string) *Node {
			if key == n.Key() {
				return n
			}
			return nil
		})
		if p == nil {
			continue
		}
		m.roots = remove(m.roots, o)
		o.parent, o.Retry = p, retry
		p.kids = insertSorted(p.kids, o, oldest)
		m.touched = append(m.touched, o)
	}
	m.touched = append(m.touched, n)
}

// Tally is how many children are in each displayed state, as of the last
// Sync.
func (m *Model) Tally() map[string]int { return m.tally }

// Roots returns the lineage tree as of the last Sync.
func (m *Model) Roots() []*Node { return m.roots }

// OpenRoots returns the roots, in Roots' order, whose tree holds a child
// not ended, as of the last Sync: what a view that hides ended children
// shows (Flatten of these with such a filter is Flatten of Roots with
// it), without looking at the trees of ended children at all.
func (m *Model) OpenRoots() []*Node { return m.openRoots }

// Ended is how many children had ended as of the last Sync.
func (m *Model) Ended() int { return m.ended }

// Node returns a child's node by its key (Node.Key: the childId for one
// journal), or nil.
func (m *Model) Node(key string) *Node { return m.nodes[key] }

// Nodes returns every node, in the order first seen.
func (m *Model) Nodes() []*Node { return m.order }
