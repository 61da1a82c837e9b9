package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view"
)

// DefaultLimit is how many children a report draws one by one;
// past it, ended children are counted in one aggregate line per state.
const DefaultLimit = 500

// Options select what a report shows.
type Options struct {
	Input string    // what was read, named in the header
	Now   time.Time // the report's moment
	// Since leaves out children that ended before it (unix ms; 0: all)
	// and starts the timeline there.
	Since int64
	// Children keeps only these children and their descendants (nil:
	// all).
	Children []string
	// Limit is how many children are drawn one by one
	// (DefaultLimit when 0).
	Limit int
	// BadLines, Blocked: what the reader skipped or stopped at.
	BadLines int64
	Blocked  string
	// Fleet, when set, says the model is a fleet's (internal/fleet): the
	// timeline has one lane per host, and every child row its host.
	Fleet *Fleet
}

// Fleet is what a fleet's report says of its hosts.
type Fleet struct {
	Hosts  []fleet.HostView // every host heard from, by name
	Totals fleet.Totals
}

// Summary says what a report drew and what it aggregated.
type Summary struct {
	Matched    int            // children the filters kept
	Drawn      int            // drawn one by one (ancestors shown for lineage included)
	Aggregated map[string]int // ended children not drawn, by state
	Unmatched  []string       // --child ids no child has
}

// stateFill is each displayed state's colour in the report ("" for
// another word). A switch rather than a map: package initialisation is
// on every process's start-up path.
func stateFill(state string) string {
	switch state {
	case "created":
		return "#6b8fd6"
	case "starting":
		return "#3f6fd1"
	case "running":
		return "#2e9d4a"
	case "waiting":
		return "#f0b400"
	case "observed":
		return "#2aa7b8"
	case "unknown":
		return "#a0a0a0"
	case "completed":
		return "#8c8c8c"
	case "failed":
		return "#d43c3c"
	case "cancelled":
		return "#a94fc1"
	case "lost":
		return "#6e2a2a"
	}
	return ""
}

