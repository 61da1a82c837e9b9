package projection

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// StaleAfter is how many heartbeat intervals without evidence make a
// child stale.
const StaleAfter = 3

// The reasons a child is stale.
const (
	StaleHeartbeat = "heartbeat-deadline"  // no event from its source for StaleAfter intervals
	StaleOmitted   = "omitted-by-snapshot" // complete snapshots left it out grace times in a row
)

// NoEvidence is what a reader says when there is no lifecycle evidence at
// all: no journal, an empty one, or no valid events.
const NoEvidence = "Background work visibility unavailable; state unknown."

// Counts is how many events ended in each Result.
type Counts [numResults]int64

// Total is the number of events counted.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// MarshalJSON writes an object with one key per result.
func (c Counts) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Applied           int64 `json:"applied"`
		Gap               int64 `json:"gap"`
		OutOfOrder        int64 `json:"outOfOrder"`
		Duplicate         int64 `json:"duplicate"`
		Conflict          int64 `json:"conflict"`
		IllegalTransition int64 `json:"illegalTransition"`
		TerminalImmutable int64 `json:"terminalImmutable"`
	}{c[Applied], c[Gap], c[OutOfOrder], c[Duplicate], c[Conflict], c[IllegalTransition], c[TerminalImmutable]})
}

// ChildView is one child as a reader shows it at one moment. Its JSON form
// is part of `lcwrap status --json` (docs/status.md).
type ChildView struct {
	ChildID string `json:"childId"`
	// State is the projected contract state; nil when no event has said.
	State *event.State `json:"state"`
	// Display is what a person is shown: the state, "observed" for a
	// PID-only child (presence is not agent state), or "unknown".
	Display      string             `json:"display"`
	Stale        bool               `json:"stale"`
	StaleReason  string             `json:"staleReason,omitempty"`
	Provisional  bool               `json:"provisional"`
	Lineage      event.Lineage      `json:"lineage"`
	Capabilities event.Capabilities `json:"capabilities"`
	// Source and SourceEpoch name the lifecycle source (the created
	// event's); empty while the created event has not been seen.
	Source      string    `json:"source,omitempty"`
	SourceEpoch string    `json:"sourceEpoch,omitempty"`
	Command     []string  `json:"command"` // redacted; nil when unknown
	FirstSeenAt string    `json:"firstSeenAt"`
	StateAt     string    `json:"stateAt,omitempty"`
	Activity    *Activity `json:"activity"`
	// Heartbeat is nil when the source declares no heartbeat (capability
	// unknown or interval 0): freshness cannot be judged.
	Heartbeat *Heartbeat `json:"heartbeat"`
	// SinceEvidenceMs is how long ago the lifecycle source last said
	// anything about the child (-1 when unknown).
	SinceEvidenceMs int64           `json:"sinceEvidenceMs"`
	Exit            *Exit           `json:"exit"`
	EndedAt         string          `json:"endedAt,omitempty"`
	EndedBy         string          `json:"endedBy,omitempty"`
	ChildProcess    *ProcessCheck   `json:"childProcess,omitempty"`
	Omission        *OmissionRecord `json:"omission,omitempty"`
	Corrections     int             `json:"corrections"`
	Diagnostics     Counts          `json:"diagnostics"`
	// Waiting says why a waiting child waits, as its waiting event said
	// (nil when the child does not wait, or its event gave no reason nor
	// evidence).
	Waiting *Waiting `json:"waiting,omitempty"`
	// Agent is set for an agent's session or sub-agent (its created event
	// says observation "agent-report"): what its evidence says beyond the
	// state, attributed to the agent.
	Agent *AgentView `json:"agent,omitempty"`
}

// Waiting is one waiting episode as far as it is open: its typed reason
// (event.ParseWaitReason: a value outside the vocabulary is "other", and
// Raw keeps it), the evidence that opened it, and since when.
type Waiting struct {
	Reason   event.WaitReason `json:"reason,omitempty"`
	Raw      string           `json:"raw,omitempty"`
	Evidence string           `json:"evidence,omitempty"`
	Since    string           `json:"since"`
}

