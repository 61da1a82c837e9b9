package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/live"
)

// Options configure the view.
type Options struct {
	Live  *live.Follower
	Color bool             // ANSI colours (a terminal without NO_COLOR)
	Now   func() time.Time // the clock; time.Now when nil
	// Interval is the least time between two clock redraws
	// (DefaultInterval when zero); keys and new events redraw at once.
	Interval time.Duration
}

// DefaultInterval is how often, at most, the clock redraws the screen
// while durations in seconds are on it: every 2 s, between htop's 1.5 s
// and top's 3 s. Each redraw wakes the process, and on the machines this
// was measured on a wake costs about 0.4 ms of CPU: once a second would
// be about 24 ms a minute, over the 20 ms top may cost while idle.
const DefaultInterval = 2 * time.Second

// MinInterval is the shortest interval top takes.
const MinInterval = 100 * time.Millisecond

// Model is the bubbletea model of top. Its fields are the screen's
// state; View renders them and nothing else.
type Model struct {
	live     *live.Follower
	color    bool
	clock    func() time.Time
	interval time.Duration

	width, height int
	caught        bool
	now           time.Time
	lines         int64
	evidence      bool
	tally         map[string]int
	total         int
	state         live.State

	rows      []view.Row
	cached    map[int]*[view.NumCols]view.Cell // cells of rows drawn, by index, until the next rebuild
	sel       int
	selID     string
	top       int
	showEnded bool
	hidden    int // ended children not shown

	filter  string
	editing bool

	host   string                   // a fleet's host filter ("" for every host): the key H
	offset map[string]time.Duration // a fleet's hosts' clocks behind the reader's, as of the last refresh

	detail     bool
	detailText []string
	scroll     int

	fatal error

	timer   *time.Timer // the clock redraw, set for due
	due     time.Time
	waiting bool // a command waits for the timer
}

// New returns the model of top over a live journal.
func New(o Options) *Model {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	return &Model{live: o.Live, color: o.Color, clock: o.Now, interval: o.Interval, width: 80, height: 24}
}

// Messages from the follower and the clock.
type (
	changedMsg struct{}
	caughtMsg  struct{}
	tickMsg    time.Time
	// FatalMsg ends the program with an error (the follower panicked).
	FatalMsg struct{ Err error }
)

func (m *Model) waitChanged() tea.Cmd {
	ch := m.live.Changed()
	return func() tea.Msg { <-ch; return changedMsg{} }
}

func (m *Model) waitCaught() tea.Cmd {
	ch := m.live.CaughtUp()
	return func() tea.Msg { <-ch; return caughtMsg{} }
}

// Init waits for the journal's first reading.
func (m *Model) Init() tea.Cmd { return m.waitCaught() }

// Err is why the program ended, when not by a key.
func (m *Model) Err() error { return m.fatal }

// Update applies one message, then sets the clock for the next instant
// at which the screen would read differently (see schedule).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.fatal != nil {
		return m, cmd
	}
	return m, tea.Batch(cmd, m.schedule())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.clamp()
	case caughtMsg:
		m.caught = true
		m.refresh()
		return m.waitChanged()
	case changedMsg:
		m.refresh()
		return m.waitChanged()
	case tickMsg:
		// Only the clock moved: durations and freshness are computed as
		// the rows are drawn, so nothing is synced or rebuilt (the detail
		// pane's lines are made again).
		m.waiting = false
		m.now = m.clock()
		if m.detail {
			m.live.With(func(vm *view.Model) { m.detailText = m.detailLines(vm) })
		}
	case FatalMsg:
		m.fatal = msg.Err
		if m.timer != nil {
			m.timer.Stop()
		}
		return tea.Quit
	case tea.KeyMsg:
		return m.key(msg)
	}
	return nil
}

// schedule sets the one clock timer for the first instant at which a
// duration or a freshness on the screen would read differently
// (view.NextChange of the rows shown, or of the child in the detail
// pane), but no sooner than the interval after the screen's clock (rows
// whose seconds tick at different instants are redrawn together; a
// duration is then at most an interval behind); with
// nothing on the screen that the clock changes, it stops the timer. It
// returns the command that waits for the timer when none is waiting.
func (m *Model) schedule() tea.Cmd {
	next := m.nextChange()
	if next.IsZero() {
		if m.timer != nil && !m.due.IsZero() {
			m.timer.Stop()
		}
		m.due = time.Time{}
		return nil
	}
	if early := m.now.Add(m.interval); next.Before(early) {
		next = early
	}
	if !next.Equal(m.due) {
		d := next.Sub(m.clock())
		if m.timer == nil {
			m.timer = time.NewTimer(d)
		} else {
			m.timer.Reset(d)
		}
		m.due = next
	}
	if m.waiting {
		return nil
	}
	m.waiting = true
	ch := m.timer.C
	return func() tea.Msg { return tickMsg(<-ch) }
}

