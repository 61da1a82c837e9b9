package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// Shorten is termtext.Shorten (internal/fleet's tables call it here).
func Shorten(s string, n int) string { return termtext.Shorten(s, n) }

// at reads a report timestamp as unix milliseconds (0 when empty).
func at(ts string) int64 { return projection.Millis(ts) }

// HostSilent begins the stale reason of an open child of a fleet's host
// that has not been heard from for too long (internal/fleet): whatever its
// own evidence said, it is stale, and never lost.
const HostSilent = "host silent"

// Fresh says how recent the lifecycle source's last word about v is at
// now: the text of a freshness cell and whether v is stale. A child
// without a declared heartbeat shows "—": its freshness cannot be judged.
func Fresh(v *projection.ChildView, now time.Time) (string, bool) {
	if v.Ended() {
		return "—", false
	}
	stale := v.StaleReason == projection.StaleOmitted
	if strings.HasPrefix(v.StaleReason, HostSilent) {
		return "stale (" + HostSilent + ")", true
	}
	if hb := v.Heartbeat; hb != nil {
		since := now.UnixMilli() - at(hb.LastEvidenceAt)
		if since > hb.DeadlineMs {
			stale = true
		}
		if stale {
			return "stale " + Ago(since), true
		}
		return Ago(since) + " ago", false
	}
	if stale {
		return "stale", true
	}
	if last := agentEvidence(v); last > 0 {
		// An agent's reports carry no heartbeat: how long it has said
		// nothing is shown, never judged.
		return Ago(now.UnixMilli()-last) + " ago", false
	}
	return "—", false
}

// agentEvidence is when the agent last reported anything about an agent
// child that has not ended and declares no heartbeat (unix ms; 0 when that
// is not so or not known).
func agentEvidence(v *projection.ChildView) int64 {
	if v.Agent == nil || v.Heartbeat != nil || v.Ended() {
		return 0
	}
	return at(v.Agent.LastEvidenceAt)
}