// AgentView is what a reader shows of an agent's session or sub-agent
// beyond its state: when the agent last said anything about it (its hooks
// have no heartbeat, so this is an age, never a freshness verdict).
type AgentView struct {
	LastEvidenceAt string `json:"lastEvidenceAt,omitempty"`
	// Usage is the agent's own running totals of its model requests (its
	// telemetry), the newest reported; nil when none came.
	Usage *Usage `json:"usage,omitempty"`
}

// Activity is the newest activity text (by observedAt) and when it was
// observed.
type Activity struct {
	Text       string `json:"text"`
	ObservedAt string `json:"observedAt"`
}

// Heartbeat is what freshness is judged by: the declared interval, the
// deadline (StaleAfter intervals), the last heartbeat and the last event of
// any kind from the lifecycle source.
type Heartbeat struct {
	IntervalMs     int64  `json:"intervalMs"`
	DeadlineMs     int64  `json:"deadlineMs"`
	LastAt         string `json:"lastAt,omitempty"`
	LastEvidenceAt string `json:"lastEvidenceAt"`
}

// Ended reports whether the child reached a terminal state.
func (v *ChildView) Ended() bool { return v.State != nil && v.State.Terminal() }

// Report is the whole picture at one moment: `lcwrap status --json`.
type Report struct {
	Schema      string `json:"schema"`
	GeneratedAt string `json:"generatedAt"`
	// Input names what was read (a journal path, a file, "-"); the reader
	// sets it, like BadLines and Blocked.
	Input    string      `json:"input"`
	Evidence bool        `json:"evidence"`
	Message  string      `json:"message,omitempty"` // NoEvidence when Evidence is false
	Children []ChildView `json:"children"`
	Ended    int         `json:"ended"`  // children in a terminal state
	Hidden   int         `json:"hidden"` // ended children left out (no --all)
	Events   Counts      `json:"events"`
	// BadLines counts lines of a stream that were not valid events (they
	// were skipped).
	BadLines int64 `json:"badLines"`
	// Blocked is the journal's first bad line: only the valid prefix before
	// it was read.
	Blocked *Blocked `json:"blocked"`
}

// Blocked locates the bad line that blocks a journal.
type Blocked struct {
	Line   int64  `json:"line"`
	Offset int64  `json:"offset"`
	Class  string `json:"class"`
	Reason string `json:"reason"`
}

// ReportSchema names the shape of Report.
const ReportSchema = "lcwrap-status/1"

