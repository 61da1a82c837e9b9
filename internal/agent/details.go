package agent

import (
	"encoding/json"
	"sort"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// The details shapes of agent sources (package agent and its sources:
// Claude Code, Codex): their sessions' and sub-agents' events, and the
// members a launched process's created and terminal events carry about
// the agent it runs (event.Created's and event.Terminal's Extra).
// docs/agents.md describes each member.

// Claims of the terminal events agent sources (a Tracker) write: what
// each rests on.
const (
	// ClaimAgentReportedEnd: the agent itself said the session or
	// sub-agent ended. It never says the task was done.
	ClaimAgentReportedEnd = "agent-reported-end"
	// ClaimProcessEnded: the agent's process ended while the child was
	// still open; how the child ended is unknown.
	ClaimProcessEnded = "launched-process-ended"
	// ClaimAgentProcessEnded: the agent's process (adopted, not launched)
	// ended while the child was still open; how it ended is unknown.
	ClaimAgentProcessEnded = "agent-process-ended"
	// ClaimSessionEnded: the session ended while this sub-agent was still
	// open; how the sub-agent ended is unknown.
	ClaimSessionEnded = "session-ended"
)

// Keys of the members an agent integration adds to a launched process's
// created event (event.Created's Extra: KeyAgent) and terminal event
// (event.Terminal's Extra: the others). Readers decode them with
// CreatedMembers and TerminalMembers.
const (
	KeyAgent                = "agent"
	KeyAgentOutputUnread    = "agentOutputUnread"
	KeyAgentReport          = "agentReport"
	KeyAgentSessions        = "agentSessions"
	KeyHookRequestsRejected = "hookRequestsRejected"
	// KeyTelemetry counts the agent's telemetry payloads a run read,
	// dropped (its queue was full) and could not read.
	KeyTelemetry = "agentTelemetry"
)

// CreatedMembers are the agent members of a launched process's created
// event, as a reader decodes them (event.DecodeDetails).
type CreatedMembers struct {
	Agent *AgentLaunch `json:"agent,omitempty"`
}

// TerminalMembers are the agent members of a launched process's
// terminal event, as a reader decodes them (event.DecodeDetails).
type TerminalMembers struct {
	AgentOutputUnread    *AgentOutputUnread `json:"agentOutputUnread,omitempty"`
	AgentReport          *AgentReport       `json:"agentReport,omitempty"`
	AgentSessions        *AgentSessions     `json:"agentSessions,omitempty"`
	HookRequestsRejected IntMap             `json:"hookRequestsRejected,omitempty"`
	AgentTelemetry       IntMap             `json:"agentTelemetry,omitempty"`
}

// AgentEvent is the details of every event an agent source writes for a
// session or sub-agent.
type AgentEvent struct {
	Agent     string `json:"agent,omitempty"` // created: the source
	AgentID   string `json:"agentId,omitempty"`
	AgentType string `json:"agentType,omitempty"`
	Claim     string `json:"claim,omitempty"` // terminal
	// Decision is who decided a tool call's permission, and how, as the
	// agent reported it (its telemetry).
	Decision      *AgentDecision `json:"decision,omitempty"`
	Evidence      string         `json:"evidence,omitempty"`
	Limits        string         `json:"limits,omitempty"`
	Message       string         `json:"message,omitempty"`
	Normalization *Normalization `json:"normalization,omitempty"`
	Note          string         `json:"note,omitempty"`
	Observation   string         `json:"observation,omitempty"`
	Process       *AgentProcess  `json:"process,omitempty"`
	Reason        string         `json:"reason,omitempty"`
	// Reported is what the agent said besides (cwd, model, transcript
	// path, usage...), as it said it (see Facts).
	Reported      *Facts `json:"reported,omitempty"`
	ReportedError string `json:"reportedError,omitempty"`
	SessionID     string `json:"sessionId,omitempty"`
	SessionSource string `json:"sessionSource,omitempty"`
	Tool          string `json:"tool,omitempty"`
	// Usage is the agent's own running totals of its model requests for
	// this session or sub-agent (its telemetry): its estimate.
	Usage      *AgentTotals `json:"agentUsage,omitempty"`
	WaitingFor string       `json:"waitingFor,omitempty"`
	// Wrapper is, in a created event, the lcwrap process that owns the
	// child's events (the wrapper of a run it launched): its lifecycle
	// source, checked by reconciliation like a launched child's.
	Wrapper *event.Identity `json:"wrapper,omitempty"`
}

// AgentTotals are an agent's running totals of its model requests for
// one session or sub-agent, as its own telemetry reported them (Claude
// Code's claude_code.api_request): requests, tokens by kind, and its cost
// estimate in US dollars. They are the agent's report (ReportedBy, Via),
// never lcwrap's measurement; Dropped counts telemetry payloads lcwrap
// could not take (its queue was full), so the totals may be short.
// CostUnknown: the agent reports no cost (Gemini CLI), so CostUSD is not
// one.
type AgentTotals struct {
	CacheCreation int64   `json:"cacheCreation"`
	CacheRead     int64   `json:"cacheRead"`
	CostUSD       float64 `json:"costUsd"`
	CostUnknown   bool    `json:"costUnknown,omitempty"`
	Dropped       int64   `json:"dropped,omitempty"`
	Input         int64   `json:"input"`
	Model         string  `json:"model,omitempty"`
	Output        int64   `json:"output"`
	ReportedBy    string  `json:"reportedBy"`
	Requests      int64   `json:"requests"`
	Via           string  `json:"via"`
}

// AgentDecision is a tool call's permission decision as the agent
// reported it: Decision ("accept", "reject"), Source (who: "user",
// "config", "hook", as the agent names them), the tool and its call id.
type AgentDecision struct {
	Decision  string `json:"decision"`
	Source    string `json:"source"`
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"toolUseId,omitempty"`
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

// AgentProcess is the process whose end ended a child: its child id and
// exit as lcwrap recorded it.
type AgentProcess struct {
	ChildID string      `json:"childId,omitempty"`
	Exit    *event.Exit `json:"exit,omitempty"`
}

// IntMap is a JSON object of counts, written with sorted keys. A count
// under a sensitive name (redact.SensitiveKey) is written as
// redact.Marker, as emit redacts every object (redact.Value).
type IntMap map[string]int

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
	// TraceID is the W3C trace id the agent was given in TRACEPARENT
	// (TraceFrom: "lcwrap", a new trace for this run, or "user", the
	// caller's own TRACEPARENT passed on as the parent).
	TraceID   string `json:"traceId,omitempty"`
	TraceFrom string `json:"traceFrom,omitempty"`
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

// AgentSessions is the "agentSessions" member of a launched process's
// terminal event: the agent's sessions seen in that run, and payloads that
// named no session, by kind.
type AgentSessions struct {
	Sessions     []string `json:"sessions,omitempty"`
	Source       string   `json:"source"`
	Unattributed IntMap   `json:"unattributed,omitempty"`
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

// AgentUsage is the agent's own count of model tokens, by kind.
type AgentUsage struct {
	CacheCreation *int64 `json:"cacheCreation,omitempty"`
	CacheRead     *int64 `json:"cacheRead,omitempty"`
	Input         *int64 `json:"input,omitempty"`
	Output        *int64 `json:"output,omitempty"`
}

// AgentOutputUnread is the "agentOutputUnread" member of a launched
// process's terminal event: bytes of the agent's output that passed
// through but could not be read in time.
type AgentOutputUnread struct {
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Facts is what an agent said about a session or sub-agent besides what
// an event's own members carry (cwd, model, transcript path, usage...), as
// it said it: the "reported" member of an AgentEvent (docs/agents.md).
// Every source fills the members it has; an empty member is omitted.
type Facts struct {
	// Claude Code's Stop hook: background tasks still running (if any).
	BackgroundTasksRunning int64 `json:"backgroundTasksRunning,omitempty"`
	// Codex's session_meta: its CLI version.
	CLIVersion string `json:"cliVersion,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	// Codex's turn end: the turn's duration (0 is a duration).
	DurationMs *int64 `json:"durationMs,omitempty"`
	// Codex's reported error message (an empty message is still one).
	Error *string `json:"error,omitempty"`
	// Codex's command exit code.
	ExitCode    *int64 `json:"exitCode,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// Claude Code's pid registry: the session's kind.
	Kind           string `json:"kind,omitempty"`
	Model          string `json:"model,omitempty"`
	Notification   string `json:"notification,omitempty"`
	Originator     string `json:"originator,omitempty"`
	PermissionMode string `json:"permissionMode,omitempty"`
	// Claude Code's session list (`claude agents`): the session's pid,
	// and its state beside its status (the two can disagree: both kept).
	PID   int64  `json:"pid,omitempty"`
	State string `json:"state,omitempty"`
	// Codex's turn end: why it ended.
	Reason string `json:"reason,omitempty"`
	// Claude Code's pid registry file.
	Registry string `json:"registry,omitempty"`
	// RolloutProof is lcwrap's proof that a codex rollout is the
	// observed process's session (its session's created event).
	RolloutProof *RolloutFacts `json:"rolloutProof,omitempty"`
	// Codex's item status.
	Status     string `json:"status,omitempty"`
	ToolUseID  string `json:"toolUseId,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	// Usage is codex's token counts of a turn, under lcwrap's names.
	Usage   NamedCounts `json:"usage,omitempty"`
	Version string      `json:"version,omitempty"`
}

// IsZero reports whether f has no member to write.
func (f *Facts) IsZero() bool {
	return f.BackgroundTasksRunning == 0 && f.CLIVersion == "" && f.Cwd == "" && f.DurationMs == nil &&
		f.Error == nil && f.ExitCode == nil && !f.Interrupted && f.Kind == "" && f.Model == "" &&
		f.Notification == "" && f.Originator == "" && f.PermissionMode == "" && f.PID == 0 && f.State == "" && f.Reason == "" &&
		f.Registry == "" && f.RolloutProof == nil && f.Status == "" && f.ToolUseID == "" &&
		f.Transcript == "" && len(f.Usage) == 0 && f.Version == ""
}

// RolloutFacts is a codex rollout proof as a session's created event
// reports it: the rollout, its thread, the pids from the observed process
// down to the holder, and the holder's {pid, startTime}.
type RolloutFacts struct {
	Chain      []int       `json:"chain"`
	Evidence   string      `json:"evidence"`
	Holder     HolderFacts `json:"holder"`
	OwnSession bool        `json:"ownSession"`
	Rollout    string      `json:"rollout"`
	ThreadID   string      `json:"threadId"`
}

// MarshalJSON writes an empty chain as [] (never null).
func (d RolloutFacts) MarshalJSON() ([]byte, error) {
	type own RolloutFacts
	if d.Chain == nil {
		d.Chain = []int{}
	}
	return json.Marshal(own(d))
}

// HolderFacts is the process holding a rollout open.
type HolderFacts struct {
	PID       int   `json:"pid"`
	StartTime int64 `json:"startTime"`
}

// NamedCount is one named count of NamedCounts.
type NamedCount struct {
	Name string
	N    int64
	// Redacted is a count read back as redact.Marker (its name is a
	// sensitive key); it is written as the marker again.
	Redacted bool
}

// NamedCounts is a JSON object of open-ended named counts (codex's token
// usage: a count lcwrap does not know keeps its name), kept sorted by
// name, one count a name. A count under a sensitive name is written as
// redact.Marker, as a redacted map would have it.
type NamedCounts []NamedCount

// Set sets the count called name, keeping c sorted.
func (c *NamedCounts) Set(name string, n int64) {
	i := sort.Search(len(*c), func(i int) bool { return (*c)[i].Name >= name })
	if i < len(*c) && (*c)[i].Name == name {
		(*c)[i] = NamedCount{Name: name, N: n}
		return
	}
	*c = append(*c, NamedCount{})
	copy((*c)[i+1:], (*c)[i:])
	(*c)[i] = NamedCount{Name: name, N: n}
}

// Get returns the count called name.
func (c NamedCounts) Get(name string) (int64, bool) {
	i := sort.Search(len(c), func(i int) bool { return c[i].Name >= name })
	if i < len(c) && c[i].Name == name && !c[i].Redacted {
		return c[i].N, true
	}
	return 0, false
}

// MarshalJSON implements json.Marshaler.
func (c NamedCounts) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	m := make(map[string]any, len(c))
	for _, e := range c {
		if e.Redacted || redact.SensitiveKey(e.Name) {
			m[e.Name] = redact.Marker
			continue
		}
		m[e.Name] = e.N
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads an object of counts; a member that is not an
// integer (the redaction marker) is a Redacted count.
func (c *NamedCounts) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*c = nil
		return nil
	}
	out := make(NamedCounts, 0, len(m))
	for k, v := range m {
		var n int64
		if json.Unmarshal(v, &n) != nil {
			out = append(out, NamedCount{Name: k, Redacted: true})
			continue
		}
		out = append(out, NamedCount{Name: k, N: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	*c = out
	return nil
}
