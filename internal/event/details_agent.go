package event

import (
	"encoding/json"
)

// The details shapes of agent sources (package agent and its sources:
// Claude Code, Codex): their sessions' and sub-agents' events, and what a
// launched process's created and terminal events say about the agent it
// runs. docs/agents.md describes each member.

// Claims of the terminal events agent sources write: what each rests on.
const (
	// ClaimAgentReportedEnd: the agent itself said the session or
	// sub-agent ended. It never says the task was done.
	ClaimAgentReportedEnd = "agent-reported-end"
	// ClaimLaunchedProcessEnded: the agent's process ended while the child
	// was still open; how the child ended is unknown.
	ClaimLaunchedProcessEnded = "launched-process-ended"
	// ClaimAgentProcessEnded: the agent's process, adopted, ended while
	// the child was still open; how the child ended is unknown.
	ClaimAgentProcessEnded = "agent-process-ended"
	// ClaimSessionEnded: the session ended while this sub-agent was still
	// open; how the sub-agent ended is unknown.
	ClaimSessionEnded = "session-ended"
)

// AgentEvent is the details of every event an agent source writes for a
// session or sub-agent.
type AgentEvent struct {
	Agent         string         `json:"agent,omitempty"` // created: the source
	AgentID       string         `json:"agentId,omitempty"`
	AgentType     string         `json:"agentType,omitempty"`
	Claim         string         `json:"claim,omitempty"` // terminal
	Evidence      string         `json:"evidence,omitempty"`
	Limits        string         `json:"limits,omitempty"`
	Message       string         `json:"message,omitempty"`
	Normalization *Normalization `json:"normalization,omitempty"`
	Note          string         `json:"note,omitempty"`
	Observation   string         `json:"observation,omitempty"`
	Process       *AgentProcess  `json:"process,omitempty"`
	Reason        string         `json:"reason,omitempty"`
	// Reported is what the agent said besides (cwd, model, transcript
	// path, usage...), as it said it, redacted (see details_facts.go).
	Reported      *Facts `json:"reported,omitempty"`
	ReportedError string `json:"reportedError,omitempty"`
	SessionID     string `json:"sessionId,omitempty"`
	SessionSource string `json:"sessionSource,omitempty"`
	Tool          string `json:"tool,omitempty"`
	WaitingFor    string `json:"waitingFor,omitempty"`
	// Wrapper is, in a created event, the lcwrap process that owns the
	// child's events (the wrapper of a run it launched): its lifecycle
	// source, checked by reconciliation like a launched child's.
	Wrapper *Identity `json:"wrapper,omitempty"`
}

// AppendDetails implements Details.
func (d AgentEvent) AppendDetails(o *Object) {
	o.OptString("agent", d.Agent)
	o.OptString("agentId", d.AgentID)
	o.OptString("agentType", d.AgentType)
	o.OptString("claim", d.Claim)
	o.OptString("evidence", d.Evidence)
	o.OptString("limits", d.Limits)
	o.OptString("message", d.Message)
	if d.Normalization != nil {
		o.Object("normalization", d.Normalization)
	}
	o.OptString("note", d.Note)
	o.OptString("observation", d.Observation)
	if d.Process != nil {
		o.Object("process", d.Process)
	}
	o.OptString("reason", d.Reason)
	if d.Reported != nil {
		o.Object("reported", d.Reported)
	}
	o.OptString("reportedError", d.ReportedError)
	o.OptString("sessionId", d.SessionID)
	o.OptString("sessionSource", d.SessionSource)
	o.OptString("tool", d.Tool)
	o.OptString("waitingFor", d.WaitingFor)
	if d.Wrapper != nil {
		o.Identity("wrapper", *d.Wrapper)
	}
}

