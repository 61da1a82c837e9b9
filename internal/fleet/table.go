package fleet

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/view"
)

// TableOptions say how to print the fleet table.
type TableOptions struct {
	Now time.Time
	// Host shows only that host's rows ("" for all).
	Host string
}

// Table writes `lcwrap status --fleet`: one line per host (when it was
// last heard from, its skew and delay, what was duplicated or damaged),
// then one line per child with its HOST, or exactly projection.NoEvidence
// when nothing arrived at all.
func Table(w io.Writer, rep Report, o TableOptions) error {
	var b strings.Builder
	if !rep.Evidence {
		b.WriteString(projection.NoEvidence + "\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tLAST HEARD\tSKEW\tDELAY\tOPEN\tENDED\tDUPLICATES\tDAMAGE")
	for _, h := range rep.Hosts {
		if o.Host != "" && h.Host != o.Host {
			continue
		}
		heard := "— (no gateway stamp)"
		switch {
		case h.Silent:
			heard = "SILENT " + view.Ago(h.SinceHeardMs)
		case h.SinceHeardMs >= 0:
			heard = view.Ago(h.SinceHeardMs) + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", view.Shorten(h.Host, 32), heard, ms(h.SkewMs, true), ms(h.DelayMs, false),
			h.Open, h.Ended, h.Duplicates, h.Damage)
	}
	tw.Flush()
	b.WriteByte('\n')
	shown := 0
	for _, c := range rep.Children {
		if o.Host == "" || c.Host == o.Host {
			shown++
		}
	}
	if shown == 0 {
		fmt.Fprintf(&b, "No active children; %d ended ('lcwrap status --fleet PATH --all' shows them).\n", rep.Hidden)
	} else {
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tCHILD\tSTATE\tFRESHNESS\tSTARTED\tDURATION\tEXIT\tCOMMAND")
		provisional := false
		for i := range rep.Children {
			c := &rep.Children[i]
			if o.Host != "" && c.Host != o.Host {
				continue
			}
			v := &c.ChildView
			state := view.StateText(v)
			if v.Provisional {
				provisional = true
			}
			now := c.hostNow // the host's clock: its events' times are on it
			if now.IsZero() {
				now = o.Now
			}
			fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", view.Shorten(c.Host, 32), view.Shorten(v.ChildID, 40),
				view.Symbol(v.Display), state, freshness(c), view.Started(v, now), view.Duration(v, now), view.Exit(v), view.Shorten(view.Command(v), 48))
		}
		tw.Flush()
		if provisional {
			b.WriteString("* provisional: events are missing (not yet shipped, or a sequence gap); the state may be behind.\n")
		}
		if rep.Hidden > 0 {
			fmt.Fprintf(&b, "%d ended not shown ('--all' shows them).\n", rep.Hidden)
		}
	}
	for _, h := range rep.Hosts {
		if h.Silent && (o.Host == "" || o.Host == h.Host) {
			fmt.Fprintf(&b, "%s: host silent since %s (nothing arrived for %s): its open children are stale, not lost; its shipper or network may be down, its work may not be.\n",
				view.Shorten(h.Host, 32), h.SilentSince, view.Ago(h.SinceHeardMs))
		}
	}
	fmt.Fprintf(&b, "Rests on shipped evidence only: %d records read, %d duplicates shown once, %d damaged.\n", rep.Records, rep.Duplicates, rep.DamageCount)
	_, err := io.WriteString(w, b.String())
	return err
}

// freshness is the freshness cell of a child, on its host's clock (the
// report's staleness was judged there).
func freshness(c *Child) string {
	v := &c.ChildView
	if v.Ended() {
		return "—"
	}
	if strings.HasPrefix(v.StaleReason, "host silent") {
		return "stale (host silent)"
	}
	if v.Stale {
		if v.SinceEvidenceMs >= 0 {
			return "stale " + view.Ago(v.SinceEvidenceMs)
		}
		return "stale"
	}
	if v.Heartbeat != nil && v.SinceEvidenceMs >= 0 {
		return view.Ago(v.SinceEvidenceMs) + " ago"
	}
	return "—"
}

func ms(p *int64, signed bool) string {
	if p == nil {
		return "?"
	}
	d := time.Duration(*p) * time.Millisecond
	s := d.Round(time.Millisecond).String()
	if signed && *p >= 0 {
		s = "+" + s
	}
	return s
}
