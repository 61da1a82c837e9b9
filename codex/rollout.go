package codex

import (
	"encoding/json"
	"fmt"
	"strings"
)

// rolloutLine is the envelope of every line of a rollout file
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl).
type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// rolloutPayload holds the payload fields lcwrap reads, of any line type.
type rolloutPayload struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	Timestamp  string          `json:"timestamp"`
	Originator string          `json:"originator"`
	CLIVersion string          `json:"cli_version"`
	Source     json.RawMessage `json:"source"`
	Role       string          `json:"role"`
	Name       string          `json:"name"`
	Arguments  string          `json:"arguments"`
	DurationMs *float64        `json:"duration_ms"`
	Reason     json.RawMessage `json:"reason"`
	Message    string          `json:"message"`
	Item       *rolloutItem    `json:"item"`
	Command    json.RawMessage `json:"command"`
	ExitCode   *int            `json:"exit_code"`
}

// rolloutItem is the item of an item_started / item_completed event_msg.
type rolloutItem struct {
	Type     string          `json:"type"`
	Command  json.RawMessage `json:"command"`
	ExitCode *int            `json:"exit_code"`
	Status   string          `json:"status"`
	Server   string          `json:"server"`
	Tool     string          `json:"tool"`
}

// SessionMeta is what a rollout's session_meta line says about the
// session: its thread id and when codex created it.
type SessionMeta struct {
	ID        string
	Timestamp string
}

// ParseSessionMeta reads a rollout's first line. It reports false unless
// the line is a session_meta with an id.
func ParseSessionMeta(line []byte) (SessionMeta, bool) {
	var l rolloutLine
	var p rolloutPayload
	if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" || json.Unmarshal(l.Payload, &p) != nil || p.ID == "" {
		return SessionMeta{}, false
	}
	return SessionMeta{ID: p.ID, Timestamp: p.Timestamp}, true
}

// ParseRollout reads one line of a rollout file. It never fails: a line
// it cannot read is Malformed, a type it does not know Unrecognized.
func ParseRollout(line []byte) Observation {
	var l rolloutLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Observation{Kind: Malformed, Reason: "not a JSON object"}
	}
	var p rolloutPayload
	if len(l.Payload) > 0 && json.Unmarshal(l.Payload, &p) != nil {
		return Observation{Kind: Malformed, Reason: "payload is not an object of the known shape"}
	}
	switch l.Type {
	case "session_meta":
		if p.ID == "" {
			return Observation{Kind: Malformed, Reason: "session_meta without id"}
		}
		r := map[string]any{"event": l.Type}
		for k, v := range map[string]string{"originator": p.Originator, "cliVersion": p.CLIVersion} {
			if v != "" {
				r[k] = cutTag(v)
			}
		}
		var src string
		if json.Unmarshal(p.Source, &src) == nil && src != "" {
			r["source"] = cutTag(src)
		}
		return Observation{Kind: SessionStarted, SessionID: p.ID, Report: r}
	case "turn_context", "world_state", "token_usage_record":
		return Observation{Kind: Ignored, Reason: "session bookkeeping"}
	case "compacted":
		return Observation{Kind: Ignored, Reason: "history compaction"}
	case "response_item":
		return rolloutResponseItem(p)
	case "event_msg":
		return rolloutEvent(p)
	case "":
		return Observation{Kind: Unrecognized, Discriminator: "(no type)"}
	}
	return Observation{Kind: Unrecognized, Discriminator: cutTag(l.Type)}
}

// rolloutResponseItem maps the model-side items: only tool calls are
// activity; messages and reasoning are the conversation, not recorded.
func rolloutResponseItem(p rolloutPayload) Observation {
	switch p.Type {
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call":
		name := p.Name
		if name == "" {
			name = p.Type
		}
		act := "tool call: " + cutTag(name)
		if name == "exec_command" {
			var a struct {
				Cmd string `json:"cmd"`
			}
			if json.Unmarshal([]byte(p.Arguments), &a) == nil && a.Cmd != "" {
				act += ": " + oneLine(a.Cmd)
			}
		}
		return Observation{Kind: Activity, Running: true, Activity: act, Report: map[string]any{"event": "response_item", "item": p.Type, "tool": cutTag(name)}}
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		return Observation{Kind: Ignored, Reason: "tool output (not recorded)"}
	case "message", "reasoning", "ghost_snapshot", "compaction", "compaction_summary":
		return Observation{Kind: Ignored, Reason: "conversation content (not recorded)"}
	case "":
		return Observation{Kind: Unrecognized, Discriminator: "response_item:(no type)"}
	}
	return Observation{Kind: Unrecognized, Discriminator: cutTag("response_item:" + p.Type)}
}