// Normalization counts native payloads that became no event: the first
// unrecognised one of a kind (Outcome, Kind, Count 1), or a session's
// totals by kind ("unrecognized:<type tag>", "ignored:<reason>").
type Normalization struct {
	Count   int64  `json:"count,omitempty"`
	Counts  IntMap `json:"counts,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// AppendDetails implements Details.
func (d Normalization) AppendDetails(o *Object) {
	o.OptInt("count", d.Count)
	if len(d.Counts) > 0 {
		o.Object("counts", d.Counts)
	}
	o.OptString("kind", d.Kind)
	o.OptString("outcome", d.Outcome)
}

// AgentProcess is the process whose end ended a child: its child id and
// exit as lcwrap recorded it.
type AgentProcess struct {
	ChildID string `json:"childId,omitempty"`
	Exit    *Exit  `json:"exit,omitempty"`
}

// AppendDetails implements Details.
func (d AgentProcess) AppendDetails(o *Object) {
	o.OptString("childId", d.ChildID)
	if d.Exit != nil {
		o.Object("exit", d.Exit)
	}
}

// IntMap is a JSON object of counts, written with sorted keys.
type IntMap map[string]int

// AppendDetails implements Details: as FreeDetails of the same counts
// (sorted keys, redacted the same way).
func (d IntMap) AppendDetails(o *Object) {
	m := make(FreeDetails, len(d))
	for k, v := range d {
		m[k] = v
	}
	m.AppendDetails(o)
}

// AgentLaunch is the "agent" member of a launched process's created
// event: which agent integration ran, and what it added to the command
// line (the command member is the command as given; AddedArgs were
// inserted at index AddedAt of it).
type AgentLaunch struct {
	AddedArgs []string `json:"addedArgs,omitempty"`
	AddedAt   int64    `json:"addedAt,omitempty"`
	Agent     string   `json:"agent"`
	// Evidence says how the agent's evidence reaches lcwrap, one line
	// per way.
	Evidence []string `json:"evidence,omitempty"`
	// MergedAt, instead of AddedArgs, is the index of the command's own
	// argument that was replaced by the same value with lcwrap's part
	// merged in (Claude Code's --settings).
	MergedAt int64 `json:"mergedAt,omitempty"`
}

// UnmarshalJSON reads an agent member: the object, or the bare agent name
// a session's created event carries under the same key (so that its
// details also decode as a Created, whose wrapper reconciliation reads).
func (d *AgentLaunch) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*d = AgentLaunch{Agent: name}
		return nil
	}
	type plain AgentLaunch
	return json.Unmarshal(b, (*plain)(d))
}

// AppendDetails implements Details.
func (d AgentLaunch) AppendDetails(o *Object) {
	if d.AddedArgs != nil {
		o.Strings("addedArgs", d.AddedArgs)
	}
	o.OptInt("addedAt", d.AddedAt)
	o.String("agent", d.Agent)
	if d.Evidence != nil {
		o.Strings("evidence", d.Evidence)
	}
	o.OptInt("mergedAt", d.MergedAt)
}

// AgentSessions is the "agentSessions" member of a launched process's
// terminal event: the agent's sessions seen in that run, and payloads that
// named no session, by kind.
type AgentSessions struct {
	Sessions     []string `json:"sessions,omitempty"`
	Source       string   `json:"source"`
	Unattributed IntMap   `json:"unattributed,omitempty"`
}

// AppendDetails implements Details.
func (d AgentSessions) AppendDetails(o *Object) {
	if d.Sessions != nil {
		o.Strings("sessions", d.Sessions)
	}
	o.String("source", d.Source)
	if len(d.Unattributed) > 0 {
		o.Object("unattributed", d.Unattributed)
	}
}

// AgentReport is the "agentReport" member of a launched process's
// terminal event: what the agent said about its own run (Claude Code's
// stream-json result message, say), attributed to it (ReportedBy, Via).
// It is the agent's report, never lcwrap's claim, and never changes the
// terminal state.
type AgentReport struct {
	APIErrorStatus    string      `json:"apiErrorStatus,omitempty"`
	DurationAPIMs     *float64    `json:"durationApiMs,omitempty"`
	DurationMs        *float64    `json:"durationMs,omitempty"`
	IsError           *bool       `json:"isError,omitempty"`
	LinesSkipped      int64       `json:"linesSkipped,omitempty"`
	NumTurns          *int64      `json:"numTurns,omitempty"`
	PermissionDenials *int64      `json:"permissionDenials,omitempty"`
	ReportedBy        string      `json:"reportedBy"`
	Results           int64       `json:"results,omitempty"`
	SessionID         string      `json:"sessionId,omitempty"`
	StopReason        string      `json:"stopReason,omitempty"`
	Subtype           string      `json:"subtype,omitempty"`
	TerminalReason    string      `json:"terminalReason,omitempty"`
	TotalCostUSD      *float64    `json:"totalCostUsd,omitempty"`
	Usage             *AgentUsage `json:"usage,omitempty"`
	Via               string      `json:"via,omitempty"`
}

// AppendDetails implements Details.
func (d AgentReport) AppendDetails(o *Object) {
	o.OptString("apiErrorStatus", d.APIErrorStatus)
	o.optFloat("durationApiMs", d.DurationAPIMs)
	o.optFloat("durationMs", d.DurationMs)
	if d.IsError != nil {
		o.Bool("isError", *d.IsError)
	}
	o.OptInt("linesSkipped", d.LinesSkipped)
	if d.NumTurns != nil {
		o.Int("numTurns", *d.NumTurns)
	}
	if d.PermissionDenials != nil {
		o.Int("permissionDenials", *d.PermissionDenials)
	}
	o.String("reportedBy", d.ReportedBy)
	o.OptInt("results", d.Results)
	o.OptString("sessionId", d.SessionID)
	o.OptString("stopReason", d.StopReason)
	o.OptString("subtype", d.Subtype)
	o.OptString("terminalReason", d.TerminalReason)
	o.optFloat("totalCostUsd", d.TotalCostUSD)
	if d.Usage != nil {
		o.Object("usage", d.Usage)
	}
	o.OptString("via", d.Via)
}

// AgentUsage is the agent's own count of model tokens, by kind.
type AgentUsage struct {
	CacheCreation *int64 `json:"cacheCreation,omitempty"`
	CacheRead     *int64 `json:"cacheRead,omitempty"`
	Input         *int64 `json:"input,omitempty"`
	Output        *int64 `json:"output,omitempty"`
}

// AppendDetails implements Details.
func (d AgentUsage) AppendDetails(o *Object) {
	for _, m := range []struct {
		k string
		v *int64
	}{{"cacheCreation", d.CacheCreation}, {"cacheRead", d.CacheRead}, {"input", d.Input}, {"output", d.Output}} {
		if m.v != nil {
			o.Int(m.k, *m.v)
		}
	}
}

// AgentOutputUnread is the "agentOutputUnread" member of a launched
// process's terminal event: bytes of the agent's output that passed
// through but could not be read in time.
type AgentOutputUnread struct {
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// AppendDetails implements Details.
func (d AgentOutputUnread) AppendDetails(o *Object) {
	o.Int("bytes", d.Bytes)
	o.String("reason", d.Reason)
}

// optFloat writes k: *v unless v is nil, as encoding/json writes a float64.
func (o *Object) optFloat(k string, v *float64) {
	if v == nil {
		return
	}
	b, err := AppendValue(nil, *v)
	if err != nil {
		o.fail(err)
		return
	}
	o.key(k)
	o.b = append(o.b, b...)
}