// nextChange is the soonest view.NextChange of what the screen shows.
func (m *Model) nextChange() time.Time {
	var shown []view.Row
	switch {
	case m.caught && m.evidence && len(m.rows) == 0 && !m.detail:
		return m.hostsChange()
	case !m.caught || !m.evidence || len(m.rows) == 0:
		return time.Time{}
	case m.detail:
		if m.detailText == nil || m.rows[m.sel].Node.Key() != m.selID {
			return time.Time{}
		}
		shown = m.rows[m.sel : m.sel+1]
	default:
		shown = m.rows[m.top:min(len(m.rows), m.top+m.listHeight())]
	}
	var next time.Time
	if !m.detail {
		next = m.hostsChange() // the hosts' "last heard"
	}
	for _, r := range shown {
		off := m.offset[r.Node.Host]
		if t := view.NextChange(&r.Node.View, m.now.Add(-off)); !t.IsZero() {
			if t = t.Add(off); next.IsZero() || t.Before(next) {
				next = t
			}
		}
	}
	return next
}

// Due is when the clock next redraws the screen (zero: never, nothing on
// it changes with time).
func (m *Model) Due() time.Time { return m.due }

// refresh syncs the model and rebuilds the rows (under the live lock).
func (m *Model) refresh() {
	m.now = m.clock()
	m.state = m.live.State()
	m.live.With(func(vm *view.Model) {
		vm.Sync(m.now)
		if fs := m.state.Fleet; fs != nil {
			m.offset = make(map[string]time.Duration, len(fs.Hosts))
			for _, h := range fs.Hosts {
				m.offset[h.Host] = m.now.Sub(vm.HostNow(h.Host, m.now))
			}
		}
		m.lines, m.evidence, m.total = vm.Lines(), vm.Evidence(), vm.Len()
		m.tally = map[string]int{}
		for k, v := range vm.Tally() {
			m.tally[k] = v
		}
		m.rebuild(vm)
		if m.detail {
			m.detailText = m.detailLines(vm)
		}
	})
}

func (m *Model) rebuild(vm *view.Model) {
	needle := strings.ToLower(m.filter)
	m.hidden = 0
	keep := func(n *view.Node) bool {
		if m.host != "" && n.Host != m.host {
			return false
		}
		if !m.showEnded && n.View.Ended() {
			m.hidden++
			return false
		}
		return needle == "" || matches(n, needle)
	}
	atTop := m.sel == 0 && !m.detail
	if !m.showEnded && m.host == "" && needle == "" {
		// Ended children hidden, nothing else: the trees with a child
		// not ended are the rows, and the ended ones are hidden but for
		// the ancestors shown (subtracted below). The trees of ended
		// children alone — most of a long journal — are not walked.
		m.rows, m.cached = view.Flatten(vm.OpenRoots(), keep), nil
		m.hidden = vm.Ended()
	} else {
		m.rows, m.cached = view.Flatten(vm.Roots(), keep), nil
	}
	// Ended ancestors shown for their lineage are not hidden.
	for _, r := range m.rows {
		if !m.showEnded && r.Node.View.Ended() && (m.host == "" || r.Node.Host == m.host) {
			m.hidden--
		}
	}
	// The selection stays on its child; at the top it stays at the top,
	// where new work appears.
	m.sel = 0
	for i, r := range m.rows {
		if !atTop && r.Node.Key() == m.selID {
			m.sel = i
			break
		}
	}
	m.clamp()
}

func matches(n *view.Node, needle string) bool {
	v := &n.View
	for _, s := range []string{v.ChildID, v.Display, view.Activity(v), v.Source, view.Command(v), n.Host} {
		if strings.Contains(strings.ToLower(s), needle) {
			return true
		}
	}
	return false
}

// listHeight is how many rows of children fit: the screen minus the
// title, the column header, the status line and the help line (and a
// fleet's host lines).
func (m *Model) listHeight() int { return max(1, m.height-4-m.hostLines()) }

func (m *Model) clamp() {
	if m.sel >= len(m.rows) {
		m.sel = len(m.rows) - 1
	}
	if m.sel < 0 {
		m.sel = 0
	}
	h := m.listHeight()
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+h {
		m.top = m.sel - h + 1
	}
	m.top = max(0, min(m.top, len(m.rows)-h))
	if len(m.rows) > 0 {
		m.selID = m.rows[m.sel].Node.Key()
	}
}

