package view_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var model = viewtest.Model

func ids(rows []view.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Prefix+r.Node.ID())
	}
	return out
}

func TestTreeLineageRetriesAndOrder(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At)
	got := strings.Join(ids(view.Flatten(m.Roots(), nil)), "\n")
	want := strings.Join([]string{
		viewtest.LongID.ID, "fetch-2", "server-9", "test-3",
		"build-7", "└─ build-7-a1",
		"agent-1", "└─ session-1", "   ├─ sub-explore", "   └─ sub-tests",
	}, "\n")
	if got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
	if n := m.Node("build-7-a1"); !n.Retry || n.Parent().ID() != "build-7" {
		t.Fatalf("build-7-a1 is not a retry under build-7: %+v", n)
	}
	if n := m.Node("session-1"); n.Retry || n.Parent().ID() != "agent-1" {
		t.Fatal("session-1 is not under agent-1")
	}
	if got := view.Lineage(m.Node("sub-tests")); got != "agent-1 › session-1 › sub-tests" {
		t.Fatalf("lineage %q", got)
	}
}

func TestTreeCutsLoopsAndKeepsOrphans(t *testing.T) {
	s := viewtest.New(t0)
	a := viewtest.Child{ID: "a", Parent: "b"}
	b := viewtest.Child{ID: "b", Parent: "a"}
	c := viewtest.Child{ID: "c", Parent: "nobody"}
	self := viewtest.Child{ID: "self", Parent: "self"}
	for _, ch := range []viewtest.Child{a, b, c, self} {
		s.Created(ch)
	}
	m := model(t, s, s.At)
	rows := view.Flatten(m.Roots(), nil)
	if len(rows) != 4 {
		t.Fatalf("every child is shown once, got %q", ids(rows))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.Node.ID()] {
			t.Fatalf("%s shown twice", r.Node.ID())
		}
		seen[r.Node.ID()] = true
	}
}

func TestFlattenKeepsAncestorsOfKeptChildren(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At)
	rows := view.Flatten(m.Roots(), func(n *view.Node) bool { return n.View.Display == "waiting" })
	if got := strings.Join(ids(rows), ","); got != "agent-1,└─ session-1,   └─ sub-tests" {
		t.Fatalf("rows %q", got)
	}
}

func TestSyncRecomputesOnlyTouchedChildren(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At)
	before := m.Node("test-3").View
	s2 := viewtest.New(s.At)
	// A new event of sub-tests only: it runs again.
	s2.Out = nil
	e := s.Event(viewtest.SubB, event.KindStateChanged, event.StateRunning, "", nil)
	raw := viewtest.Lines([]event.Event{e})[0]
	m.Apply(&e, raw, int64(len(s.Out)))
	later := s.At.Add(time.Hour)
	if !m.Sync(later) {
		t.Fatal("Sync reported no change")
	}
	if got := m.Node("sub-tests").View.Display; got != "running" {
		t.Fatalf("sub-tests is %s", got)
	}
	if m.Node("test-3").View.SinceEvidenceMs != before.SinceEvidenceMs {
		t.Fatal("an untouched child was recomputed")
	}
	if m.Sync(later) {
		t.Fatal("a second Sync without events changed something")
	}
	if m.Tally()["waiting"] != 0 || m.Tally()["running"] == 0 {
		t.Fatalf("tally %v", m.Tally())
	}
}

func TestHistorySegmentsStaleAndRing(t *testing.T) {
	s := viewtest.New(t0)
	c := viewtest.Stale
	s.Created(c)
	s.States(c, event.StateStarting, event.StateRunning)
	s.At = s.At.Add(10 * time.Second) // silent past 3 × 1s
	for i := range 30 {
		s.Event(c, event.KindHeartbeat, "", "", nil)
		s.Event(c, event.KindActivity, "", fmt.Sprintf("step %d", i), nil)
	}
	s.States(c, event.StateWaiting)
	m := model(t, s, s.At)
	h := m.Node(c.ID).Hist
	var states []string
	for _, sg := range h.Segs {
		states = append(states, sg.State)
	}
	if got := strings.Join(states, ","); got != "created,starting,running,waiting" {
		t.Fatalf("segments %s", got)
	}
	if len(h.Stale) != 1 || h.Stale[0].To-h.Stale[0].From < 6000 {
		t.Fatalf("stale spans %+v", h.Stale)
	}
	r := h.Recent()
	if len(r) != view.RecentEvents || h.Events != 64 || h.Heartbeats != 30 || r[len(r)-1].State != "waiting" || r[len(r)-2].Activity != "step 29" {
		t.Fatalf("recent: %d kept of %d, last %+v", len(r), h.Events, r[len(r)-1])
	}
}

