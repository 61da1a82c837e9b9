package claudecode

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/lazy"
)

// Source is the source name of every event this package's evidence
// becomes, and the --agent value.
const Source = "claude-code"

// MaxPayload bounds the bytes of one hook payload that are read; a larger
// one is not parsed (it is counted as unreadable).
const MaxPayload = 1 << 20

// payload is the part of a hook payload lcwrap reads. Everything else —
// prompt, tool_response, last_assistant_message, error_details — is never
// decoded, so it can never be recorded. Unknown fields are ignored.
type payload struct {
	Event          string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	Transcript     string          `json:"transcript_path"`
	AgentTranscrip string          `json:"agent_transcript_path"`
	PermissionMode string          `json:"permission_mode"`
	Source         string          `json:"source"`
	Model          string          `json:"model"`
	Reason         string          `json:"reason"`
	Tool           string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	Notification   string          `json:"notification_type"`
	Message        string          `json:"message"`
	Error          json.RawMessage `json:"error"`
	ErrorType      string          `json:"error_type"`
	Trigger        string          `json:"trigger"`
	IsInterrupt    bool            `json:"is_interrupt"`
	Background     []struct {
		Status string `json:"status"`
	} `json:"background_tasks"`
}

// ignored are hook events lcwrap knows and deliberately records nothing
// for: they say nothing about the lifecycle.
var ignored = lazy.Value[map[string]string]{Make: func() map[string]string {
	return map[string]string{
		"Setup":               "set-up hook",
		"ConfigChange":        "configuration change",
		"InstructionsLoaded":  "instructions loaded",
		"WorktreeCreate":      "worktree bookkeeping",
		"WorktreeRemove":      "worktree bookkeeping",
		"CwdChanged":          "working directory change",
		"FileChanged":         "file change notice",
		"TaskCreated":         "task list bookkeeping",
		"TaskCompleted":       "task list bookkeeping",
		"TeammateIdle":        "agent-team bookkeeping",
		"Elicitation":         "MCP elicitation",
		"ElicitationResult":   "MCP elicitation",
		"PermissionDenied":    "permission bookkeeping",
		"PostCompact":         "compaction bookkeeping",
		"UserPromptExpansion": "prompt expansion",
	}
}}

// Normalize maps one hook payload (the JSON Claude Code passes a hook) to
// an Outcome. It never fails: a payload it cannot read, or a hook event
// it does not know, is an Unrecognized outcome naming only its type tag.
func Normalize(raw []byte) agent.Outcome {
	out, _ := normalize(raw)
	return out
}

// normalize is Normalize, with the payload as read (its session and
// transcript name the file an interruption is read from).
func normalize(raw []byte) (agent.Outcome, *payload) {
	var p payload
	if len(raw) > MaxPayload || !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return agent.Unrecognize("", "(unreadable hook payload)"), nil
	}
	return normalizePayload(&p), &p
}

func normalizePayload(p *payload) agent.Outcome {
	if p.Event == "" {
		return agent.Unrecognize(p.SessionID, "(hook payload without hook_event_name)")
	}
	o := agent.Observation{Session: p.SessionID, Native: p.Event, Agent: p.AgentID, AgentType: p.AgentType}
	switch p.Event {
	case "SessionStart":
		o.Kind, o.Source = agent.SessionStarted, p.Source
		o.Facts = agent.Facts{Cwd: fact(p.Cwd), Model: fact(p.Model), Transcript: fact(p.Transcript), PermissionMode: fact(p.PermissionMode)}
	case "UserPromptSubmit":
		o.Kind = agent.PromptSubmitted
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
		o.Kind = map[string]agent.Kind{"PreToolUse": agent.ToolStarted, "PostToolUse": agent.ToolEnded, "PostToolUseFailure": agent.ToolFailed}[p.Event]
		o.Tool, o.Summary = cut(p.Tool, 64), Summary(p.Tool, p.ToolInput)
		o.Facts = agent.Facts{ToolUseID: fact(p.ToolUseID), Interrupted: p.IsInterrupt}
	case "PermissionRequest":
		o.Kind, o.WaitingFor = agent.Waiting, event.WaitPermission
		o.Tool, o.Summary = cut(p.Tool, 64), Summary(p.Tool, p.ToolInput)
	case "Notification":
		switch p.Notification {
		case "permission_prompt":
			o.Kind, o.WaitingFor = agent.Waiting, event.WaitPermission
		case "idle_prompt":
			// The prompt has sat idle (60 s): the next move is the
			// user's, whatever ended the turn (a Stop, or an
			// interruption that fired no hook).
			o.Kind, o.WaitingFor = agent.Waiting, event.WaitUser
		case "elicitation_dialog":
			o.Kind, o.WaitingFor = agent.Waiting, event.WaitInput
		default:
			o.Kind = agent.Note
			o.Summary = "notification" + paren(cut(p.Notification, 40))
		}
		if o.Kind == agent.Waiting {
			o.Summary = cut(p.Message, 120)
		}
		o.Facts = agent.Facts{Notification: fact(cut(p.Notification, 40))}
	case "Stop":
		o.Kind = agent.TurnEnded
		running := 0
		for _, b := range p.Background {
			if b.Status == "running" {
				running++
			}
		}
		if running > 0 {
			o.Facts = agent.Facts{BackgroundTasksRunning: int64(running)}
		}
	case "StopFailure":
		o.Kind, o.Reason = agent.ErrorReported, errorClass(p)
	case "SubagentStart":
		o.Kind = agent.SubagentStarted
	case "SubagentStop":
		o.Kind = agent.SubagentStopped
		o.Facts = agent.Facts{Transcript: fact(p.AgentTranscrip)}
	case "SessionEnd":
		o.Kind, o.Reason = agent.SessionEnded, cut(p.Reason, 64)
		o.Facts = agent.Facts{Transcript: fact(p.Transcript)}
	case "PreCompact":
		o.Kind, o.Summary = agent.Note, "compacting the conversation"+paren(cut(p.Trigger, 20))
	default:
		if reason, ok := ignored.Get()[p.Event]; ok {
			return agent.Ignore(p.SessionID, reason)
		}
		return agent.Unrecognize(p.SessionID, p.Event)
	}
	if (o.Kind == agent.SubagentStarted || o.Kind == agent.SubagentStopped) && o.Agent == "" {
		return agent.Unrecognize(p.SessionID, "("+p.Event+" without agent_id)")
	}
	return agent.Observe(o)
}

// errorClass is the class of a StopFailure's error: error_type, or error
// when it is a short identifier, never a message.
func errorClass(p *payload) string {
	if p.ErrorType != "" {
		return cut(p.ErrorType, 64)
	}
	var s string
	if json.Unmarshal(p.Error, &s) == nil && s != "" && len(s) <= 64 && !strings.ContainsAny(s, " \n\t") {
		return s
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(p.Error, &obj) == nil && obj.Type != "" {
		return cut(obj.Type, 64)
	}
	return "unknown"
}

// facts builds a details map from name, value pairs, leaving out empty
// values.
// fact is one string the agent reported, cut short ("" stays "": an
// empty fact is not written).
func fact(s string) string { return cut(s, 500) }

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// cut keeps s printable and at most n characters (runes).
func cut(s string, n int) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		if i == n {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
		i++
	}
	return strings.TrimSpace(b.String())
}
