package codex

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// rolloutLine is the envelope of every line of a rollout file
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl).
type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// rolloutPayload holds the payload fields lcwrap reads, of any line type.
// Fields whose shape varies between codex versions stay raw.
type rolloutPayload struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	Timestamp  string          `json:"timestamp"`
	Originator json.RawMessage `json:"originator"`
	CLIVersion json.RawMessage `json:"cli_version"`
	Source     json.RawMessage `json:"source"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	DurationMs json.RawMessage `json:"duration_ms"`
	Reason     json.RawMessage `json:"reason"`
	Message    json.RawMessage `json:"message"`
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

// RolloutReader maps the lines of one rollout file, proven to be the
// session of the observed process (Prove). Lines before or without a
// session_meta are attributed to Thread, the id in the file's name. Not
// safe for concurrent use.
type RolloutReader struct {
	// Thread is the thread id of the file (from its name).
	Thread string
	// exec: the session_meta says codex exec wrote it, which exits after
	// its turn rather than waiting for the user.
	exec bool
}

// Line maps one line (without its newline). It never fails and never
// panics: a line it cannot read is unrecognized "(malformed)", a type it
// does not know unrecognized by its type tag.
func (r *RolloutReader) Line(line []byte) agent.Outcome {
	var l rolloutLine
	var p rolloutPayload
	if json.Unmarshal(line, &l) != nil {
		return agent.Unrecognize(r.Thread, "(malformed)")
	}
	if len(l.Payload) > 0 && json.Unmarshal(l.Payload, &p) != nil {
		return agent.Unrecognize(r.Thread, "(malformed payload of "+cutTag(l.Type)+")")
	}
	obs := agent.Observation{Session: r.Thread, Native: cutTag(l.Type)}
	switch l.Type {
	case "session_meta":
		if p.ID == "" || (r.Thread != "" && !strings.EqualFold(p.ID, r.Thread)) {
			// Another thread's meta in this file: nothing here proves what it is.
			return agent.Unrecognize(r.Thread, "session_meta of another thread")
		}
		obs.Kind, obs.Source = agent.SessionStarted, str(p.Source)
		r.exec = obs.Source == "exec"
		obs.Facts = report(agent.Facts{Originator: cutTag(str(p.Originator)), CLIVersion: cutTag(str(p.CLIVersion))})
	case "turn_context", "world_state", "token_usage_record":
		return agent.Ignore(r.Thread, "session bookkeeping")
	case "compacted":
		return agent.Ignore(r.Thread, "history compaction")
	case "response_item":
		return r.responseItem(obs, p)
	case "event_msg":
		return r.event(obs, p)
	default:
		return agent.Unrecognize(r.Thread, cutTag(l.Type))
	}
	return agent.Observe(obs)
}

// responseItem maps the model's side: only tool calls are evidence;
// messages and reasoning are the conversation, never recorded.
func (r *RolloutReader) responseItem(obs agent.Observation, p rolloutPayload) agent.Outcome {
	obs.Native = "response_item:" + cutTag(p.Type)
	switch p.Type {
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call":
		obs.Kind, obs.Tool = agent.ToolStarted, cutTag(cmp.Or(p.Name, p.Type))
		if p.Name == "exec_command" {
			var a struct {
				Cmd string `json:"cmd"`
			}
			var args string
			if json.Unmarshal(p.Arguments, &args) == nil && json.Unmarshal([]byte(args), &a) == nil {
				obs.Summary = oneLine(a.Cmd)
			}
		}
		return agent.Observe(obs)
	case "function_call_output", "custom_tool_call_output", "tool_search_output":
		return agent.Ignore(r.Thread, "tool output (not recorded)")
	case "message", "reasoning", "ghost_snapshot", "compaction", "compaction_summary":
		return agent.Ignore(r.Thread, "conversation content (not recorded)")
	}
	return agent.Unrecognize(r.Thread, cutTag(obs.Native))
}

// event maps codex's protocol events as the rollout keeps them.
func (r *RolloutReader) event(obs agent.Observation, p rolloutPayload) agent.Outcome {
	obs.Native = "event_msg:" + cutTag(p.Type)
	switch p.Type {
	case "task_started", "turn_started":
		obs.Kind = agent.PromptSubmitted
	case "task_complete", "turn_complete", "turn_aborted":
		// The interactive session waits for the next prompt; exec exits.
		obs.Kind = agent.TurnEnded
		if r.exec {
			obs.Kind, obs.Summary = agent.Note, "turn ended"
		}
		var facts agent.Facts
		var ms float64
		if json.Unmarshal(p.DurationMs, &ms) == nil && ms >= 0 {
			facts.DurationMs = ptr(int64(ms))
		}
		facts.Reason = cutTag(str(p.Reason))
		obs.Facts = report(facts)
	case "exec_approval_request", "apply_patch_approval_request", "request_permissions", "elicitation_request":
		obs.Kind, obs.WaitingFor = agent.Waiting, event.WaitPermission
	case "request_user_input":
		obs.Kind, obs.WaitingFor = agent.Waiting, event.WaitInput
	case "exec_command_begin", "exec_command_end":
		obs.Kind, obs.Tool, obs.Summary = agent.ToolStarted, "command", commandText(p.Command)
		if p.Type == "exec_command_end" {
			obs.Kind = toolEnd(p.ExitCode, "")
			obs.Facts = exitFacts(p.ExitCode)
		}
	case "item_started", "item_completed":
		return r.item(obs, p.Type == "item_completed", p.Item)
	case "error", "stream_error", "warning":
		obs.Kind, obs.Reason = agent.ErrorReported, p.Type
		obs.Facts = report(agent.Facts{Error: ptr(oneLine(str(p.Message)))})
	case "token_count", "thread_settings_applied", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
		"user_message", "agent_message_delta", "agent_reasoning_delta", "context_compacted", "thread_name_updated":
		return agent.Ignore(r.Thread, "conversation or settings (not recorded)")
	default:
		return agent.Unrecognize(r.Thread, cutTag(obs.Native))
	}
	return agent.Observe(obs)
}

// item maps the items of item_started / item_completed.
func (r *RolloutReader) item(obs agent.Observation, done bool, it *rolloutItem) agent.Outcome {
	if it == nil {
		return agent.Unrecognize(r.Thread, obs.Native+" without item")
	}
	obs.Native += ":" + cutTag(it.Type)
	obs.Kind = agent.ToolStarted
	switch it.Type {
	case "CommandExecution":
		obs.Tool, obs.Summary = "command", commandText(it.Command)
		if done {
			obs.Kind, obs.Facts = toolEnd(it.ExitCode, it.Status), exitFacts(it.ExitCode)
		}
		return agent.Observe(obs)
	case "FileChange", "McpToolCall", "WebSearch":
		obs.Tool = map[string]string{"FileChange": "file_change", "McpToolCall": "mcp:" + cutTag(it.Server) + "." + cutTag(it.Tool), "WebSearch": "web_search"}[it.Type]
		if done {
			obs.Kind = toolEnd(nil, it.Status)
		}
		return agent.Observe(obs)
	case "AgentMessage":
		if !done {
			return agent.Ignore(r.Thread, "agent message in progress")
		}
		obs.Kind, obs.Summary = agent.Note, "agent message"
		return agent.Observe(obs)
	case "UserMessage":
		return agent.Ignore(r.Thread, "user message (prompt not recorded)")
	case "Reasoning":
		return agent.Ignore(r.Thread, "reasoning summary (not recorded)")
	}
	return agent.Unrecognize(r.Thread, cutTag(obs.Native))
}

// toolEnd is ToolFailed for a non-zero exit code or a failed status.
func toolEnd(code *int, status string) agent.Kind {
	if (code != nil && *code != 0) || strings.EqualFold(status, "failed") || strings.EqualFold(status, "declined") {
		return agent.ToolFailed
	}
	return agent.ToolEnded
}

func exitFacts(code *int) agent.Facts {
	if code == nil {
		return agent.Facts{}
	}
	return agent.Facts{ExitCode: ptr(int64(*code))}
}

// commandText is a command given as a string or as an argv array; a
// `bash -lc SCRIPT` argv shows its script.
func commandText(raw json.RawMessage) string {
	if s := str(raw); s != "" {
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

// str is a raw JSON string's value ("" for anything else).
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
