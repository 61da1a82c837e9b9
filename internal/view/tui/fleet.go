package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/termtext"
	"github.com/lcwrap/lcwrap/internal/view"
)

// fleetHelp is the help line of `lcwrap top --fleet`: H picks the next
// host (then every host again).
const fleetHelp = "↑↓/jk move  enter details  / filter  H host  e ended  q quit"

func (m *Model) help() string {
	if m.state.Fleet != nil {
		return fleetHelp
	}
	return helpLine
}

// nextHost is the host after cur in hosts' order, "" (every host) after
// the last one.
func nextHost(hosts []fleet.HostView, cur string) string {
	if len(hosts) == 0 {
		return ""
	}
	if cur == "" {
		return hosts[0].Host
	}
	i := slices.IndexFunc(hosts, func(h fleet.HostView) bool { return h.Host == cur })
	if i < 0 || i+1 == len(hosts) {
		return ""
	}
	return hosts[i+1].Host
}

// fleetTitle is a fleet's first line: the gateway output, its hosts
// (how many silent) and its children by state.
func (m *Model) fleetTitle() string {
	var b strings.Builder
	fs := m.state.Fleet
	silent := 0
	for _, h := range fs.Hosts {
		if h.Silent {
			silent++
		}
	}
	fmt.Fprintf(&b, "lcwrap top --fleet %s  %d hosts", m.state.Path, len(fs.Hosts))
	if silent > 0 {
		fmt.Fprintf(&b, " (%d silent)", silent)
	}
	fmt.Fprintf(&b, " · %d children:", m.total)
	for _, st := range view.States {
		if n := m.tally[st]; n > 0 {
			fmt.Fprintf(&b, " %s%d %s", view.Symbol(st), n, st)
		}
	}
	return b.String()
}

// shownHosts is the hosts the host table lists, silent ones first, and
// how many of them there are: the filtered host alone, else as many as
// a third of the screen holds.
func (m *Model) shownHosts() ([]fleet.HostView, int) {
	fs := m.state.Fleet
	if fs == nil || !m.caught || !m.evidence || m.detail {
		return nil, 0
	}
	hosts := fs.Hosts
	if m.host != "" {
		i := slices.IndexFunc(hosts, func(h fleet.HostView) bool { return h.Host == m.host })
		if i < 0 {
			return nil, 0
		}
		return hosts[i : i+1], 1
	}
	room := max(1, (m.height-4)/3-1) // less the table's header
	if len(hosts) <= room {
		return hosts, len(hosts)
	}
	// The first room-1 of the hosts with the silent ones first (a stable
	// sort's), without copying every host: this runs for every frame.
	shown := make([]fleet.HostView, 0, room-1)
	if room == 1 {
		return shown, len(hosts)
	}
	for _, silent := range []bool{true, false} {
		for i := range hosts {
			if hosts[i].Silent == silent {
				if shown = append(shown, hosts[i]); len(shown) == room-1 {
					return shown, len(hosts) // the last line says how many more
				}
			}
		}
	}
	return shown, len(hosts)
}

// hostLines is how many lines the host table takes (its header and a
// blank line below it included).
func (m *Model) hostLines() int {
	shown, all := m.shownHosts()
	switch {
	case all == 0:
		return 0
	case len(shown) < all:
		return len(shown) + 3
	}
	return len(shown) + 2
}

// hostTable is one line per host shown: when it was last heard from (on
// the gateway's clock), its clock skew and shipping delay, its children,
// duplicates and damage. A host silent past the threshold reads SILENT:
// its open children are stale, never lost.
func (m *Model) hostTable(w int) []string {
	shown, all := m.shownHosts()
	if all == 0 {
		return nil
	}
	rows := [][]string{{"HOST", "LAST HEARD", "SKEW", "DELAY", "CHILDREN", "DUPLICATES", "DAMAGE"}}
	for _, h := range shown {
		heard := "— (no gateway stamp)"
		since := m.now.Sub(h.LastHeard).Milliseconds() // at this frame, not at the last reading
		switch {
		case h.LastHeard.IsZero():
		case h.Silent:
			heard = "SILENT " + view.Ago(since) + " (children stale, not lost)"
		default:
			heard = view.Ago(since) + " ago"
		}
		rows = append(rows, []string{view.Shorten(h.Host, 24), heard, ms(h.SkewMs, true), ms(h.DelayMs, false),
			fmt.Sprint(h.Children), fmt.Sprint(h.Duplicates), fmt.Sprint(h.Damage)})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	out := make([]string, 0, len(rows)+2)
	for k, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
		}
		l := termtext.Cut(strings.TrimRight(b.String(), " "), w)
		if k == 0 && m.color {
			l = "\x1b[1m" + l + "\x1b[0m"
		} else if k > 0 && shown[k-1].Silent && m.color {
			l = "\x1b[33m" + l + "\x1b[0m"
		}
		out = append(out, l)
	}
	if len(shown) < all {
		out = append(out, termtext.Cut(fmt.Sprintf("  … %d more hosts (H shows one at a time; / filters by name)", all-len(shown)), w))
	}
	return append(out, "")
}

// hostsChange is when the "last heard" of a host shown next reads
// differently (zero: never).
func (m *Model) hostsChange() time.Time {
	shown, _ := m.shownHosts()
	var next time.Time
	for _, h := range shown {
		if h.LastHeard.IsZero() {
			continue
		}
		since := m.now.Sub(h.LastHeard).Milliseconds()
		if t := h.LastHeard.Add(time.Duration(view.AgoChange(since)) * time.Millisecond); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// ms formats a skew or a delay in milliseconds ("?" when unknown).
func ms(p *int64, signed bool) string {
	if p == nil {
		return "?"
	}
	s := (time.Duration(*p) * time.Millisecond).String()
	if signed && *p >= 0 {
		s = "+" + s
	}
	return s
}