func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		// Keys typed faster than they are read arrive as one message.
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	s := k.String()
	if s == "ctrl+c" {
		return tea.Quit
	}
	if m.editing {
		switch s {
		case "enter":
			m.editing = false
		case "esc":
			m.editing, m.filter = false, ""
		case "backspace":
			if r := []rune(m.filter); len(r) > 0 {
				m.filter = string(r[:len(r)-1])
			}
		default:
			if k.Type == tea.KeyRunes || k.Type == tea.KeySpace {
				m.filter += string(k.Runes)
			}
		}
		m.refresh()
		return nil
	}
	if m.detail {
		switch s {
		case "q":
			return tea.Quit
		case "esc", "enter", "backspace", "left", "h":
			m.detail, m.scroll = false, 0
		case "up", "k":
			m.scroll = max(0, m.scroll-1)
		case "down", "j":
			m.scroll = min(max(0, len(m.detailText)-m.height+2), m.scroll+1)
		}
		return nil
	}
	switch s {
	case "q":
		return tea.Quit
	case "up", "k":
		m.sel--
	case "down", "j":
		m.sel++
	case "pgup":
		m.sel -= m.listHeight()
	case "pgdown", " ":
		m.sel += m.listHeight()
	case "home", "g":
		m.sel = 0
	case "end", "G":
		m.sel = len(m.rows) - 1
	case "enter", "right", "l":
		if len(m.rows) > 0 {
			m.detail, m.scroll = true, 0
			m.refresh()
		}
		return nil
	case "/":
		m.editing = true
	case "esc":
		m.filter = ""
		m.refresh()
		return nil
	case "e":
		m.showEnded = !m.showEnded
		m.refresh()
		return nil
	case "H":
		if m.state.Fleet != nil {
			m.host = nextHost(m.state.Fleet.Hosts, m.host)
			m.refresh()
		}
		return nil
	}
	m.clamp()
	return nil
}

// Selected returns the id of the selected child ("" when none).
func (m *Model) Selected() string {
	if len(m.rows) == 0 {
		return ""
	}
	return m.selID
}

// Rows returns the ids of the rows shown, in order (for tests).
func (m *Model) Rows() []string {
	ids := make([]string, len(m.rows))
	for i, r := range m.rows {
		ids[i] = r.Node.ID()
	}
	return ids
}

// title is the first line: the journal and how many children are in
// each state.
func (m *Model) title() string {
	if m.state.Fleet != nil {
		return m.fleetTitle()
	}
	var b strings.Builder
	b.WriteString("lcwrap top  ")
	b.WriteString(m.state.Path)
	fmt.Fprintf(&b, "  %d children:", m.total)
	for _, st := range view.States {
		if n := m.tally[st]; n > 0 {
			fmt.Fprintf(&b, " %s%d %s", view.Symbol(st), n, st)
		}
	}
	return b.String()
}

func (m *Model) statusLine() string {
	var parts []string
	switch {
	case m.editing:
		parts = append(parts, "filter: "+m.filter+"▏ (enter keeps it, esc clears)")
	case m.filter != "":
		parts = append(parts, fmt.Sprintf("filter %q: %d shown", m.filter, len(m.rows)))
	}
	if m.host != "" {
		parts = append(parts, fmt.Sprintf("host %s (H: next host)", termtext.Clean(m.host)))
	}
	if m.hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d ended hidden (e shows)", m.hidden))
	} else if m.showEnded {
		parts = append(parts, "ended shown (e hides)")
	}
	if be := m.state.Blocked; be != nil {
		parts = append(parts, fmt.Sprintf("journal blocked at line %d (%s): showing the lines before it", be.Line, be.Class))
	}
	if n := m.state.Notice; n.Kind != "" && n.Kind != journal.NoticeReplaced {
		parts = append(parts, fmt.Sprintf("journal %s at line %d", n.Kind, n.Sequence))
	}
	if m.state.Rereads > 0 {
		parts = append(parts, fmt.Sprintf("journal replaced or cut: read again %d×", m.state.Rereads))
	}
	if err := m.state.Err; err != nil {
		parts = append(parts, "following: "+termtext.Clean(err.Error()))
	}
	parts = append(parts, fmt.Sprintf("%d events", m.lines))
	if fs := m.state.Fleet; fs != nil {
		parts = append(parts, fmt.Sprintf("%d duplicates shown once, %d damaged", fs.Totals.Duplicates, fs.Totals.Damage))
	}
	return strings.Join(parts, " · ")
}

const helpLine = "↑↓/jk move  enter details  / filter  e ended  q quit"

// detailHelp is the help line of the detail pane.
const detailHelp = "↑↓/jk scroll  esc back  q quit"

