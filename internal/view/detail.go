package view

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// Detail is what the detail pane (and the report's section) says about
// one child: lineage, facts, each capability with why it is unknown, the
// last diagnostics and the last events. Every line is one line of text,
// redacted and without control characters.
func Detail(n *Node, now time.Time) []string {
	v := &n.View
	var out []string
	add := func(format string, args ...any) { out = append(out, termtext.Line(fmt.Sprintf(format, args...))) }
	add("%s  %s %s", v.ChildID, Symbol(v.Display), StateText(v))
	if v.Provisional {
		add("  * provisional: events are missing (joined mid-way, or a sequence gap); the state may be behind")
	}
	out = append(out, "")
	if n.Host != "" {
		add("Host      %s  (a fleet's host: what it shipped; no process was checked from here)", n.Host)
	}
	add("Lineage   %s", Lineage(n))
	l := v.Lineage
	add("          root %s · attempt %d%s%s", orDash(l.RootChildID), l.Attempt, ifs(l.ParentChildID != "", " · parent "+l.ParentChildID), ifs(l.AdoptedAt != "", " · adopted at "+l.AdoptedAt))
	add("Source    %s%s", Source(v), ifs(v.SourceEpoch != "", "  (epoch "+v.SourceEpoch+")"))
	add("Command   %s", Command(v))
	fresh, _ := Fresh(v, now)
	add("Started   %s  (%s)   duration %s", Started(v, now), orDash(v.FirstSeenAt), Duration(v, now))
	hb := "no heartbeat declared: freshness cannot be judged"
	if v.Heartbeat != nil {
		hb = fmt.Sprintf("heartbeat every %s, stale after %s of silence", Elapsed(v.Heartbeat.IntervalMs), Elapsed(v.Heartbeat.DeadlineMs))
	}
	if v.Heartbeat == nil && agentEvidence(v) > 0 {
		hb = "the agent's reports have no heartbeat: this is how long ago it last reported anything, not a verdict"
	}
	add("Freshness %s  (%s)", fresh, hb)
	if w := WaitText(v, now); w != "" {
		add("Waiting   %s", w)
	}
	switch {
	case v.Stale && n.Host != "":
		add("          stale (%s): stale is not lost; 'lcwrap status --reconcile' on host %s checks the process", v.StaleReason, n.Host)
	case v.Stale:
		add("          stale (%s): stale is not lost; 'lcwrap status --reconcile' checks the process", v.StaleReason)
	}
	add("Activity  %s", Activity(v))
	if u := UsageText(v); u != "" {
		add("Usage     %s", u)
	}
	if v.Ended() {
		add("Exit      %s  (ended %s by %s; how the process ended, not whether its task succeeded)", Exit(v), orDash(v.EndedAt), orDash(v.EndedBy))
		if r := agentReport(n); r != "" {
			add("Reported  %s", r)
		}
	}
	out = append(out, "", "Capabilities")
	unknown := Unknowns(v)
	same := len(unknown) > 1
	for _, name := range unknown {
		same = same && Why(v, name) == Why(v, unknown[0])
	}
	for _, name := range event.CapabilityNames {
		c, _ := v.Capabilities.Get(name)
		switch {
		case c == event.Known:
			add("  %-13s known", name)
		case same:
			add("  %-13s ? unknown", name)
		default:
			add("  %-13s ? unknown: %s", name, Why(v, name))
		}
	}
	if same {
		add("  why: %s", Why(v, unknown[0]))
	}
	if h := n.Hist; h != nil {
		if d := h.Diagnostics(); len(d) > 0 {
			out = append(out, "", fmt.Sprintf("Last diagnostics (%d of %d)", len(d), h.nDiags))
			for _, e := range d {
				add("  %s  %s", e.ObservedAt, EventText(e))
			}
		}
		r := h.Recent()
		out = append(out, "", fmt.Sprintf("Events (last %d of %d; %d heartbeats not listed)", len(r), h.Events, h.Heartbeats))
		for i := len(r) - 1; i >= 0; i-- {
			e := r[i]
			add("  %6s  %s  %-13s %-10s %s", lineNo(e.Line), e.ObservedAt, e.Kind, orDash(string(e.State)), EventText(e))
		}
		if len(h.Stale) > 0 {
			out = append(out, "", "Stale spans (no word from its source past the deadline)")
			for _, s := range h.Stale {
				add("  %s → %s", stampMs(s.From), stampMs(s.To))
			}
		}
	}
	return out
}

