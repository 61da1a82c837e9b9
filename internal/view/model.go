package view

import (
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
	cursor  int64
	lines   int64
	tally   map[string]int
}

// NewModel returns an empty model.
func NewModel() *Model {
	return &Model{p: projection.New(), nodes: map[string]*Node{}, tally: map[string]int{}}
}

// Apply projects one valid event; raw is the line it came from, line its
// journalSequence (0 outside a journal).
func (m *Model) Apply(ev *event.Event, raw []byte, line int64) {
	out := m.p.Apply(ev, raw)
	n := m.nodes[ev.ChildID]
	if n == nil {
		n = &Node{Hist: &History{}}
		n.View.ChildID = ev.ChildID
		m.nodes[ev.ChildID] = n
		m.order = append(m.order, n)
		m.added = append(m.added, n)
	}
	if ev.Kind == event.KindCreated && out.Changed {
		if v, ok := m.p.View(ev.ChildID, time.Time{}); ok {
			n.Hist.track(&v)
		}
	}
	n.Hist.record(ev, line, out.Result, out.Changed)
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

// Counts returns the projection's result counts.
func (m *Model) Counts() projection.Counts { return m.p.Counts() }

// Sync brings the children touched since the last Sync up to date at now
// and reports whether anything changed.
func (m *Model) Sync(now time.Time) bool {
	if len(m.dirty) == 0 && len(m.added) == 0 {
		return false
	}
	for _, n := range m.dirty {
		v, _ := m.p.View(n.ID(), now)
		if n.View.Display != "" {
			m.tally[n.View.Display]--
		}
		m.tally[v.Display]++
		if m.placed[n] && (v.Lineage != n.View.Lineage || v.FirstSeenAt != n.View.FirstSeenAt) {
			m.relink = true
		}
		n.View, n.dirty = v, false
	}
	m.dirty = m.dirty[:0]
	switch {
	case m.relink || m.placed == nil:
		m.rebuild()
	default:
		for _, n := range m.added {
			m.insert(n)
		}
	}
	m.added, m.relink = m.added[:0], false
	return true
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
	n.parent, n.Retry = placement(n, func(id string) *Node {
		if p := m.nodes[id]; p != nil && m.placed[p] {
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
	waiting := m.orphans[n.ID()]
	delete(m.orphans, n.ID())
	for _, o := range waiting {
		if o.parent != nil || isAncestor(o, n) {
			continue
		}
		p, retry := placement(o, func(id string) *Node {
			if id == n.ID() {
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
	}
}

// Tally is how many children are in each displayed state, as of the last
// Sync.
func (m *Model) Tally() map[string]int { return m.tally }

// Roots returns the lineage tree as of the last Sync.
func (m *Model) Roots() []*Node { return m.roots }

// Node returns a child's node, or nil.
func (m *Model) Node(id string) *Node { return m.nodes[id] }

// Nodes returns every node, in the order first seen.
func (m *Model) Nodes() []*Node { return m.order }