// rolloutEvent maps codex's protocol events as the rollout keeps them.
func rolloutEvent(p rolloutPayload) Observation {
	ev := "event_msg:" + p.Type
	switch p.Type {
	case "task_started", "turn_started":
		return Observation{Kind: TurnStarted}
	case "task_complete", "turn_complete":
		r := map[string]any{"event": ev}
		if p.DurationMs != nil {
			r["durationMs"] = int64(*p.DurationMs)
		}
		return Observation{Kind: TurnEnded, Activity: "turn completed", Waiting: "next-prompt", Report: r}
	case "turn_aborted":
		r := map[string]any{"event": ev}
		var reason string
		if json.Unmarshal(p.Reason, &reason) == nil && reason != "" {
			r["reason"] = cutTag(reason)
		}
		return Observation{Kind: TurnEnded, Activity: "turn aborted", Waiting: "next-prompt", Report: r}
	case "exec_approval_request", "apply_patch_approval_request", "request_permissions", "elicitation_request":
		return Observation{Kind: Waiting, Waiting: "approval", Report: map[string]any{"event": ev}}
	case "request_user_input":
		return Observation{Kind: Waiting, Waiting: "user-input", Report: map[string]any{"event": ev}}
	case "exec_command_begin", "exec_command_end":
		o := Observation{Kind: Activity, Running: true, Report: map[string]any{"event": ev}}
		o.Activity = "command " + strings.TrimPrefix(p.Type, "exec_command_") + ": " + commandText(p.Command)
		if p.ExitCode != nil {
			o.Report["exitCode"] = *p.ExitCode
			o.Activity = fmt.Sprintf("command exited %d: %s", *p.ExitCode, commandText(p.Command))
		}
		return o
	case "item_started", "item_completed":
		return rolloutEventItem(ev, p.Item)
	case "error", "stream_error", "warning":
		return Observation{Kind: AgentError, Report: map[string]any{"event": ev, "message": p.Message}}
	case "token_count", "thread_settings_applied", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
		"user_message", "agent_message_delta", "agent_reasoning_delta", "context_compacted", "thread_name_updated":
		return Observation{Kind: Ignored, Reason: "conversation or settings (not recorded)"}
	case "":
		return Observation{Kind: Unrecognized, Discriminator: "event_msg:(no type)"}
	}
	return Observation{Kind: Unrecognized, Discriminator: cutTag(ev)}
}

// rolloutEventItem maps the items of item_started / item_completed.
func rolloutEventItem(ev string, it *rolloutItem) Observation {
	if it == nil {
		return Observation{Kind: Malformed, Reason: ev + " without item"}
	}
	phase := strings.TrimPrefix(ev, "event_msg:item_")
	o := Observation{Kind: Activity, Running: true, Report: map[string]any{"event": ev, "item": cutTag(it.Type)}}
	if it.Status != "" {
		o.Report["status"] = cutTag(it.Status)
	}
	switch it.Type {
	case "CommandExecution":
		o.Activity = "command " + phase + ": " + commandText(it.Command)
		if it.ExitCode != nil {
			o.Report["exitCode"] = *it.ExitCode
			o.Activity = fmt.Sprintf("command exited %d: %s", *it.ExitCode, commandText(it.Command))
		}
	case "FileChange":
		o.Activity = "file change " + phase
	case "McpToolCall":
		o.Activity = "mcp tool " + phase + ": " + it.Server + "." + it.Tool
	case "WebSearch":
		o.Activity = "web search " + phase
	case "AgentMessage":
		o.Activity = "agent message"
	case "Reasoning":
		o.Activity = "reasoning"
	case "UserMessage":
		return Observation{Kind: Ignored, Reason: "user message (prompt not recorded)"}
	default:
		return Observation{Kind: Unrecognized, Discriminator: cutTag(ev + ":" + it.Type)}
	}
	return o
}

// commandText is a command given as a string or as an argv array; a
// `bash -lc SCRIPT` argv shows its script.
func commandText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return oneLine(s)
	}
	var argv []string
	if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 {
		return ""
	}
	if n := len(argv); n >= 3 && (argv[n-2] == "-lc" || argv[n-2] == "-c") {
		return oneLine(argv[n-1])
	}
	return oneLine(strings.Join(argv, " "))
}
