package codex

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// execLine is one line of `codex exec --json`: the fields lcwrap reads;
// everything else is ignored.
type execLine struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Usage    json.RawMessage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message   string            `json:"message"`
	Item      *execItem         `json:"item"`
	Questions []json.RawMessage `json:"questions"`
}

// execItem is a thread item: its type decides which fields it has.
type execItem struct {
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
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
	Items   []struct {
		Completed bool `json:"completed"`
	} `json:"items"`
	// collab_tool_call: the sub-agents it names and their states.
	Receivers    []string `json:"receiver_thread_ids"`
	AgentsStates map[string]struct {
		Status string `json:"status"`
	} `json:"agents_states"`
}

// ExecReader maps the lines of one `codex exec --json` stream. Only the
// first line, thread.started, names the session: the reader keeps it for
// the lines after it. Not safe for concurrent use.
type ExecReader struct {
	session string
	agents  map[string]bool // sub-agents seen: true while open
}

// Session returns the thread id seen so far ("" before thread.started).
func (r *ExecReader) Session() string { return r.session }

// Line maps one line (without its newline). It never fails and never
// panics: a line it cannot read is unrecognized "(malformed)", a type it
// does not know unrecognized by its type tag.
func (r *ExecReader) Line(line []byte) agent.Outcome {
	var l execLine
	if err := json.Unmarshal(line, &l); err != nil {
		return agent.Unrecognize(r.session, "(malformed)")
	}
	obs := agent.Observation{Session: r.session, Native: cutTag(l.Type)}
	switch l.Type {
	case "thread.started":
		if l.ThreadID == "" {
			return agent.Unrecognize(r.session, "thread.started without thread_id")
		}
		r.session = l.ThreadID
		obs.Session, obs.Kind, obs.Source = l.ThreadID, agent.SessionStarted, "exec"
	case "turn.started":
		obs.Kind = agent.PromptSubmitted
	case "turn.completed":
		// exec exits after its turn: no wait for the user follows.
		obs.Kind, obs.Summary = agent.Note, "turn completed"
		if u := usage(l.Usage); u != nil {
			obs.Facts = report(agent.Facts{Usage: u})
		}
	case "turn.failed":
		obs.Kind, obs.Reason = agent.ErrorReported, "turn.failed"
		if l.Error != nil {
			obs.Facts = report(agent.Facts{Error: ptr(oneLine(l.Error.Message))})
		}
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil {
			return agent.Unrecognize(r.session, l.Type+" without item")
		}
		return r.itemOutcome(obs, l.Item)
	case "item.plan.delta":
		return agent.Ignore(r.session, "plan text delta")
	case "request_user_input":
		obs.Kind, obs.WaitingFor = agent.Waiting, event.WaitInput
		obs.Summary = fmt.Sprintf("%d question(s)", len(l.Questions))
	case "error":
		obs.Kind, obs.Reason = agent.ErrorReported, "error"
		obs.Facts = report(agent.Facts{Error: ptr(oneLine(l.Message))})
	default:
		return agent.Unrecognize(r.session, cutTag(l.Type))
	}
	return agent.Observe(obs)
}

// itemOutcome maps one item event: which tool, on what.
func (r *ExecReader) itemOutcome(obs agent.Observation, it *execItem) agent.Outcome {
	native := obs.Native
	done := native == "item.completed"
	tool := func(name, summary string, failed bool) agent.Outcome {
		if native == "item.updated" {
			return agent.Ignore(obs.Session, "progress of an item already recorded")
		}
		obs.Native = native + ":" + it.Type
		obs.Tool, obs.Summary, obs.Kind = name, summary, agent.ToolStarted
		if done {
			obs.Kind = agent.ToolEnded
			if failed || it.Status == "failed" || it.Status == "declined" {
				obs.Kind = agent.ToolFailed
			}
		}
		obs.Facts = agent.Facts{Status: cutTag(it.Status)}
		return agent.Observe(obs)
	}
	switch it.Type {
	case "command_execution":
		o := tool("command", oneLine(it.Command), it.ExitCode != nil && *it.ExitCode != 0)
		if it.ExitCode != nil && len(o.Observations) == 1 {
			o.Observations[0].Facts.ExitCode = ptr(int64(*it.ExitCode))
		}
		return o
	case "file_change":
		var files []string
		for _, c := range it.Changes {
			files = append(files, c.Kind+" "+c.Path)
		}
		return tool("file_change", oneLine(strings.Join(files, ", ")), false)
	case "mcp_tool_call":
		return tool("mcp:"+cutTag(it.Server)+"."+cutTag(it.Tool), "", it.Error != nil)
	case "collab_tool_call":
		subs := r.collabAgents(obs, it) // before tool names obs after the item
		var out agent.Outcome
		if native != "item.updated" {
			out = tool("collab:"+cutTag(it.Tool), "", false)
		}
		if len(out.Observations) == 0 && len(subs) == 0 {
			return agent.Ignore(obs.Session, "progress of an item already recorded")
		}
		out.Observations = append(out.Observations, subs...)
		return out
	case "web_search":
		return tool("web_search", oneLine(it.Query), false)
	case "agent_message":
		if !done {
			return agent.Ignore(obs.Session, "agent message in progress")
		}
		obs.Kind, obs.Summary, obs.Native = agent.Note, "agent message", native+":"+it.Type
	case "reasoning":
		return agent.Ignore(obs.Session, "reasoning summary (not recorded)")
	case "plan":
		obs.Kind, obs.Summary, obs.Native = agent.Note, "plan "+strings.TrimPrefix(native, "item."), native+":"+it.Type
	case "todo_list":
		n := 0
		for _, t := range it.Items {
			if t.Completed {
				n++
			}
		}
		obs.Kind, obs.Native = agent.Note, native+":"+it.Type
		obs.Summary = fmt.Sprintf("todo list: %d of %d done", n, len(it.Items))
	case "error":
		obs.Kind, obs.Reason, obs.Native = agent.ErrorReported, "item.error", native+":"+it.Type
		obs.Facts = report(agent.Facts{Error: ptr(oneLine(it.Message))})
	default:
		return agent.Unrecognize(obs.Session, cutTag(native+":"+it.Type))
	}
	return agent.Observe(obs)
}

