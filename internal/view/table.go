package view

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// A column of the table: its title and the width it takes at most (see
// fitSteps for how it gives way).
type column struct {
	title    string
	max      int
	middle   bool // cut in the middle (ids), not at the end
	optional bool // shown only when a row has text in it (HOST: a fleet's)
}

// The columns of `lcwrap status` and of `lcwrap top`, in order.
const (
	ColHost = iota // a fleet's host; not shown for one journal
	ColChild
	ColState
	ColUnknown
	ColActivity
	ColFresh
	ColStarted
	ColDuration
	ColExit
	ColSource
	ColCommand
	NumCols
)

var columns = [NumCols]column{
	ColHost:     {title: "HOST", max: 24, middle: true, optional: true},
	ColChild:    {title: "CHILD", max: 40, middle: true},
	ColState:    {title: "STATE", max: 20},
	ColUnknown:  {title: "UNK", max: 3},
	ColActivity: {title: "ACTIVITY", max: 40},
	ColFresh:    {title: "FRESHNESS", max: 19}, // "stale (host silent)"
	ColStarted:  {title: "STARTED", max: 12},
	ColDuration: {title: "DURATION", max: 8},
	ColExit:     {title: "EXIT", max: 9},
	ColSource:   {title: "SOURCE", max: 30},
	ColCommand:  {title: "COMMAND", max: 48},
}

// Cell is one cell: plain text, an optional lineage prefix drawn before
// it (never cut) and an ANSI colour.
type Cell struct {
	Prefix, Text, Color string
}

// Cells returns the cells of one row for the child at now.
func Cells(r Row, now time.Time) [NumCols]Cell {
	v := &r.Node.View
	id := termtext.Clean(v.ChildID)
	if r.Node.Retry {
		id += fmt.Sprintf(" #%d", v.Lineage.Attempt)
	}
	c := [NumCols]Cell{
		ColHost:     {Text: termtext.Clean(r.Node.Host)},
		ColChild:    {Prefix: r.Prefix, Text: id},
		ColState:    {Text: Symbol(v.Display) + " " + StateText(v), Color: Color(v.Display)},
		ColUnknown:  {Text: UnknownMark(v), Color: sgrYellow},
		ColActivity: {Text: Activity(v)},
		ColExit:     {Text: Exit(v)},
		ColSource:   {Text: Source(v)},
		ColCommand:  {Text: Command(v)},
	}
	ClockCells(&c, v, now)
	return c
}

// ClockCells sets the cells of a row that the clock changes (freshness,
// start, duration) for v at now; the others depend on v alone, so a view
// redrawn for the clock may keep them.
func ClockCells(c *[NumCols]Cell, v *projection.ChildView, now time.Time) {
	fresh, stale := Fresh(v, now)
	c[ColFresh] = Cell{Text: fresh}
	if stale {
		c[ColFresh].Color = sgrYellow
	}
	c[ColStarted] = Cell{Text: Started(v, now)}
	c[ColDuration] = Cell{Text: Duration(v, now)}
}

// Layout is the widths of the columns shown for a table of rows; a
// column of width 0 is not shown.
type Layout [NumCols]int

func width(s string) int { return utf8.RuneCountInString(s) }

// fitSteps is how a table gives way on a narrow terminal, in order:
// each step shrinks a column down to a floor, or drops it.
var fitSteps = []struct {
	col   int
	floor int
	drop  bool
}{
	{col: ColCommand, floor: 12}, {col: ColActivity, floor: 16}, {col: ColCommand, drop: true},
	{col: ColSource, floor: 8}, {col: ColSource, drop: true}, {col: ColStarted, drop: true},
	{col: ColActivity, floor: 10}, {col: ColChild, floor: 16}, {col: ColDuration, drop: true},
	{col: ColExit, floor: 4}, {col: ColChild, floor: 12}, {col: ColActivity, drop: true},
	{col: ColFresh, drop: true}, {col: ColUnknown, drop: true}, {col: ColHost, floor: 8}, {col: ColChild, floor: 4},
	{col: ColHost, floor: 4},
}