// View renders the screen.
func (m *Model) View() string {
	if m.fatal != nil {
		return ""
	}
	w := max(m.width, 1)
	var b strings.Builder
	line := func(s string) {
		b.WriteString(termtext.Cut(s, w))
		b.WriteByte('\n')
	}
	switch {
	case !m.caught:
		line("lcwrap top  reading " + m.state.Path + " …")
		return b.String()
	case !m.evidence && m.state.Fleet != nil:
		b.WriteString(projection.NoEvidence + "\n")
		lines := wrap(termtext.Clean("Read the fleet at "+m.state.Path+": no event from any host yet; waiting for the gateway to write one."), w)
		for _, l := range lines {
			line(l)
		}
		pad(&b, m.height-2-len(lines))
		b.WriteString(termtext.Cut(m.help(), w))
		return b.String()
	case !m.evidence:
		b.WriteString(projection.NoEvidence + "\n")
		// Where it looked, and what to do.
		var where string
		if m.state.Missing {
			where = "No journal at " + m.state.Path + " yet: waiting for it. Run a command under lcwrap first ('lcwrap -- CMD'), or name the journal with --journal PATH or $LCWRAP_JOURNAL."
		} else {
			where = "Read " + m.state.Path + ": it holds no lifecycle event yet; waiting for one."
		}
		lines := wrap(termtext.Clean(where), w)
		for _, l := range lines {
			line(l)
		}
		pad(&b, m.height-2-len(lines))
		b.WriteString(termtext.Cut(helpLine, w))
		return b.String()
	case m.detail:
		end := min(len(m.detailText), m.scroll+m.height-1)
		for _, l := range m.detailText[min(m.scroll, end):end] {
			line(l)
		}
		pad(&b, m.height-1-(end-min(m.scroll, end)))
		b.WriteString(termtext.Cut(detailHelp, w))
		return b.String()
	}
	line(m.title())
	for _, l := range m.hostTable(w) {
		b.WriteString(l) // cut to the width already, colour after the cut
		b.WriteByte('\n')
	}
	h := m.listHeight()
	shown := m.rows[m.top:min(len(m.rows), m.top+h)]
	cells := make([][view.NumCols]view.Cell, len(shown))
	for i, r := range shown {
		cells[i] = m.cells(m.top+i, r)
	}
	l := view.Fit(cells, w-2)
	var row strings.Builder
	row.WriteString("  ")
	l.Render(&row, view.Header(), false)
	if m.color {
		b.WriteString("\x1b[1m" + row.String() + "\x1b[0m\n")
	} else {
		b.WriteString(row.String() + "\n")
	}
	if len(m.rows) == 0 {
		line("  (no children match; esc clears the filter, e shows ended ones)")
		pad(&b, h-1)
	}
	for i, c := range cells {
		row.Reset()
		selected := m.top+i == m.sel
		if selected {
			row.WriteString("▸ ")
		} else {
			row.WriteString("  ")
		}
		l.Render(&row, c, m.color && !selected)
		if selected && m.color {
			b.WriteString("\x1b[7m" + row.String() + "\x1b[0m\n")
		} else {
			b.WriteString(row.String() + "\n")
		}
	}
	if len(m.rows) > 0 {
		pad(&b, h-len(cells))
	}
	line(m.statusLine())
	b.WriteString(termtext.Cut(m.help(), w))
	return b.String()
}

// cells returns the cells of row i at m.now. Those the clock does not
// change are kept from the row's last drawing until the rows are built
// again (rebuild): a redraw for the clock formats only the durations.
func (m *Model) cells(i int, r view.Row) [view.NumCols]view.Cell {
	now := m.now.Add(-m.offset[r.Node.Host]) // a fleet's child: on its host's clock
	if c, ok := m.cached[i]; ok {
		view.ClockCells(c, &r.Node.View, now)
		return *c
	}
	if m.cached == nil || len(m.cached) > 4*m.listHeight() {
		m.cached = map[int]*[view.NumCols]view.Cell{}
	}
	c := view.Cells(r, now)
	m.cached[i] = &c
	return c
}

func pad(b *strings.Builder, n int) {
	for range max(0, n) {
		b.WriteByte('\n')
	}
}

func (m *Model) detailLines(vm *view.Model) []string {
	n := vm.Node(m.selID)
	if n == nil {
		return []string{m.selID + ": no longer in the journal (it was read again)"}
	}
	var out []string
	for _, l := range view.Detail(n, vm.HostNow(n.Host, m.now)) {
		out = append(out, wrap(l, max(m.width, 20))...)
	}
	return out
}

// wrap breaks a line at spaces to fit width; continuation lines are
// indented two more than the line itself.
func wrap(s string, width int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	indent := strings.Repeat(" ", min(len(s)-len(strings.TrimLeft(s, " "))+2, width/2))
	var out []string
	line, started := "", false
	for _, word := range strings.Split(s, " ") {
		switch {
		case !started:
			line, started = word, true
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			out = append(out, line)
			line = indent + word
		}
	}
	return append(out, line)
}