// Report describes every child at now: active children first (running,
// waiting, starting, created, unknown; newest first within each), then,
// when all is set, ended ones (most recently ended first). Command and
// activity are redacted again on the way out, whoever wrote them.
func (p *Projection) Report(now time.Time, all bool) Report {
	r := Report{Schema: ReportSchema, GeneratedAt: event.Timestamp(now), Evidence: len(p.children) > 0, Events: p.counts, Children: []ChildView{}}
	if !r.Evidence {
		r.Message = NoEvidence
	}
	nowMs := now.UnixMilli()
	for _, c := range p.children {
		v := c.view(nowMs)
		if v.Ended() {
			r.Ended++
			if !all {
				r.Hidden++
				continue
			}
		}
		r.Children = append(r.Children, v)
	}
	sort.Slice(r.Children, func(i, j int) bool {
		a, b := &r.Children[i], &r.Children[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.Ended() && a.EndedAt != b.EndedAt {
			return a.EndedAt > b.EndedAt
		}
		if a.FirstSeenAt != b.FirstSeenAt {
			return a.FirstSeenAt > b.FirstSeenAt
		}
		return a.ChildID < b.ChildID
	})
	return r
}

func rank(v *ChildView) int {
	switch {
	case v.State == nil:
		return 4
	case v.State.Terminal():
		return 5
	}
	switch *v.State {
	case event.StateRunning:
		return 0
	case event.StateWaiting:
		return 1
	case event.StateStarting:
		return 2
	}
	return 3 // created
}

func stamp(ms int64) string {
	if ms == 0 {
		return ""
	}
	return event.Timestamp(time.UnixMilli(ms))
}

func (c *child) view(now int64) ChildView {
	v := ChildView{
		ChildID:         c.id,
		Display:         "unknown",
		Provisional:     c.provisional(),
		Lineage:         c.lineage,
		Capabilities:    c.caps,
		FirstSeenAt:     stamp(c.firstAt),
		StateAt:         stamp(c.stateAt),
		SinceEvidenceMs: -1,
		Exit:            c.exit,
		EndedAt:         stamp(c.endedAt),
		EndedBy:         c.endedBy,
		ChildProcess:    c.childStatus,
		Corrections:     c.corrections,
		Diagnostics:     c.counts,
	}
	if c.state != "" {
		st := c.state
		v.State, v.Display = &st, string(st)
		if c.observed && st == event.StateCreated {
			v.Display = "observed"
		}
	}
	if c.command != nil {
		v.Command = redact.Argv(c.command)
	}
	if c.hasActivity {
		v.Activity = &Activity{redact.Text(c.activity), stamp(c.activityKey.at)}
	}
	if c.origin != nil {
		v.Source, v.SourceEpoch = c.origin.source, c.origin.epoch
		v.SinceEvidenceMs = max(0, now-c.origin.lastAt)
	}
	if c.tracked() {
		v.Heartbeat = &Heartbeat{c.intervalMs, StaleAfter * c.intervalMs, stamp(c.heartbeatAt), stamp(c.origin.lastAt)}
	}
	for _, o := range c.omissions {
		if o.last.ConsecutiveMisses > 0 {
			rec := o.last
			v.Omission = &rec
		}
	}
	if c.state == event.StateWaiting && c.wait != nil && (c.wait.WaitingFor != "" || c.wait.Evidence != "") {
		w := &Waiting{Reason: event.ParseWaitReason(c.wait.WaitingFor), Evidence: redact.Text(c.wait.Evidence), Since: stamp(c.stateAt)}
		if string(w.Reason) != c.wait.WaitingFor {
			w.Raw = redact.Text(c.wait.WaitingFor)
		}
		v.Waiting = w
	}
	if c.agent {
		v.Agent = &AgentView{}
		if c.origin != nil {
			v.Agent.LastEvidenceAt = stamp(c.origin.lastAt)
		}
		if c.usage != nil {
			u := *c.usage
			u.Model, u.ReportedBy, u.Via = redact.Text(u.Model), redact.Text(u.ReportedBy), redact.Text(u.Via)
			v.Agent.Usage = &u
		}
	}
	v.StaleReason = c.staleReason(now)
	v.Stale = v.StaleReason != ""
	return v
}

// maxIntervalMs is the longest heartbeat interval taken seriously (a
// year); a longer one is treated as no interval at all.
const maxIntervalMs = 365 * 24 * 3600 * 1000

// tracked reports whether freshness can be judged: the lifecycle source
// declared a heartbeat and a plausible interval.
func (c *child) tracked() bool {
	return c.created && c.caps.Heartbeat == event.Known && c.intervalMs > 0 && c.intervalMs <= maxIntervalMs
}

// staleReason says why a non-terminal child is stale at now, or "".
func (c *child) staleReason(now int64) string {
	if c.state.Terminal() {
		return ""
	}
	if c.tracked() && now-c.origin.lastAt > StaleAfter*c.intervalMs {
		return StaleHeartbeat
	}
	for _, o := range c.omissions {
		if o.last.Intent == IntentStaleUnknown {
			return StaleOmitted
		}
	}
	return ""
}

// View describes one child at now, as Report does, and reports whether
// the child has been seen. A reader that keeps its own picture current
// (lcwrap top) recomputes only the children an event touched.
func (p *Projection) View(childID string, now time.Time) (ChildView, bool) {
	c := p.children[childID]
	if c == nil {
		return ChildView{}, false
	}
	return c.view(now.UnixMilli()), true
}
