package view

import (
	"time"

	"github.com/lcwrap/lcwrap/jsonl"
	"github.com/lcwrap/lcwrap/projection"
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
	dirty  map[*Node]struct{}
	grown  bool
	cursor int64
	lines  int64
	tally  map[string]int
}

// NewModel returns an empty model.
func NewModel() *Model {
	return &Model{p: projection.New(), nodes: map[string]*Node{}, dirty: map[*Node]struct{}{}, tally: map[string]int{}}
}

// Apply projects one valid event; raw is the line it came from, line its
// journalSequence (0 outside a journal).
func (m *Model) Apply(ev *jsonl.Event, raw []byte, line int64) {
	out := m.p.Apply(ev, raw)
	n := m.nodes[ev.ChildID]
	if n == nil {
		n = &Node{Hist: &History{}}
		n.View.ChildID = ev.ChildID
		m.nodes[ev.ChildID] = n
		m.order = append(m.order, n)
		m.grown = true
	}
	if ev.Kind == jsonl.KindCreated && out.Changed {
		if v, ok := m.p.View(ev.ChildID, time.Time{}); ok {
			n.Hist.track(&v)
		}
	}
	n.Hist.record(ev, line, out.Result, out.Changed)
	m.dirty[n] = struct{}{}
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

// Counts returns the projection's result counts.
func (m *Model) Counts() projection.Counts { return m.p.Counts() }

// Sync brings the children touched since the last Sync up to date at now
// and reports whether anything changed.
func (m *Model) Sync(now time.Time) bool {
	if len(m.dirty) == 0 && !m.grown {
		return false
	}
	for n := range m.dirty {
		v, _ := m.p.View(n.ID(), now)
		if n.View.Display != "" {
			m.tally[n.View.Display]--
		}
		m.tally[v.Display]++
		if v.Lineage != n.View.Lineage || v.FirstSeenAt != n.View.FirstSeenAt {
			m.grown = true
		}
		n.View = v
		delete(m.dirty, n)
	}
	if m.grown {
		m.roots = Tree(m.order)
		m.grown = false
	}
	return true
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