// maxCollabAgents bounds the sub-agents one collab item may name.
const maxCollabAgents = 32

// collabAgents maps the sub-agents a collab_tool_call names (its
// receivers and agents_states) to their own lifecycles: one first seen
// not ended has started; a state codex gives for one open is its
// activity; completed, errored, shutdown or not_found ends it (as codex
// reports it; its message is never read). An agent seen ended and then
// in a live state again was resumed: a new lifecycle.
func (r *ExecReader) collabAgents(obs agent.Observation, it *execItem) []agent.Observation {
	ids := slices.Clone(it.Receivers)
	for id := range it.AgentsStates {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > maxCollabAgents {
		ids = ids[:maxCollabAgents]
	}
	var out []agent.Observation
	for _, id := range ids {
		if id == "" || id == obs.Session {
			continue
		}
		st := cutTag(it.AgentsStates[id].Status)
		o := obs
		o.Native, o.Agent = obs.Native+":"+it.Type, id
		o.Facts = agent.Facts{Status: st}
		open, seen := r.agents[id]
		switch st {
		case "completed", "errored", "shutdown", "not_found":
			if seen && !open {
				continue // its end is recorded
			}
			o.Kind, o.Reason = agent.SubagentStopped, st
			r.setAgent(id, false)
		default:
			if open {
				if st == "" {
					continue
				}
				o.Kind, o.Summary = agent.Note, "sub-agent "+st+" (collab:"+cutTag(it.Tool)+")"
				break
			}
			o.Kind, o.AgentType = agent.SubagentStarted, "collab"
			r.setAgent(id, true)
		}
		out = append(out, o)
	}
	return out
}

func (r *ExecReader) setAgent(id string, open bool) {
	if r.agents == nil {
		r.agents = map[string]bool{}
	}
	if _, ok := r.agents[id]; !ok && len(r.agents) >= 4096 {
		return // bounded: an agent past the bound is seen anew each time
	}
	r.agents[id] = open
}

// report is what codex said about itself: the Tracker records facts as
// its report (details.reported), never as lcwrap's claim.
func report(f agent.Facts) agent.Facts { return f }

func ptr[T any](v T) *T { return &v }

// usageName is lcwrap's name for one of codex's token counts (those of
// agent.AgentUsage where they mean the same); ok is false for a count it
// does not know.
func usageName(k string) (name string, ok bool) {
	switch k {
	case "input_tokens":
		return "input", true
	case "cached_input_tokens":
		return "cacheRead", true
	case "cache_write_input_tokens":
		return "cacheCreation", true
	case "output_tokens":
		return "output", true
	case "reasoning_output_tokens":
		return "reasoningOutput", true
	}
	return "", false
}

// usage keeps the token counts codex reported (integers only), under
// lcwrap's names; a count it does not know keeps its name without the
// "_tokens" suffix. At most 16 counts are kept (codex's names read in
// sorted order); two names that become one keep the later's count.
func usage(raw json.RawMessage) agent.NamedCounts {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out agent.NamedCounts
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var n int64
		if json.Unmarshal(m[k], &n) != nil {
			continue
		}
		name, ok := usageName(k)
		if !ok {
			name = cutTag(strings.TrimSuffix(strings.TrimSuffix(k, "_tokens"), "_token"))
		}
		if _, seen := out.Get(name); !seen && len(out) >= 16 {
			continue
		}
		out.Set(name, n)
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

// cutTag bounds a foreign type tag.
func cutTag(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64])
	}
	return s
}
