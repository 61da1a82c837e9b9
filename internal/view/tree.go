package view

import (
	"cmp"
	"slices"
	"sync/atomic"

	"github.com/lcwrap/lcwrap/internal/projection"
)

// Node is one child in the lineage tree.
type Node struct {
	View projection.ChildView
	// Host is the fleet host the child ran on ("" for one journal's
	// child): a fleet's child is (host, childId), and its lineage stays
	// within its host.
	Host string
	// Hist is the child's history; nil where none is kept (status).
	Hist *History
	// Retry says the node sits under its root as a retry (its attempt
	// number is View.Lineage.Attempt) rather than under a parent.
	Retry bool

	start  int64
	key    string                 // the model's key: KeyOf(Host, childId); "" for childId alone
	p      *projection.Projection // a fleet child's host projection (nil: the model's own)
	dirty  bool                   // touched since the model's last Sync
	gen    uint64
	shown  bool // in Flatten call gen: it or a descendant is kept
	ended  bool // View.Ended() as of the model's last Sync
	open   bool // a root in the model's openRoots
	parent *Node
	kids   []*Node
}

// ID is the node's childId.
func (n *Node) ID() string { return n.View.ChildID }

// Key names the node among a model's: its childId, or for a fleet's
// child KeyOf(host, childId).
func (n *Node) Key() string {
	if n.Host == "" {
		return n.View.ChildID
	}
	if n.key == "" {
		n.key = KeyOf(n.Host, n.View.ChildID)
	}
	return n.key
}

// KeyOf is the key of child id on host: id itself when host is "" (one
// journal), else host and id joined by a NUL (no valid id holds one).
func KeyOf(host, id string) string {
	if host == "" {
		return id
	}
	return host + "\x00" + id
}

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
		byID[n.Key()] = n
	}
	for _, n := range nodes {
		n.parent, n.Retry = placement(n, func(id string) *Node { return byID[id] })
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
	for _, n := range nodes {
		if len(n.kids) > 1 {
			slices.SortFunc(n.kids, oldest)
		}
	}
	slices.SortFunc(roots, newest)
	return roots
}

// oldest orders siblings: earliest start first, then by id (and host).
func oldest(a, b *Node) int {
	return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.ID(), b.ID()), cmp.Compare(a.Host, b.Host))
}

// newest orders roots: latest start first.
func newest(a, b *Node) int { return oldest(b, a) }

// placement is where lineage puts n: under its parent when known, else a
// retry under its root when known, else nowhere (a root). known is asked
// for keys (KeyOf: lineage stays within n's host).
func placement(n *Node, known func(key string) *Node) (*Node, bool) {
	l := &n.View.Lineage
	if l.ParentChildID != "" && l.ParentChildID != n.ID() {
		if p := known(KeyOf(n.Host, l.ParentChildID)); p != nil {
			return p, false
		}
	}
	if l.Attempt > 0 && l.RootChildID != "" && l.RootChildID != n.ID() {
		if p := known(KeyOf(n.Host, l.RootChildID)); p != nil {
			return p, true
		}
	}
	return nil, false
}

// wants is the key of the child n would be placed under if that child
// were known ("" for none).
func wants(n *Node) string {
	l := &n.View.Lineage
	switch {
	case l.ParentChildID != "" && l.ParentChildID != n.ID():
		return KeyOf(n.Host, l.ParentChildID)
	case l.Attempt > 0 && l.RootChildID != "" && l.RootChildID != n.ID():
		return KeyOf(n.Host, l.RootChildID)
	}
	return ""
}

// insertSorted puts n into list at its place by cmp.
func insertSorted(list []*Node, n *Node, order func(a, b *Node) int) []*Node {
	i, _ := slices.BinarySearchFunc(list, n, order)
	return slices.Insert(list, i, n)
}

func remove(list []*Node, n *Node) []*Node {
	if i := slices.Index(list, n); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// isAncestor reports whether a is n or one of n's ancestors.
func isAncestor(a, n *Node) bool {
	for p := n; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

// Row is one line of the flattened tree.
type Row struct {
	Node *Node
	// Prefix draws the lineage: "├─ ", "└─ ", with "│  " for each open
	// ancestor level.
	Prefix string
	Depth  int
}

// flattens numbers Flatten calls, for the memo in the nodes.
var flattens atomic.Uint64

// Flatten walks the tree depth first and returns the rows of the nodes
// keep accepts, with each accepted node's ancestors (so a row never loses
// its lineage). keep nil accepts every node.
func Flatten(roots []*Node, keep func(*Node) bool) []Row {
	var rows []Row
	var walk func(n *Node, prefix string, depth int, last bool) []Row
	// shown reports whether n or a descendant is kept; memoized in the
	// nodes for this call (generation g).
	g := flattens.Add(1)
	var shown func(n *Node) bool
	shown = func(n *Node) bool {
		if n.gen == g {
			return n.shown
		}
		ok := keep == nil || keep(n)
		for _, k := range n.kids {
			if shown(k) {
				ok = true
			}
		}
		n.gen, n.shown = g, ok
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
