package codex

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// MaxHookPayload bounds the bytes of one hook payload that are read; a
// larger one is unrecognised (codex's own are a few hundred bytes: the
// tool's input is the largest part).
const MaxHookPayload = 1 << 20

// hookPayload is one codex hook call's input on stdin: the fields lcwrap
// reads (the prompt, tool_response and last_assistant_message are never
// read).
type hookPayload struct {
	Event          string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	Cwd            string          `json:"cwd"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	Transcript     *string         `json:"transcript_path"`
	Source         string          `json:"source"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	AgentTranscrip *string         `json:"agent_transcript_path"`
	Trigger        string          `json:"trigger"`
	Error          json.RawMessage `json:"error"`
}

// NormalizeHook maps one codex hook payload (its stdin, as `lcwrap hook
// codex --relay` hands it over) once. turnsWait says whether a turn's end
// leaves codex waiting for the user (the TUI), or not (exec exits after
// its turn). It never fails and never panics: a payload it cannot read is
// unrecognized "(malformed)", an event it does not know unrecognized by
// its name.
func NormalizeHook(raw []byte, turnsWait bool) agent.Outcome {
	var p hookPayload
	if len(raw) > MaxHookPayload || !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return agent.Unrecognize("", "(malformed)")
	}
	if p.SessionID == "" {
		return agent.Unrecognize("", cutTag(p.Event)+" without session_id")
	}
	o := agent.Observation{Session: p.SessionID, Native: cutTag(p.Event)}
	facts := agent.Facts{Cwd: fact(p.Cwd), Model: fact(p.Model), PermissionMode: fact(p.PermissionMode)}
	switch p.Event {
	case "SessionStart":
		o.Kind, o.Source = agent.SessionStarted, cutTag(p.Source)
		if p.Transcript != nil {
			facts.Transcript = fact(*p.Transcript)
		}
		o.Facts = facts
	case "UserPromptSubmit":
		o.Kind = agent.PromptSubmitted // the prompt is never read
	case "PreToolUse":
		// A sub-agent's tool calls name it (agent_id): they are its activity.
		o.Agent, o.AgentType = p.AgentID, cutTag(p.AgentType)
		o.Kind, o.Tool, o.Summary = agent.ToolStarted, cutTag(p.ToolName), toolSummary(p.ToolInput)
		o.Facts = agent.Facts{ToolUseID: fact(p.ToolUseID)}
	case "PostToolUse":
		o.Agent, o.AgentType = p.AgentID, cutTag(p.AgentType)
		o.Kind, o.Tool = agent.ToolEnded, cutTag(p.ToolName) // tool_response is never read
		o.Facts = agent.Facts{ToolUseID: fact(p.ToolUseID)}
	case "PermissionRequest":
		o.Agent, o.AgentType = p.AgentID, cutTag(p.AgentType)
		o.Kind, o.WaitingFor = agent.Waiting, event.WaitPermission
		o.Tool, o.Summary = cutTag(p.ToolName), toolSummary(p.ToolInput)
	case "Stop":
		o.Kind, o.Summary = agent.Note, "turn ended"
		if turnsWait {
			o.Kind = agent.TurnEnded
		}
	case "Interrupt":
		o.Kind, o.Summary, o.Reason = agent.Note, "turn interrupted by the user", "interrupted"
		o.Facts = agent.Facts{Interrupted: true}
		if turnsWait {
			o.Kind = agent.TurnEnded
		}
	case "StopFailure":
		// The turn ended on an API error, as codex reports it: the error
		// class is its report; the TUI then waits for the user again.
		failed := o
		failed.Kind, failed.Reason = agent.ErrorReported, "StopFailure:"+errorClass(p.Error)
		if !turnsWait {
			return agent.Observe(failed)
		}
		o.Kind = agent.TurnEnded
		return agent.Observe(failed, o)
	case "SubagentStart", "SubagentStop":
		if p.AgentID == "" {
			return agent.Unrecognize(p.SessionID, p.Event+" without agent_id")
		}
		o.Kind, o.Agent, o.AgentType = agent.SubagentStarted, p.AgentID, cutTag(p.AgentType)
		if p.Event == "SubagentStop" {
			o.Kind = agent.SubagentStopped
			if p.AgentTranscrip != nil {
				o.Facts = agent.Facts{Transcript: fact(*p.AgentTranscrip)}
			}
		}
	case "PreCompact":
		o.Kind, o.Summary = agent.Note, "compacting the conversation"+parenTag(p.Trigger)
	case "PostCompact":
		o.Kind, o.Summary = agent.Note, "conversation compacted"+parenTag(p.Trigger)
	default:
		return agent.Unrecognize(p.SessionID, cutTag(p.Event))
	}
	return agent.Observe(o)
}

// toolSummary is what a tool was asked to do, briefly: its command (a
// string, or an argv), else the path it works on; nothing else of its
// input is kept.
func toolSummary(raw json.RawMessage) string {
	var in struct {
		Command  json.RawMessage `json:"command"`
		FilePath string          `json:"file_path"`
		Path     string          `json:"path"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil && s != "" {
		return oneLine(s)
	}
	var argv []string
	if json.Unmarshal(in.Command, &argv) == nil && len(argv) > 0 {
		b := ""
		for i, a := range argv {
			if i > 0 {
				b += " "
			}
			b += a
			if len(b) > 400 {
				break
			}
		}
		return oneLine(b)
	}
	if in.FilePath != "" {
		return oneLine(in.FilePath)
	}
	return oneLine(in.Path)
}

// errorClass is a StopFailure's error class (codex sends one word of a
// fixed set: rate_limit, server_error, ...), never a message: anything
// longer or spaced is "other".
func errorClass(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "unknown"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "other"
		}
	}
	return cutTag(s)
}

func fact(s string) string {
	if r := []rune(s); len(r) > 512 {
		return string(r[:512]) + "…"
	}
	return s
}

func parenTag(s string) string {
	if s == "" {
		return ""
	}
	return " (" + cutTag(oneLine(s)) + ")"
}
