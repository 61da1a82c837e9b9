package event

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/lcwrap/lcwrap/internal/redact"
)

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
	Usage   Counts `json:"usage,omitempty"`
	Version string `json:"version,omitempty"`
}

// IsZero reports whether f has no member to write.
func (f *Facts) IsZero() bool {
	return f.BackgroundTasksRunning == 0 && f.CLIVersion == "" && f.Cwd == "" && f.DurationMs == nil &&
		f.Error == nil && f.ExitCode == nil && !f.Interrupted && f.Kind == "" && f.Model == "" &&
		f.Notification == "" && f.Originator == "" && f.PermissionMode == "" && f.Reason == "" &&
		f.Registry == "" && f.RolloutProof == nil && f.Status == "" && f.ToolUseID == "" &&
		f.Transcript == "" && len(f.Usage) == 0 && f.Version == ""
}

// AppendDetails implements Details.
func (f Facts) AppendDetails(o *Object) {
	o.OptInt("backgroundTasksRunning", f.BackgroundTasksRunning)
	o.OptString("cliVersion", f.CLIVersion)
	o.OptString("cwd", f.Cwd)
	if f.DurationMs != nil {
		o.Int("durationMs", *f.DurationMs)
	}
	if f.Error != nil {
		o.String("error", *f.Error)
	}
	if f.ExitCode != nil {
		o.Int("exitCode", *f.ExitCode)
	}
	if f.Interrupted {
		o.Bool("interrupted", true)
	}
	o.OptString("kind", f.Kind)
	o.OptString("model", f.Model)
	o.OptString("notification", f.Notification)
	o.OptString("originator", f.Originator)
	o.OptString("permissionMode", f.PermissionMode)
	o.OptString("reason", f.Reason)
	o.OptString("registry", f.Registry)
	if f.RolloutProof != nil {
		o.Object("rolloutProof", f.RolloutProof)
	}
	o.OptString("status", f.Status)
	o.OptString("toolUseId", f.ToolUseID)
	o.OptString("transcript", f.Transcript)
	if len(f.Usage) > 0 {
		o.Object("usage", f.Usage)
	}
	o.OptString("version", f.Version)
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

// AppendDetails implements Details.
func (d RolloutFacts) AppendDetails(o *Object) {
	chain := d.Chain
	if chain == nil {
		chain = []int{}
	}
	o.Ints("chain", chain)
	o.String("evidence", d.Evidence)
	o.Object("holder", d.Holder)
	o.Bool("ownSession", d.OwnSession)
	o.String("rollout", d.Rollout)
	o.String("threadId", d.ThreadID)
}

// HolderFacts is the process holding a rollout open.
type HolderFacts struct {
	PID       int   `json:"pid"`
	StartTime int64 `json:"startTime"`
}

// AppendDetails implements Details.
func (d HolderFacts) AppendDetails(o *Object) {
	o.Int("pid", int64(d.PID))
	o.Int("startTime", d.StartTime)
}

// Count is one named count of Counts.
type Count struct {
	Name string
	N    int64
	// Redacted is a count read back as redact.Marker (its name is a
	// sensitive key); it is written as the marker again.
	Redacted bool
}

// Counts is a JSON object of open-ended named counts (codex's token
// usage: a count lcwrap does not know keeps its name), kept sorted by
// name, one count a name. A count under a sensitive name is written as
// redact.Marker, as a redacted map would have it.
type Counts []Count

// Set sets the count called name, keeping c sorted.
func (c *Counts) Set(name string, n int64) {
	i := sort.Search(len(*c), func(i int) bool { return (*c)[i].Name >= name })
	if i < len(*c) && (*c)[i].Name == name {
		(*c)[i] = Count{Name: name, N: n}
		return
	}
	*c = append(*c, Count{})
	copy((*c)[i+1:], (*c)[i:])
	(*c)[i] = Count{Name: name, N: n}
}

// Get returns the count called name.
func (c Counts) Get(name string) (int64, bool) {
	i := sort.Search(len(c), func(i int) bool { return c[i].Name >= name })
	if i < len(c) && c[i].Name == name && !c[i].Redacted {
		return c[i].N, true
	}
	return 0, false
}

// AppendDetails implements Details.
func (c Counts) AppendDetails(o *Object) {
	for _, e := range c {
		if o.n > 0 {
			o.b = append(o.b, ',')
		}
		o.n++
		o.b = AppendString(o.b, e.Name)
		o.b = append(o.b, ':')
		if e.Redacted || redact.SensitiveKey(e.Name) {
			o.str(redact.Marker)
			continue
		}
		o.b = strconv.AppendInt(o.b, e.N, 10)
	}
}

// MarshalJSON implements json.Marshaler.
func (c Counts) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return MarshalDetails(c)
}

// UnmarshalJSON reads an object of counts; a member that is not an
// integer (the redaction marker) is a Redacted count.
func (c *Counts) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*c = nil
		return nil
	}
	out := make(Counts, 0, len(m))
	for k, v := range m {
		var n int64
		if json.Unmarshal(v, &n) != nil {
			out = append(out, Count{Name: k, Redacted: true})
			continue
		}
		out = append(out, Count{Name: k, N: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	*c = out
	return nil
}