// Fit lays out cells for a terminal of the given width (0: no limit
// beyond each column's cap): columns shrink, then the least useful are
// dropped, so every row stays one line.
func Fit(rows [][NumCols]Cell, total int) Layout {
	var l Layout
	for i, c := range columns {
		l[i] = width(c.title)
		used := false
		for _, r := range rows {
			l[i] = max(l[i], min(width(r[i].Prefix)+width(r[i].Text), c.max))
			used = used || r[i].Text != ""
		}
		if c.optional && !used {
			l[i] = 0
		}
	}
	if total <= 0 {
		return l
	}
	sum := func() int {
		s, n := 0, 0
		for _, w := range l {
			if w > 0 {
				s += w
				n++
			}
		}
		return s + 2*max(n-1, 0)
	}
	for _, st := range fitSteps {
		if sum() <= total {
			break
		}
		if st.drop {
			l[st.col] = 0
			continue
		}
		if l[st.col] > 0 {
			floor := max(st.floor, width(columns[st.col].title))
			l[st.col] = max(min(floor, l[st.col]), l[st.col]-(sum()-total))
		}
	}
	// Give what is left to the columns that were cut.
	for _, i := range []int{ColChild, ColSource, ColActivity, ColCommand} {
		if spare := total - sum(); spare > 0 && l[i] > 0 {
			natural := width(columns[i].title)
			for _, r := range rows {
				natural = max(natural, min(width(r[i].Prefix)+width(r[i].Text), columns[i].max))
			}
			l[i] = max(l[i], min(natural, l[i]+spare))
		}
	}
	return l
}

// Render writes one row (or the header, with header set) in layout l,
// one line without a newline, colour only when color is set. The last
// shown column is not padded.
func (l Layout) Render(b *strings.Builder, cells [NumCols]Cell, color bool) {
	last := NumCols - 1
	for last > 0 && l[last] == 0 {
		last--
	}
	first := true
	for i, w := range l {
		if w == 0 {
			continue
		}
		if !first {
			b.WriteString("  ")
		}
		first = false
		c := cells[i]
		text := c.Text
		room := w - width(c.Prefix)
		if room < 1 {
			c.Prefix, room = "", w
		}
		if columns[i].middle {
			text = termtext.CutMiddle(text, room)
		} else {
			text = termtext.Cut(text, room)
		}
		b.WriteString(c.Prefix)
		if color && c.Color != "" && text != "" {
			b.WriteString(c.Color + text + sgrReset)
		} else {
			b.WriteString(text)
		}
		if i < last {
			b.WriteString(strings.Repeat(" ", max(0, room-width(text))))
		}
	}
}

// Header returns the header cells.
func Header() [NumCols]Cell {
	var h [NumCols]Cell
	for i, c := range columns {
		h[i].Text = c.title
	}
	return h
}

// NodesOf makes tree nodes of a report's children (no history).
func NodesOf(children []projection.ChildView) []*Node {
	nodes := make([]*Node, len(children))
	for i := range children {
		nodes[i] = &Node{View: children[i]}
	}
	return nodes
}

// TableOptions says how to print the status table.
type TableOptions struct {
	Width int  // the terminal's width; 0 when not a terminal (no fitting)
	Color bool // ANSI colours (a terminal, no NO_COLOR)
	Now   time.Time
	// AllCommand is the command line that shows the ended children too,
	// for the same input ("lcwrap status --all" when empty).
	AllCommand string
}

// Table writes `lcwrap status`: one line per child, lineage by
// indentation, or exactly projection.NoEvidence when there is no
// evidence at all.
func Table(w io.Writer, rep projection.Report, o TableOptions) error {
	var b strings.Builder
	all := o.AllCommand
	if all == "" {
		all = "lcwrap status --all"
	}
	switch {
	case !rep.Evidence:
		b.WriteString(projection.NoEvidence + "\n")
	case len(rep.Children) == 0:
		fmt.Fprintf(&b, "No active children; %d ended ('%s' shows them).\n", rep.Hidden, all)
	default:
		rows := Flatten(Tree(NodesOf(rep.Children)), nil)
		cells := make([][NumCols]Cell, len(rows))
		provisional, unknown := false, false
		for i, r := range rows {
			cells[i] = Cells(r, o.Now)
			provisional = provisional || r.Node.View.Provisional
			unknown = unknown || cells[i][ColUnknown].Text != ""
		}
		l := Fit(cells, o.Width)
		l.Render(&b, Header(), false)
		b.WriteByte('\n')
		for _, c := range cells {
			l.Render(&b, c, o.Color)
			b.WriteByte('\n')
		}
		if provisional {
			b.WriteString(termtext.Cut("* provisional: events are missing (a stream joined mid-way, or a sequence gap); the state may be behind.", lineRoom(o.Width)) + "\n")
		}
		if unknown && l[ColUnknown] > 0 {
			b.WriteString(termtext.Cut("?N: N of the five capabilities are unknown ('lcwrap top' shows why).", lineRoom(o.Width)) + "\n")
		}
		if rep.Hidden > 0 {
			fmt.Fprintf(&b, "%d ended not shown ('%s' shows them).\n", rep.Hidden, all)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func lineRoom(w int) int {
	if w <= 0 {
		return 1 << 20
	}
	return w
}
