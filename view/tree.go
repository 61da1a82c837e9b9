package view

import (
	"cmp"
	"slices"

	"github.com/lcwrap/lcwrap/projection"
)

// Node is one child in the lineage tree.
type Node struct {
	View projection.ChildView
	// Hist is the child's history; nil where none is kept (status).
	Hist *History
	// Retry says the node sits under its root as a retry (its attempt
	// number is View.Lineage.Attempt) rather than under a parent.
	Retry bool

	start  int64
	parent *Node
	kids   []*Node
}

// ID is the node's childId.
func (n *Node) ID() string { return n.View.ChildID }

// Parent returns the node the tree placed n under, or nil for a root.
func (n *Node) Parent() *Node { return n.parent }

// Kids returns the nodes placed under n, oldest first.
func (n *Node) Kids() []*Node { return n.kids }

// Tree links nodes by lineage and returns the roots, newest first; each
// node's children are oldest first. A node goes under its parentChildId
// when that child is known; else a retry (attempt ≥ 1) goes under its
// rootChildId when that child is known; else it is a root. A lineage
// that loops is cut where the loop is found.
func Tree(nodes []*Node) []*Node {
	byID := make(map[string]*Node, len(nodes))
	for _, n := range nodes {
		n.parent, n.kids, n.Retry = nil, nil, false
		n.start = at(n.View.FirstSeenAt)
		byID[n.ID()] = n
	}
	for _, n := range nodes {
		l := &n.View.Lineage
		switch {
		case l.ParentChildID != "" && l.ParentChildID != n.ID() && byID[l.ParentChildID] != nil:
			n.parent = byID[l.ParentChildID]
		case l.Attempt > 0 && l.RootChildID != "" && l.RootChildID != n.ID() && byID[l.RootChildID] != nil:
			n.parent, n.Retry = byID[l.RootChildID], true
		}
	}
	// Cut loops: walk up from each node with a step bound; a node whose
	// walk does not reach a root within len(nodes) steps is in a loop.
	state := make(map[*Node]uint8, len(nodes)) // 1 = on the path, 2 = reaches a root
	for _, n := range nodes {
		var path []*Node
		for p := n; p != nil && state[p] == 0; p = p.parent {
			state[p] = 1
			path = append(path, p)
			if q := p.parent; q != nil && state[q] == 1 {
				p.parent, p.Retry = nil, false // the loop closes here
			}
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	var roots []*Node
	for _, n := range nodes {
		if n.parent == nil {
			roots = append(roots, n)
		} else {
			n.parent.kids = append(n.parent.kids, n)
		}
	}
	oldest := func(a, b *Node) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.ID(), b.ID()))
	}
	for _, n := range nodes {
		if len(n.kids) > 1 {
			slices.SortFunc(n.kids, oldest)
		}
	}
	slices.SortFunc(roots, func(a, b *Node) int { return oldest(b, a) })
	return roots
}

// Row is one line of the flattened tree.
type Row struct {
	Node *Node
	// Prefix draws the lineage: "├─ ", "└─ ", with "│  " for each open
	// ancestor level.
	Prefix string
	Depth  int
}

// Flatten walks the tree depth first and returns the rows of the nodes
// keep accepts, with each accepted node's ancestors (so a row never loses
// its lineage). keep nil accepts every node.
func Flatten(roots []*Node, keep func(*Node) bool) []Row {
	var rows []Row
	var walk func(n *Node, prefix string, depth int, last bool) []Row
	// shown reports whether n or a descendant is kept; memoized per call.
	memo := map[*Node]bool{}
	var shown func(n *Node) bool
	shown = func(n *Node) bool {
		if v, ok := memo[n]; ok {
			return v
		}
		ok := keep == nil || keep(n)
		for _, k := range n.kids {
			if shown(k) {
				ok = true
			}
		}
		memo[n] = ok
		return ok
	}
	walk = func(n *Node, prefix string, depth int, last bool) []Row {
		p := ""
		if depth > 0 {
			p = prefix + "├─ "
			if last {
				p = prefix + "└─ "
			}
		}
		rows = append(rows, Row{Node: n, Prefix: p, Depth: depth})
		var vis []*Node
		for _, k := range n.kids {
			if shown(k) {
				vis = append(vis, k)
			}
		}
		next := prefix
		if depth > 0 {
			if last {
				next += "   "
			} else {
				next += "│  "
			}
		}
		for i, k := range vis {
			walk(k, next, depth+1, i == len(vis)-1)
		}
		return rows
	}
	for _, r := range roots {
		if shown(r) {
			walk(r, "", 0, true)
		}
	}
	return rows
}