func TestCellsAndFreshness(t *testing.T) {
	s := viewtest.Standard(t0)
	now := s.At.Add(10 * time.Second)
	m := model(t, s, now)
	cells := func(id string) [view.NumCols]view.Cell {
		return view.Cells(view.Row{Node: m.Node(id)}, now)
	}
	if c := cells("fetch-2"); !strings.HasPrefix(c[view.ColFresh].Text, "stale ") || c[view.ColState].Text != "● running" {
		t.Fatalf("fetch-2 is not shown stale and running: %+v", c)
	}
	if c := cells("server-9"); c[view.ColState].Text != "◎ observed" || c[view.ColUnknown].Text != "?5" || c[view.ColSource].Text != "lcwrap (adopted)" {
		t.Fatalf("server-9: %+v", c)
	}
	if c := cells("sub-tests"); c[view.ColState].Text != "◆ waiting" {
		t.Fatalf("sub-tests: %+v", c)
	}
	if c := cells("test-3"); c[view.ColExit].Text != "1" || c[view.ColDuration].Text != "400ms" {
		t.Fatalf("test-3: %+v", c)
	}
	if c := cells("agent-1"); strings.Contains(c[view.ColCommand].Text, "sk-ant") {
		t.Fatalf("a secret reached a cell: %q", c[view.ColCommand].Text)
	}
	if c := view.Cells(view.Row{Node: m.Node("build-7-a1")}, now); c[view.ColChild].Text != "build-7-a1 #1" {
		t.Fatalf("row %+v", c[view.ColChild])
	}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestTableFitsEveryWidth(t *testing.T) {
	s := viewtest.Standard(t0)
	now := s.At
	m := model(t, s, now)
	var children []projection.ChildView
	for _, n := range m.Nodes() {
		children = append(children, n.View)
	}
	rep := projection.Report{Evidence: true, Children: children}
	for _, w := range []int{200, 120, 80, 60, 40, 30} {
		var b bytes.Buffer
		if err := view.Table(&b, rep, view.TableOptions{Width: w, Color: true, Now: now}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) < len(children)+1 {
			t.Fatalf("width %d: %d lines for %d children:\n%s", w, len(lines), len(children), b.String())
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(sgr.ReplaceAllString(l, "")); n > w {
				t.Fatalf("width %d: line of %d: %q", w, n, l)
			}
		}
		if !strings.Contains(b.String(), "◆ waiting") && w >= 40 {
			t.Fatalf("width %d: no waiting row:\n%s", w, b.String())
		}
		if w == 80 && !strings.Contains(b.String(), "nightly-in") {
			t.Fatalf("the long id lost its start at 80:\n%s", b.String())
		}
	}
	var b bytes.Buffer
	view.Table(&b, projection.Report{}, view.TableOptions{})
	if b.String() != projection.NoEvidence+"\n" {
		t.Fatalf("no evidence: %q", b.String())
	}
}

func TestDetailExplainsUnknowns(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At)
	d := strings.Join(view.Detail(m.Node("server-9"), s.At), "\n")
	for _, want := range []string{"observed from outside", "history", "? unknown", "Last diagnostics", "presence only", "Events (last"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail lacks %q:\n%s", want, d)
		}
	}
	d = strings.Join(view.Detail(m.Node("agent-1"), s.At), "\n")
	if !strings.Contains(d, "snapshot      ? unknown: no snapshot source") || strings.Contains(d, "sk-ant") {
		t.Fatalf("agent-1 detail:\n%s", d)
	}
}

