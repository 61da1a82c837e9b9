package codex

import (
	"encoding/json"
	"fmt"
	"strings"
)

// execLine is one line of `codex exec --json` (codex-rs exec_events): the
// fields lcwrap reads; everything else is ignored.
type execLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Usage    json.RawMessage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message   string            `json:"message"`
	Item      *execItem         `json:"item"`
	CallID    string            `json:"call_id"`
	Questions []json.RawMessage `json:"questions"`
}

// execItem is a thread item: its type decides which fields it has.
type execItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Command  string `json:"command"`
	ExitCode *int   `json:"exit_code"`
	Changes  []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Query  string `json:"query"`
	Text   string `json:"text"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
	Items   []struct {
		Completed bool `json:"completed"`
	} `json:"items"`
	ReceiverThreadIDs []string `json:"receiver_thread_ids"`
}

// ParseExec reads one line of `codex exec --json`. It never fails: a line
// it cannot read is Malformed, a type it does not know Unrecognized.
func ParseExec(line []byte) Observation {
	var l execLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Observation{Kind: Malformed, Reason: "not a JSON object"}
	}
	switch l.Type {
	case "thread.started":
		if l.ThreadID == "" {
			return Observation{Kind: Malformed, Reason: "thread.started without thread_id"}
		}
		return Observation{Kind: SessionStarted, SessionID: l.ThreadID}
	case "turn.started":
		return Observation{Kind: TurnStarted}
	case "turn.completed":
		r := map[string]any{"event": l.Type}
		if u := usage(l.Usage); u != nil {
			r["usage"] = u
		}
		return Observation{Kind: TurnEnded, Activity: "turn completed", Report: r}
	case "turn.failed":
		r := map[string]any{"event": l.Type}
		if l.Error != nil {
			r["error"] = l.Error.Message
		}
		return Observation{Kind: TurnEnded, Activity: "turn failed", Report: r}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return Observation{Kind: Malformed, Reason: l.Type + " without item"}
		}
		return execItemObservation(l.Type, l.Item)
	case "item.plan.delta":
		return Observation{Kind: Ignored, Reason: "plan text delta"}
	case "request_user_input":
		return Observation{Kind: Waiting, Waiting: "user-input", Report: map[string]any{"event": l.Type, "questions": len(l.Questions)}}
	case "error":
		return Observation{Kind: AgentError, Report: map[string]any{"event": l.Type, "message": l.Message}}
	case "":
		return Observation{Kind: Unrecognized, Discriminator: "(no type)"}
	}
	return Observation{Kind: Unrecognized, Discriminator: cutTag(l.Type)}
}

// execItemObservation maps one item event: what the item is and works on.
func execItemObservation(event string, it *execItem) Observation {
	phase := strings.TrimPrefix(event, "item.")
	o := Observation{Kind: Activity, Running: true, Report: map[string]any{"event": event, "item": it.Type}}
	if it.Status != "" {
		o.Report["status"] = it.Status
	}
	switch it.Type {
	case "command_execution":
		o.Activity = "command " + phase + ": " + oneLine(it.Command)
		if it.ExitCode != nil {
			o.Report["exitCode"] = *it.ExitCode
			o.Activity = fmt.Sprintf("command exited %d: %s", *it.ExitCode, oneLine(it.Command))
		}
	case "file_change":
		var files []string
		for _, c := range it.Changes {
			files = append(files, c.Kind+" "+c.Path)
		}
		o.Activity = "file change " + phase + ": " + strings.Join(files, ", ")
		o.Report["files"] = len(it.Changes)
	case "mcp_tool_call":
		o.Activity = "mcp tool " + phase + ": " + it.Server + "." + it.Tool
		if it.Error != nil {
			o.Report["error"] = it.Error.Message
		}
	case "collab_tool_call":
		o.Activity = "collab tool " + phase + ": " + it.Tool
		o.Report["receivers"] = len(it.ReceiverThreadIDs)
	case "web_search":
		o.Activity = "web search " + phase + ": " + oneLine(it.Query)
	case "agent_message":
		o.Activity = "agent message: " + oneLine(it.Text)
	case "reasoning":
		o.Activity = "reasoning"
	case "plan":
		o.Activity = "plan " + phase
	case "todo_list":
		done := 0
		for _, t := range it.Items {
			if t.Completed {
				done++
			}
		}
		o.Activity = fmt.Sprintf("todo list: %d of %d done", done, len(it.Items))
	case "error":
		return Observation{Kind: AgentError, Report: map[string]any{"event": event, "item": it.Type, "message": it.Message}}
	default:
		return Observation{Kind: Unrecognized, Discriminator: cutTag(event + ":" + it.Type)}
	}
	return o
}

// usage keeps the token counts codex reported (numbers only).
func usage(raw json.RawMessage) map[string]any {
	var m map[string]json.Number
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		if n, err := v.Int64(); err == nil && len(out) < 16 {
			out[cutTag(k)] = n
		}
	}
	return out
}

// oneLine makes text one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// cutTag bounds a foreign type tag kept as a discriminator.
func cutTag(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64])
	}
	return s
}