// agentReport is what the agent said about its own run, from the child's
// terminal event, attributed to it ("" when there is none). It is the
// agent's report, never lcwrap's verdict.
func agentReport(n *Node) string {
	if n.Hist == nil {
		return ""
	}
	for _, e := range n.Hist.Recent() {
		if e.Kind != event.KindTerminal || len(e.Details) == 0 {
			continue
		}
		t, ok := event.DecodeDetails[agent.TerminalMembers](e.Details)
		if !ok || t.AgentReport == nil {
			continue
		}
		r := t.AgentReport
		var parts []string
		if r.Subtype != "" {
			parts = append(parts, r.Subtype)
		}
		if r.IsError != nil && *r.IsError {
			parts = append(parts, "is_error")
		}
		if r.NumTurns != nil {
			parts = append(parts, fmt.Sprintf("%d turns", *r.NumTurns))
		}
		if r.TotalCostUSD != nil {
			parts = append(parts, fmt.Sprintf("$%.4f", *r.TotalCostUSD))
		}
		if r.StopReason != "" {
			parts = append(parts, "stop: "+r.StopReason)
		}
		who := orDash(r.ReportedBy)
		return termtext.Clean(redact.Text(who + " reports (its own account, not lcwrap's): " + strings.Join(parts, ", ")))
	}
	return ""
}

// EventText summarizes an event for a person: its activity, its result
// when not applied, and its details (redacted, cut).
func EventText(e Event) string {
	var parts []string
	if e.Activity != "" {
		parts = append(parts, redact.Text(e.Activity))
	}
	if e.Source != "" {
		parts = append(parts, "from "+e.Source)
	}
	if e.Result.String() != "applied" {
		parts = append(parts, "["+e.Result.String()+"]")
	}
	if len(e.Details) > 0 {
		parts = append(parts, termtext.Cut(termtext.Clean(Details(e.Details)), 160))
	}
	return termtext.Clean(strings.Join(parts, "  "))
}

// Details returns event details as one line of JSON, redacted: values
// under sensitive keys, secrets in strings, and the values of secret flags
// in argument lists ("--token", "x"). Details that do not decode are
// redacted as text.
func Details(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return redact.Text(string(raw))
	}
	b, err := json.Marshal(redact.Value(argvs(v)))
	if err != nil {
		return redact.Text(string(raw))
	}
	return string(b)
}

// argvs redacts every list of strings as a command line.
func argvs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = argvs(x)
		}
		return out
	case []any:
		strs := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				out := make([]any, len(t))
				for i, y := range t {
					out[i] = argvs(y)
				}
				return out
			}
			strs = append(strs, s)
		}
		out := make([]any, len(strs))
		for i, s := range redact.Argv(strs) {
			out[i] = s
		}
		return out
	}
	return v
}

// Lineage is the path from the child's root: root › parent › child.
func Lineage(n *Node) string {
	var path []string
	for p := n; p != nil; p = p.parent {
		id := p.ID()
		if p.Retry {
			id += fmt.Sprintf(" #%d", p.View.Lineage.Attempt)
		}
		path = append(path, id)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return strings.Join(path, " › ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func ifs(c bool, s string) string {
	if c {
		return s
	}
	return ""
}

func lineNo(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("#%d", n)
}

func stampMs(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