// The tree a model keeps by inserting children as they appear is the tree
// built from scratch, whatever the order children and parents arrive in.
func TestIncrementalTreeMatchesRebuild(t *testing.T) {
	for seed := range 50 {
		rng := uint64(seed*7919 + 1)
		next := func(n int) int {
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			return int(rng % uint64(n))
		}
		s := viewtest.New(t0)
		const kids = 30
		loops := seed%2 == 1
		later := func(i int) string { // a parent that comes later (no loop), or any (loops)
			if loops {
				return fmt.Sprintf("c%02d", next(kids))
			}
			return fmt.Sprintf("c%02d", i+1+next(kids-i))
		}
		for i := range kids - 1 {
			c := viewtest.Child{ID: fmt.Sprintf("c%02d", i)}
			switch next(4) {
			case 0, 3:
				c.Parent = later(i)
			case 1:
				c.Root, c.Attempt = later(i), int64(1+next(3))
			}
			s.Created(c)
		}
		m := view.NewModel()
		lines := viewtest.Lines(s.Out)
		for i := range s.Out {
			m.Apply(&s.Out[i], lines[i], int64(i+1))
			if next(3) == 0 {
				m.Sync(s.At)
			}
		}
		m.Sync(s.At)
		got := strings.Join(ids(view.Flatten(m.Roots(), nil)), "\n")
		fresh := view.NodesOf(nil)
		for _, n := range m.Nodes() {
			fresh = append(fresh, &view.Node{View: n.View})
		}
		want := strings.Join(ids(view.Flatten(view.Tree(fresh), nil)), "\n")
		if loops {
			// Where a loop is cut depends on the order it is found in;
			// every child is still shown exactly once.
			seen := map[string]int{}
			for _, r := range view.Flatten(m.Roots(), nil) {
				seen[r.Node.ID()]++
			}
			for id, n := range seen {
				if n != 1 {
					t.Fatalf("seed %d: %s shown %d times", seed, id, n)
				}
			}
			if len(seen) != m.Len() {
				t.Fatalf("seed %d: %d of %d children shown", seed, len(seen), m.Len())
			}
			continue
		}
		if got != want {
			t.Fatalf("seed %d: incremental tree\n%s\nrebuilt\n%s", seed, got, want)
		}
	}
}

// What an agent says about its own run is shown as its report, attributed.
func TestDetailShowsAgentReportAttributed(t *testing.T) {
	s := viewtest.New(t0)
	c := viewtest.Agent
	s.Created(c)
	s.States(c, event.StateStarting, event.StateRunning)
	s.Event(c, event.KindTerminal, event.StateCompleted, "", map[string]any{
		"exit": map[string]any{"code": 0}, "claim": "process-exit-status-only",
		"agentReport": map[string]any{"reportedBy": "claude-code", "subtype": "success", "numTurns": 3, "totalCostUsd": 0.0008},
	})
	m := model(t, s, s.At)
	d := strings.Join(view.Detail(m.Node(c.ID), s.At), "\n")
	if !strings.Contains(d, "Reported  claude-code reports (its own account, not lcwrap's): success, 3 turns, $0.0008") {
		t.Fatalf("no attributed report:\n%s", d)
	}
}