// Write writes the self-contained HTML report of m (already Synced
// at o.Now): a timeline with one bar per child coloured by state (stale
// spans hatched), nested by lineage; a table of the children with their
// facts; and a section per child with its events, capabilities and why
// each unknown one is unknown. It loads nothing: inline CSS and SVG, a
// Content-Security-Policy that forbids every fetch, no script.
func Write(w io.Writer, m *view.Model, o Options) (Summary, error) {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	nowMs := o.Now.UnixMilli()
	rows, matched, sum := choose(m, o)
	// A fleet's children: each host's on its own lane (a tree stays
	// within its host), and each one's times on the gateway's clock (its
	// host's shifted by the host's estimated skew), so lanes line up.
	hostNow := func(n *view.Node) time.Time { return o.Now }
	off := func(n *view.Node) int64 { return 0 }
	if o.Fleet != nil {
		slices.SortStableFunc(rows, func(a, b view.Row) int { return cmp.Compare(a.Node.Host, b.Node.Host) })
		offs := map[string]int64{}
		for _, h := range o.Fleet.Hosts {
			offs[h.Host] = o.Now.Sub(m.HostNow(h.Host, o.Now)).Milliseconds()
		}
		hostNow = func(n *view.Node) time.Time { return o.Now.Add(-time.Duration(offs[n.Host]) * time.Millisecond) }
		off = func(n *view.Node) int64 { return offs[n.Host] }
	}

	// The time axis: from the earliest start drawn (or --since) to the
	// latest end, or now while something is still going.
	var t0, t1 int64
	for _, r := range rows {
		v := &r.Node.View
		s := at(v.FirstSeenAt)
		if s > 0 && (t0 == 0 || s+off(r.Node) < t0) {
			t0 = s + off(r.Node)
		}
		e := nowMs
		if v.Ended() {
			e = at(v.EndedAt) + off(r.Node)
		}
		t1 = max(t1, e)
	}
	if o.Since > 0 {
		t0 = max(t0, o.Since)
	}
	if t1 <= t0 {
		t1 = t0 + 1000
	}

	b := bufio.NewWriterSize(w, 64<<10)
	esc := func(s string) string { return html.EscapeString(termtext.EscapeBidi(s)) }
	b.WriteString(reportHead)
	title := "lcwrap report"
	if o.Fleet != nil {
		title = fmt.Sprintf("lcwrap report of a fleet: %d hosts", len(o.Fleet.Hosts))
	}
	fmt.Fprintf(b, "<h1>%s</h1>\n<p class=meta>%s · generated %s · %d events · %d children",
		esc(title), esc(o.Input), esc(o.Now.UTC().Format(time.RFC3339)), m.Lines(), m.Len())
	if o.Since > 0 {
		fmt.Fprintf(b, " · since %s", esc(stampMs(o.Since)))
	}
	if o.Children != nil {
		fmt.Fprintf(b, " · children %s and their descendants", esc(strings.Join(o.Children, ", ")))
	}
	b.WriteString("</p>\n")
	b.WriteString("<p class=note>A state is what the events say. <b>completed</b> means the process (or the agent's own report) ended that way: an exit status is how a process ended, never whether its task succeeded. <b>stale</b> (hatched) means its source fell silent past its heartbeat deadline; stale is not lost. <b>?N</b>: N of the five capabilities are unknown; each child's section says why.</p>\n")
	if f := o.Fleet; f != nil {
		writeHosts(b, f, esc)
	}
	if o.BadLines > 0 {
		fmt.Fprintf(b, "<p class=warn>%d lines were not valid events and were skipped ('lcwrap validate' shows why).</p>\n", o.BadLines)
	}
	if o.Blocked != "" {
		fmt.Fprintf(b, "<p class=warn>%s</p>\n", esc(termtext.Clean(o.Blocked)))
	}
	for _, id := range sum.Unmatched {
		fmt.Fprintf(b, "<p class=warn>No child %s in the input.</p>\n", esc(termtext.Clean(id)))
	}
	if !m.Evidence() {
		fmt.Fprintf(b, "<p id=noevidence>%s</p>\n</body></html>\n", esc(projection.NoEvidence))
		return sum, b.Flush()
	}

	// Tally and legend.
	tally := map[string]int{}
	for n := range matched {
		tally[n.View.Display]++
	}
	b.WriteString("<div class=legend>")
	for _, st := range view.States {
		fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s %s <b>%d</b></span>", stateFill(st), view.Symbol(st), st, tally[st])
	}
	b.WriteString("<span><i class=stale></i>stale</span></div>\n")
	if len(sum.Aggregated) > 0 {
		n := 0
		var parts []string
		for _, st := range view.States {
			if c := sum.Aggregated[st]; c > 0 {
				n += c
				parts = append(parts, fmt.Sprintf("%d %s", c, st))
			}
		}
		fmt.Fprintf(b, "<p class=warn id=aggregated>%d ended children are not drawn one by one (past the limit of %d): %s. --since or --child narrows the report; --limit raises it.</p>\n", n, o.Limit, esc(strings.Join(parts, ", ")))
	}

	// Timeline.
	fmt.Fprintf(b, "<h2>Timeline</h2>\n<div class=axis><span>%s</span><span>%s</span><span>%s</span></div>\n<div class=timeline>\n",
		esc(stampMs(t0)), esc(view.Elapsed(t1-t0)), esc(stampMs(t1)))
	span := float64(t1 - t0)
	x := func(t int64) float64 { return float64(min(max(t, t0), t1)-t0) / span * 1000 }
	lane := "\x00" // no host yet
	for i, r := range rows {
		v := &r.Node.View
		if o.Fleet != nil && r.Node.Host != lane {
			lane = r.Node.Host
			fmt.Fprintf(b, "<div class=lane data-host=\"%s\">%s</div>\n", esc(lane), esc(laneText(o.Fleet, lane)))
		}
		label := termtext.Clean(v.ChildID)
		if r.Node.Retry {
			label += " #" + strconv.FormatInt(v.Lineage.Attempt, 10)
		}
		fmt.Fprintf(b, "<a class=tl href=\"#c%d\"%s data-child=\"%s\" data-state=\"%s\"><span class=lbl>%s%s %s</span><svg viewBox=\"0 0 1000 12\" preserveAspectRatio=\"none\">",
			i, hostAttr(r.Node, esc), esc(v.ChildID), esc(v.Display), esc(r.Prefix), esc(view.Symbol(v.Display)), esc(label))
		d := off(r.Node)
		hostMs := hostNow(r.Node).UnixMilli()
		start := at(v.FirstSeenAt)
		end := hostMs
		if v.Ended() {
			end = at(v.EndedAt)
		}
		for _, s := range segments(r.Node, start, end) {
			s.from, s.to = s.from+d, s.to+d
			if s.to <= t0 || s.from >= t1 {
				continue
			}
			x0, x1 := x(s.from), x(s.to)
			fmt.Fprintf(b, "<rect x=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"%s\"><title>%s%s %s → %s%s</title></rect>",
				x0, max(x1-x0, 1.5), stateFill(s.state), esc(s.state), esc(s.why()), esc(stampMs(s.from)), esc(stampMs(s.to)), esc(s.evidence()))
		}
		for _, s := range staleSpans(r.Node, hostMs, o.Fleet) {
			s.From, s.To = s.From+d, s.To+d
			if s.To <= t0 || s.From >= t1 {
				continue
			}
			x0, x1 := x(s.From), x(s.To)
			fmt.Fprintf(b, "<rect class=stale fill=\"url(#hatch)\" x=\"%.1f\" width=\"%.1f\" height=\"12\"><title>stale %s → %s</title></rect>", x0, max(x1-x0, 1.5), esc(stampMs(s.From)), esc(stampMs(s.To)))
		}
		b.WriteString("</svg></a>\n")
	}
	b.WriteString("</div>\n")

	// Table.
	b.WriteString("<h2>Children</h2>\n<table class=children><thead><tr>")
	for col, c := range view.Header() {
		if col != view.ColHost || o.Fleet != nil {
			fmt.Fprintf(b, "<th>%s</th>", c.Text)
		}
	}
	b.WriteString("</tr></thead><tbody>\n")
	for i, r := range rows {
		v := &r.Node.View
		c := view.Cells(r, hostNow(r.Node))
		c[view.ColStarted].Text = orDash(v.FirstSeenAt)
		fmt.Fprintf(b, "<tr%s data-child=\"%s\" data-state=\"%s\">", hostAttr(r.Node, esc), esc(v.ChildID), esc(v.Display))
		if o.Fleet != nil {
			fmt.Fprintf(b, "<td class=host>%s</td>", esc(c[view.ColHost].Text))
		}
		fmt.Fprintf(b, "<td class=id>%s<a href=\"#c%d\">%s</a></td>", esc(r.Prefix), i, esc(c[view.ColChild].Text))
		fmt.Fprintf(b, "<td><span class=st style=\"color:%s\">%s</span></td>", stateFill(v.Display), esc(c[view.ColState].Text))
		for col := view.ColUnknown; col < view.NumCols; col++ {
			fmt.Fprintf(b, "<td>%s</td>", esc(termtext.Cut(c[col].Text, 200)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")

	// One section per child.
	b.WriteString("<h2>Events by child</h2>\n")
	for i, r := range rows {
		fmt.Fprintf(b, "<section id=\"c%d\"%s data-child=\"%s\"><pre>", i, hostAttr(r.Node, esc), esc(r.Node.View.ChildID))
		for _, l := range view.Detail(r.Node, hostNow(r.Node)) {
			b.WriteString(esc(l))
			b.WriteByte('\n')
		}
		b.WriteString("</pre></section>\n")
	}
	b.WriteString("</body></html>\n")
	return sum, b.Flush()
}

// choose returns the rows a report of m with o draws one by one (o.Limit
// set), the children its filters kept, and its summary so far.
func choose(m *view.Model, o Options) ([]view.Row, map[*view.Node]bool, Summary) {
	sum := Summary{Aggregated: map[string]int{}}
	var wanted map[string]bool
	if o.Children != nil {
		wanted = map[string]bool{}
		var ids map[string]bool // a fleet's child ids, on any host
		if o.Fleet != nil {
			ids = map[string]bool{}
			for _, n := range m.Nodes() {
				ids[n.ID()] = true
			}
		}
		for _, id := range o.Children {
			wanted[id] = true
			if ids != nil && !ids[id] || ids == nil && m.Node(id) == nil {
				sum.Unmatched = append(sum.Unmatched, id)
			}
		}
	}
	keep := func(n *view.Node) bool {
		if wanted != nil {
			in := false
			for p := n; p != nil && !in; p = p.Parent() {
				in = wanted[p.ID()]
			}
			if !in {
				return false
			}
		}
		if o.Since > 0 && n.View.Ended() && at(n.View.EndedAt) < o.Since {
			return false
		}
		return true
	}
	matched := map[*view.Node]bool{}
	for _, n := range m.Nodes() {
		if keep(n) {
			matched[n] = true
		}
	}
	sum.Matched = len(matched)
	chosen := matched
	if len(matched) > o.Limit {
		// Every child that has not ended, then the latest ended ones.
		list := make([]*view.Node, 0, len(matched))
		for n := range matched {
			list = append(list, n)
		}
		slices.SortFunc(list, func(a, b *view.Node) int {
			if ea, eb := a.View.Ended(), b.View.Ended(); ea != eb {
				if ea {
					return 1
				}
				return -1
			}
			return cmp.Or(cmp.Compare(b.View.EndedAt, a.View.EndedAt), cmp.Compare(b.View.FirstSeenAt, a.View.FirstSeenAt), cmp.Compare(a.ID(), b.ID()), cmp.Compare(a.Host, b.Host))
		})
		chosen = map[*view.Node]bool{}
		for i, n := range list {
			if i < o.Limit || !n.View.Ended() {
				chosen[n] = true
			} else {
				sum.Aggregated[n.View.Display]++
			}
		}
	}
	rows := view.Flatten(m.Roots(), func(n *view.Node) bool { return chosen[n] })
	sum.Drawn = len(rows)
	return rows, matched, sum
}

// Drawn returns the keys (view.Node.Key) of the children a report of m
// with o draws one by one, their ancestors shown for lineage included.
func Drawn(m *view.Model, o Options) []string {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	rows, _, _ := choose(m, o)
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Node.Key()
	}
	return keys
}

// Read is one reading of a report's input into m: every event, or only
// those of the children keep accepts (by key) when keep is not nil. A
// second reading must read what the first one did, and no further.
type Read func(m *view.Model, keep func(key string) bool) error

// Build reads a report's input into a model for Write, synced at o.Now,
// holding the histories of the children the report draws only: a first
// reading without any history chooses them (Drawn), a second one reads
// their events again into histories of their own. newModel makes an
// empty model (a fleet's judges its hosts). An input that cannot be read
// again (a stream: again false) is read once, every child's history
// kept, as before.
func Build(read Read, again bool, newModel func() *view.Model, o Options) (*view.Model, error) {
	m := newModel()
	if !again {
		err := read(m, nil)
		m.Sync(o.Now)
		return m, err
	}
	m.SetHistories(func(string) bool { return false })
	if err := read(m, nil); err != nil {
		return m, err
	}
	m.Sync(o.Now)
	keys := Drawn(m, o)
	drawn := make(map[string]bool, len(keys))
	for _, k := range keys {
		drawn[k] = true
	}
	h := newModel()
	keep := func(k string) bool { return drawn[k] }
	h.SetHistories(keep)
	if err := read(h, keep); err != nil {
		return m, err
	}
	for _, k := range keys {
		if n, hn := m.Node(k), h.Node(k); n != nil && hn != nil {
			n.Hist = hn.Hist
		}
	}
	return m, nil
}

type seg struct {
	from, to int64
	state    string
	// reason is a waiting segment's reason as written; opened and closed
	// name the evidence of the events that began and ended it.
	reason, opened, closed string
}

// why is a waiting segment's typed reason: " for permission".
func (s seg) why() string {
	if s.state != string(event.StateWaiting) || s.reason == "" {
		return ""
	}
	return " for " + string(event.ParseWaitReason(s.reason))
}

// evidence names what opened and closed the segment, when recorded.
func (s seg) evidence() string {
	var p []string
	if s.opened != "" {
		p = append(p, "opened by "+view.Shorten(s.opened, 60))
	}
	if s.closed != "" {
		p = append(p, "closed by "+view.Shorten(s.closed, 60))
	}
	if len(p) == 0 {
		return ""
	}
	return " (" + strings.Join(p, ", ") + ")"
}

// segments are the child's states over [start, end]: its state segments,
// or one segment of its displayed state when no state event was kept.
func segments(n *view.Node, start, end int64) []seg {
	v := &n.View
	var out []seg
	var segs []view.Segment
	if n.Hist != nil {
		segs = n.Hist.Segs
	}
	for i, s := range segs {
		to := end
		if i+1 < len(segs) {
			to = segs[i+1].At
		}
		st := s.State
		if st == "created" && view.Adopted(v) {
			st = "observed"
		}
		sg := seg{from: max(s.At, start), to: to, state: st, reason: s.Reason, opened: s.Evidence}
		if i+1 < len(segs) {
			sg.closed = segs[i+1].Evidence
		}
		out = append(out, sg)
	}
	if len(out) == 0 || out[0].from > start {
		first := v.Display
		if len(out) > 0 {
			first = "unknown" // before its first state event, nothing said
		}
		out = append([]seg{{from: start, to: end, state: first}}, out...)
		if len(out) > 1 {
			out[0].to = out[1].from
		}
	}
	return out
}

// staleSpans are the recorded stale spans plus, for a child stale now,
// the one still open: past its heartbeat deadline, or since its fleet
// host fell silent (on the host's clock, as now is).
func staleSpans(n *view.Node, now int64, f *Fleet) []view.Span {
	var out []view.Span
	if n.Hist != nil {
		out = append(out, n.Hist.Stale...)
	}
	v := &n.View
	if v.Ended() {
		return out
	}
	from := int64(0)
	if v.Heartbeat != nil {
		if f := at(v.Heartbeat.LastEvidenceAt) + v.Heartbeat.DeadlineMs; f < now {
			from = f
		}
	}
	if f != nil && strings.HasPrefix(v.StaleReason, view.HostSilent) {
		for _, h := range f.Hosts {
			if h.Host == n.Host && h.Silent {
				// the host's silence began at its last-heard time, on the
				// gateway's clock: SinceHeardMs before the report's now
				if s := now - h.SinceHeardMs; from == 0 || s < from {
					from = s
				}
			}
		}
	}
	if from > 0 && from < now {
		out = append(out, view.Span{From: from, To: now})
	}
	return out
}

// hostAttr is the data-host attribute of a fleet child's element.
func hostAttr(n *view.Node, esc func(string) string) string {
	if n.Host == "" {
		return ""
	}
	return " data-host=\"" + esc(n.Host) + "\""
}

// laneText heads a host's lane: when it was last heard, its skew and
// delay, or its silence.
func laneText(f *Fleet, host string) string {
	for _, h := range f.Hosts {
		if h.Host == host {
			return termtext.Clean(host) + " · " + hostWords(h)
		}
	}
	return termtext.Clean(host)
}

func hostWords(h fleet.HostView) string {
	var s string
	switch {
	case h.Silent:
		s = fmt.Sprintf("SILENT since %s (%s): its open children are stale, not lost", h.SilentSince, view.Ago(h.SinceHeardMs))
	case h.SinceHeardMs >= 0:
		s = "last heard " + view.Ago(h.SinceHeardMs) + " ago"
	default:
		s = "no gateway receive stamp: its silence cannot be judged"
	}
	if h.SkewMs != nil {
		s += fmt.Sprintf(" · skew %+dms", *h.SkewMs)
	}
	if h.DelayMs != nil {
		s += fmt.Sprintf(" · delay %dms", *h.DelayMs)
	}
	return s
}

// writeHosts writes a fleet's host table and what it rests on.
func writeHosts(b *bufio.Writer, f *Fleet, esc func(string) string) {
	b.WriteString("<p class=note>A fleet: each host's journal as its shipper sent it to the gateway Collector. It rests on shipped evidence only: no process was checked, and a silent host is not a dead one — its open children are stale, never lost. Each host's lane is placed on the gateway's clock (its times shifted by its estimated clock skew).</p>\n")
	b.WriteString("<h2>Hosts</h2>\n<table class=children id=hosts><thead><tr><th>HOST</th><th>LAST HEARD</th><th>SKEW</th><th>DELAY</th><th>CHILDREN</th><th>DUPLICATES</th><th>DAMAGE</th></tr></thead><tbody>\n")
	for _, h := range f.Hosts {
		heard := "— (no gateway stamp)"
		switch {
		case h.Silent:
			heard = "SILENT since " + h.SilentSince
		case h.SinceHeardMs >= 0:
			heard = view.Ago(h.SinceHeardMs) + " ago"
		}
		skew, delay := "?", "?"
		if h.SkewMs != nil {
			skew = fmt.Sprintf("%+dms", *h.SkewMs)
		}
		if h.DelayMs != nil {
			delay = fmt.Sprintf("%dms", *h.DelayMs)
		}
		cls := ""
		if h.Silent {
			cls = " class=silent"
		}
		fmt.Fprintf(b, "<tr%s data-host=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td></tr>\n",
			cls, esc(h.Host), esc(termtext.Clean(h.Host)), esc(heard), skew, delay, h.Children, h.Duplicates, h.Damage)
	}
	fmt.Fprintf(b, "</tbody></table>\n<p class=meta>%d records read, %d duplicates shown once, %d damaged.</p>\n", f.Totals.Records, f.Totals.Duplicates, f.Totals.Damage)
	if f.Totals.Damage > 0 {
		fmt.Fprintf(b, "<p class=warn>%d parts of the gateway output were not events and were skipped ('lcwrap tail --fleet' names each with its file and offset).</p>\n", f.Totals.Damage)
	}
}

const reportHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>lcwrap report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
.meta{color:#555;margin:0}.note{color:#444;max-width:70em}.warn{background:#fff4d6;border-left:4px solid #f0b400;padding:.3em .6em}
.legend span{display:inline-block;margin:0 1em .3em 0;white-space:nowrap}
.legend i{display:inline-block;width:1.6em;height:.8em;margin-right:.3em;vertical-align:middle}
i.stale,rect.stale{background:repeating-linear-gradient(45deg,#000 0 2px,transparent 2px 5px)}
.axis{display:flex;justify-content:space-between;margin-left:22em;color:#666;font-size:12px}
.timeline{border-top:1px solid #ddd}
a.tl{display:flex;align-items:center;height:16px;color:inherit;text-decoration:none;border-bottom:1px solid #f2f2f2}
a.tl:hover{background:#f4f8ff}
.lbl{flex:0 0 22em;overflow:hidden;white-space:pre;text-overflow:ellipsis;font:12px ui-monospace,monospace}
a.tl svg{flex:1;height:12px;background:#fafafa}
table.children{border-collapse:collapse;font:12px ui-monospace,monospace}
table.children th{text-align:left;background:#f0f0f0;position:sticky;top:0}
table.children td,table.children th{padding:2px 8px;border-bottom:1px solid #eee;white-space:pre;max-width:30em;overflow:hidden;text-overflow:ellipsis}
td.id a{color:#1a4fb4}
.st{font-weight:600}
.lane{font-weight:600;margin-top:.5em;padding:2px 4px;background:#eef1f6;border-bottom:1px solid #d8dde6;font-size:12px}
tr.silent td{background:#fff4d6}
section pre{font:12px ui-monospace,monospace;background:#f8f8f8;padding:.6em;border-left:4px solid #ccc;white-space:pre-wrap;margin:.4em 0}
section:target pre{border-left-color:#1a4fb4;background:#eef4ff}
</style></head><body>
<svg width="0" height="0" style="position:absolute"><defs><pattern id="hatch" patternUnits="userSpaceOnUse" width="8" height="8" patternTransform="rotate(45)"><rect width="4" height="8" fill="#000" fill-opacity=".55"/></pattern></defs></svg>
`

// at reads a report timestamp as unix milliseconds (0 when empty).
func at(ts string) int64 { return projection.Millis(ts) }

func stampMs(ms int64) string { return event.Timestamp(time.UnixMilli(ms)) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