// Ago formats a duration in its largest whole unit: <1s, 3s, 2m, 5h, 3d.
func Ago(ms int64) string {
	d := time.Duration(max(ms, 0)) * time.Millisecond
	switch {
	case d < time.Second:
		return "<1s"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// AgoChange is the first duration after ms at which what Ago says of it
// changes (a live view schedules its redraw with it).
func AgoChange(ms int64) int64 { return nextStep(ms, agoSteps) }

// Elapsed formats a duration in two units: 850ms, 42s, 3m07s, 2h05m, 3d04h.
func Elapsed(ms int64) string {
	ms = max(ms, 0)
	s := ms / 1000
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + two(s%60) + "s"
	case s < 86400:
		return strconv.FormatInt(s/3600, 10) + "h" + two(s%3600/60) + "m"
	}
	return strconv.FormatInt(s/86400, 10) + "d" + two(s%86400/3600) + "h"
}

func two(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Started formats when v was first seen, in now's location: the time of
// day when it is the same day as now, else the date too.
func Started(v *projection.ChildView, now time.Time) string {
	ms := at(v.FirstSeenAt)
	if ms == 0 {
		return "—"
	}
	t := time.UnixMilli(ms).In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	if t.Year() == now.Year() {
		return t.Format("Jan 02 15:04")
	}
	return t.Format("2006-01-02")
}

// Duration is how long v ran (first seen to its end), or for a child that
// has not ended its age so far.
func Duration(v *projection.ChildView, now time.Time) string {
	from := at(v.FirstSeenAt)
	if from == 0 {
		return "—"
	}
	if v.Ended() {
		if end := at(v.EndedAt); end > 0 {
			return Elapsed(end - from)
		}
		return "—"
	}
	return Elapsed(now.UnixMilli() - from)
}

// NextChange is the instant from which what Fresh, Started and Duration
// say of v at now may read differently: never later than their first
// change, perhaps earlier (Started is assumed to change at every
// midnight); the zero time when they never change. A running duration
// under a second is taken to change only at its first second (its
// milliseconds are not redrawn one by one). A live view schedules its one
// clock redraw with it instead of redrawing on a fixed tick.
func NextChange(v *projection.ChildView, now time.Time) time.Time {
	nowMs := now.UnixMilli()
	next := int64(0)
	soonest := func(ms int64) {
		if ms > nowMs && (next == 0 || ms < next) {
			next = ms
		}
	}
	from := at(v.FirstSeenAt)
	if from != 0 {
		y, m, d := now.Date()
		soonest(time.Date(y, m, d+1, 0, 0, 0, 0, now.Location()).UnixMilli())
	}
	if !v.Ended() {
		if from != 0 {
			soonest(from + nextStep(nowMs-from, elapsedSteps))
		}
		if last := agentEvidence(v); last > 0 {
			soonest(last + nextStep(nowMs-last, agoSteps))
		}
		if hb := v.Heartbeat; hb != nil {
			last := at(hb.LastEvidenceAt)
			soonest(last + nextStep(nowMs-last, agoSteps))
			soonest(last + hb.DeadlineMs + 1) // stale from then on
		}
	}
	if next == 0 {
		return time.Time{}
	}
	return time.UnixMilli(next)
}

// A step is the unit a formatted duration shows while it is under a
// limit: the duration's text changes at each multiple of the unit.
type step struct{ under, unit int64 }

const (
	second = int64(time.Second / time.Millisecond)
	minute = 60 * second
	hour   = 60 * minute
	day    = 24 * hour
)

// elapsedSteps are Elapsed's (its milliseconds taken as one step), agoSteps
// Ago's.
var (
	elapsedSteps = []step{{second, second}, {hour, second}, {day, minute}, {1 << 62, hour}}
	agoSteps     = []step{{second, second}, {minute, second}, {hour, minute}, {48 * hour, hour}, {1 << 62, day}}
)

// nextStep is the first duration after ms (clamped at 0 as the formats
// clamp it) at which a duration shown in steps reads differently.
func nextStep(ms int64, steps []step) int64 {
	ms = max(ms, 0)
	for _, s := range steps {
		if ms < s.under {
			return (ms/s.unit + 1) * s.unit
		}
	}
	return ms + 1
}

// StateText is the displayed state, marked * when provisional.
func StateText(v *projection.ChildView) string {
	s := v.Display
	if w := v.Waiting; w != nil && w.Reason != "" && s == string(event.StateWaiting) {
		s += ":" + string(w.Reason) // the typed reason: one vocabulary for every source
	}
	if v.Provisional {
		return s + "*"
	}
	return s
}

// WaitText says why a waiting child waits and what says so: "for
// permission (PermissionRequest, 12s)"; "" when it does not wait or
// nothing was recorded.
func WaitText(v *projection.ChildView, now time.Time) string {
	w := v.Waiting
	if w == nil {
		return ""
	}
	s := "for " + string(w.Reason)
	switch {
	case w.Reason == "":
		s = "no reason recorded"
	case w.Raw != "":
		s += " (\"" + Shorten(w.Raw, 40) + "\" as written)"
	}
	var what []string
	if w.Evidence != "" {
		what = append(what, "opened by "+Shorten(w.Evidence, 60))
	}
	if ms := at(w.Since); ms > 0 {
		what = append(what, "since "+Ago(now.UnixMilli()-ms)+" ago")
	}
	if len(what) > 0 {
		s += " (" + strings.Join(what, ", ") + ")"
	}
	return termtext.Clean(s)
}

// Activity is the newest activity, or the note that a lost child's own
// process is still present.
func Activity(v *projection.ChildView) string {
	if cp := v.ChildProcess; cp != nil && cp.Status == event.Alive.String() {
		return "pid " + strconv.Itoa(cp.Identity.PID) + " still present"
	}
	text := "—"
	if v.Activity != nil {
		text = termtext.Clean(redact.Text(v.Activity.Text))
	}
	if c := Cost(v); c != "" {
		text = c + " · " + text // first, so that a narrow column keeps it
	}
	return text
}

// Cost is an agent child's cost so far as the agent estimates it
// ("≈$0.0123"), or "" when it reported none.
func Cost(v *projection.ChildView) string {
	if v.Agent == nil || v.Agent.Usage == nil || v.Agent.Usage.CostUnknown {
		return ""
	}
	return "≈$" + strconv.FormatFloat(v.Agent.Usage.CostUSD, 'f', 4, 64)
}

// UsageText is an agent child's running totals in one line, attributed:
// "3 requests · 36 in / 18 out tokens · cache 0 read, 0 written ·
// ≈$0.0005 (the agent's own estimate: claude-code via OTLP …)".
func UsageText(v *projection.ChildView) string {
	if v.Agent == nil || v.Agent.Usage == nil {
		return ""
	}
	u := v.Agent.Usage
	cost := Cost(v)
	if u.CostUnknown {
		cost = "cost unknown"
	}
	s := fmt.Sprintf("%d requests · %d in / %d out tokens · cache %d read, %d written · %s (the agent's own estimate: %s via %s", u.Requests, u.Input, u.Output, u.CacheRead, u.CacheCreation, cost, u.ReportedBy, u.Via)
	if u.Model != "" {
		s += "; model " + u.Model
	}
	if u.Dropped > 0 {
		s += fmt.Sprintf("; %d telemetry payloads dropped, so it may be short", u.Dropped)
	}
	return termtext.Clean(s + ")")
}

// Exit says how an ended child's process ended: its code, its signal, or
// unknown. It says nothing about the task.
func Exit(v *projection.ChildView) string {
	switch {
	case !v.Ended():
		return "—"
	case v.Exit == nil:
		return "unknown"
	case v.Exit.Signal != "":
		return termtext.Clean(v.Exit.Signal)
	case v.Exit.Code != nil:
		return strconv.Itoa(*v.Exit.Code)
	}
	return "unknown"
}

// Source names the lifecycle source, marking an adopted process (observed,
// not started by lcwrap) and other external children.
func Source(v *projection.ChildView) string {
	s := termtext.Clean(v.Source)
	if s == "" {
		s = "—"
	}
	switch {
	case Adopted(v):
		s += " (adopted)"
	case v.Lineage.External:
		s += " (external)"
	}
	return s
}

// Adopted reports whether v is a process lcwrap adopts (observes by pid)
// rather than one it started: an external child of lcwrap's own source,
// or one shown as observed.
func Adopted(v *projection.ChildView) bool {
	return v.Display == "observed" || (v.Lineage.External && v.Source == "lcwrap")
}

// Command is the redacted command line, "—" when unknown.
func Command(v *projection.ChildView) string {
	if v.Command == nil {
		return "—"
	}
	return termtext.Clean(strings.Join(redact.Argv(v.Command), " "))
}

// Unknowns lists the capabilities v's source does not declare known, in
// contract order.
func Unknowns(v *projection.ChildView) []string {
	var out []string
	for _, n := range event.CapabilityNames {
		if c, _ := v.Capabilities.Get(n); c != event.Known {
			out = append(out, n)
		}
	}
	return out
}

// UnknownMark is the marker of a row with unknown capabilities: "?" and
// how many of the five are unknown; "" when all are known.
func UnknownMark(v *projection.ChildView) string {
	n := 0
	for _, name := range event.CapabilityNames {
		if c, _ := v.Capabilities.Get(name); c != event.Known {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return "?" + strconv.Itoa(n)
}

// Why says why capability name is unknown for v: what lcwrap could and
// could not see.
func Why(v *projection.ChildView, name string) string {
	switch {
	case Adopted(v):
		return "observed from outside (adopted by pid): only the process's presence is visible, so " + whatIsMissing(name) + " cannot be known"
	case v.Lineage.External:
		return "relayed by an external producer (a hook or a script) that did not declare it; what happened between its calls is not visible"
	case v.Source == "":
		return "the child's created event was not seen (the stream joined mid-way), so nothing it declared is known"
	case v.Source != "lcwrap":
		return "its source, " + termtext.Clean(v.Source) + ", does not declare it known: only what its own events show is known, and an undeclared capability is unknown"
	}
	switch name {
	case "snapshot":
		return "no snapshot source was offered for this child: nothing outside its own events can confirm its state"
	case "heartbeat":
		return "its source declares no heartbeat (e.g. --heartbeat 0): silence cannot be told from a hang, so it never goes stale"
	case "cancel":
		return "its source holds no verified authority to signal it: lcwrap cancel refuses it"
	case "history":
		return "its source may not have seen every transition, so missing states are possible"
	case "terminalCause":
		return "its source cannot read how it ended, so an end would be reported without a cause"
	}
	return "its source did not declare it; an undeclared capability is unknown, never known"
}

func whatIsMissing(name string) string {
	switch name {
	case "history":
		return "its past states"
	case "heartbeat":
		return "its liveness between checks"
	case "snapshot":
		return "an authoritative snapshot of it"
	case "cancel":
		return "the authority to cancel it"
	case "terminalCause":
		return "its exit status"
	}
	return name
}