// The open roots a model keeps as children appear, end and move under
// the children they wait for are the roots whose tree has a child not
// ended, in the roots' order, after every Sync; Ended counts the ended.
// A view that hides ended children walks these alone (tui), so Flatten
// of them is Flatten of every root with that filter.
func TestOpenRootsMatchTheTrees(t *testing.T) {
	notEnded := func(n *view.Node) bool { return !n.View.Ended() }
	for seed := range 60 {
		rng := uint64(seed*104729 + 7)
		next := func(n int) int {
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			return int(rng % uint64(n))
		}
		const kids = 40
		s := viewtest.New(t0)
		m := view.NewModel()
		applied := 0
		check := func(step string) {
			m.Sync(s.At)
			var want []*view.Node
			ended := 0
			var open func(n *view.Node) bool
			open = func(n *view.Node) bool {
				ok := !n.View.Ended()
				for _, k := range n.Kids() {
					ok = open(k) || ok
				}
				return ok
			}
			for _, r := range m.Roots() {
				if open(r) {
					want = append(want, r)
				}
			}
			for _, n := range m.Nodes() {
				if n.View.Ended() {
					ended++
				}
			}
			if got := ids(rowsOf(m.OpenRoots())); strings.Join(got, ",") != strings.Join(ids(rowsOf(want)), ",") {
				t.Fatalf("seed %d %s: open roots %v, want %v", seed, step, got, ids(rowsOf(want)))
			}
			if a, b := strings.Join(ids(view.Flatten(m.OpenRoots(), notEnded)), ","), strings.Join(ids(view.Flatten(m.Roots(), notEnded)), ","); a != b {
				t.Fatalf("seed %d %s: rows of the open roots %s, of every root %s", seed, step, a, b)
			}
			if m.Ended() != ended {
				t.Fatalf("seed %d %s: Ended %d, want %d", seed, step, m.Ended(), ended)
			}
		}
		flush := func() {
			lines := viewtest.Lines(s.Out[applied:])
			for i := range lines {
				m.Apply(&s.Out[applied+i], lines[i], int64(applied+i+1))
			}
			applied = len(s.Out)
		}
		var started []viewtest.Child
		for i := range kids {
			c := viewtest.Child{ID: fmt.Sprintf("c%02d", i)}
			switch next(4) {
			case 0: // a parent that may come later
				c.Parent = fmt.Sprintf("c%02d", next(kids))
			case 1:
				c.Root, c.Attempt = fmt.Sprintf("c%02d", next(kids)), int64(1+next(3))
			}
			if c.Parent == c.ID || c.Root == c.ID {
				c.Parent, c.Root, c.Attempt = "", "", 0
			}
			s.Created(c)
			started = append(started, c)
			if next(2) == 0 {
				e := started[next(len(started))]
				s.End(e, event.StateCompleted, 0)
			}
			if next(3) == 0 {
				e := started[next(len(started))]
				s.States(e, event.StateRunning) // not after an end: a conflict, still ended
			}
			flush()
			if next(3) == 0 {
				check(fmt.Sprintf("after c%02d", i))
			}
		}
		for _, c := range started {
			s.End(c, event.StateFailed, 1)
			flush()
			if next(4) == 0 {
				check("ending " + c.ID)
			}
		}
		check("at the end")
		if len(m.OpenRoots()) != 0 {
			t.Fatalf("seed %d: every child ended, open roots %v", seed, ids(rowsOf(m.OpenRoots())))
		}
	}
}

func rowsOf(nodes []*view.Node) []view.Row {
	out := make([]view.Row, len(nodes))
	for i, n := range nodes {
		out[i] = view.Row{Node: n}
	}
	return out
}

// A history keeps the latest RecentEvents events and RecentDiagnostics
// diagnostics, oldest first, whatever their number: fewer than the bound
// (the rings grow as events come), the bound, and many more.
func TestHistoryKeepsTheLatest(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 15, 16, 17, 40} {
		s := viewtest.New(t0)
		c := viewtest.Child{ID: "c"}
		s.Created(c)
		for i := range n {
			s.Event(c, event.KindActivity, "", fmt.Sprintf("step %d", i), nil)
			s.Event(c, event.KindDiagnostic, "", "", map[string]any{"message": fmt.Sprintf("diag %d", i)})
		}
		h := model(t, s, s.At).Node("c").Hist
		var want, got []string
		for i := max(0, 2*n+1-view.RecentEvents); i < 2*n+1; i++ {
			switch {
			case i == 0:
				want = append(want, "created")
			case i%2 == 1:
				want = append(want, fmt.Sprintf("step %d", (i-1)/2))
			default:
				want = append(want, fmt.Sprintf("diag %d", (i-1)/2))
			}
		}
		for _, e := range h.Recent() {
			switch {
			case e.Kind == event.KindCreated:
				got = append(got, "created")
			case e.Kind == event.KindDiagnostic:
				var d struct{ Message string }
				json.Unmarshal(e.Details, &d)
				got = append(got, d.Message)
			default:
				got = append(got, e.Activity)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%d steps: recent %v, want %v", n, got, want)
		}
		var diags []string
		for _, e := range h.Diagnostics() {
			var d struct{ Message string }
			json.Unmarshal(e.Details, &d)
			diags = append(diags, d.Message)
		}
		var wantD []string
		for i := max(0, n-view.RecentDiagnostics); i < n; i++ {
			wantD = append(wantD, fmt.Sprintf("diag %d", i))
		}
		if strings.Join(diags, ",") != strings.Join(wantD, ",") {
			t.Fatalf("%d steps: diagnostics %v, want %v", n, diags, wantD)
		}
	}
}
