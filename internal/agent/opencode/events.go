package opencode

import (
	"cmp"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/lazy"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// maxKnown bounds every map a Mapper keeps.
const maxKnown = 4096

// busEvent is the part of one /event payload lcwrap reads: prompt text,
// model output, tool input and output are never decoded.
type busEvent struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Info      *struct {
			ID        string   `json:"id"`
			ParentID  string   `json:"parentID"`
			Agent     string   `json:"agent"`
			Version   string   `json:"version"`
			Directory string   `json:"directory"`
			Role      string   `json:"role"`
			SessionID string   `json:"sessionID"`
			Cost      *float64 `json:"cost"`
			Tokens    *struct {
				Input  int64 `json:"input"`
				Output int64 `json:"output"`
				Cache  struct {
					Read  int64 `json:"read"`
					Write int64 `json:"write"`
				} `json:"cache"`
			} `json:"tokens"`
		} `json:"info"`
		Status *struct {
			Type string `json:"type"`
		} `json:"status"`
		Part *struct {
			Type      string `json:"type"`
			SessionID string `json:"sessionID"`
			Tool      string `json:"tool"`
			CallID    string `json:"callID"`
			State     struct {
				Status string `json:"status"`
				Title  string `json:"title"`
			} `json:"state"`
		} `json:"part"`
		ID         string   `json:"id"`
		RequestID  string   `json:"requestID"`
		Permission string   `json:"permission"`
		Patterns   []string `json:"patterns"`
		Reply      string   `json:"reply"`
		Error      *struct {
			Name string `json:"name"`
		} `json:"error"`
	} `json:"properties"`
}

// ignored are the event types lcwrap reads past on purpose, with why.
var ignored = lazy.Value[map[string]string]{Make: func() map[string]string {
	return map[string]string{
		"server.connected":       "server.connected",
		"server.heartbeat":       "server.heartbeat (the server's, not a session's)",
		"session.updated":        "session.updated (title, summary)",
		"session.diff":           "session.diff (file changes)",
		"message.part.delta":     "message.part.delta (streamed text)",
		"plugin.added":           "plugin.added",
		"catalog.updated":        "catalog.updated",
		"reference.updated":      "reference.updated",
		"integration.updated":    "integration.updated",
		"file.edited":            "file.edited",
		"file.watcher.updated":   "file.watcher.updated",
		"lsp.updated":            "lsp.updated",
		"lsp.client.diagnostics": "lsp.client.diagnostics",
		"todo.updated":           "todo.updated",
		"installation.updated":   "installation.updated",
		"message.removed":        "message.removed",
		"message.part.removed":   "message.part.removed",
		"session.compacted":      "session.compacted",
		"command.executed":       "command.executed",
		"tui.toast.show":         "tui.toast.show",
	}
}}

// Mapper maps opencode's /event payloads, one at a time and in order,
// into observations: a session per top-level opencode session, a
// sub-agent per child session (parentID; a grandchild is put under the
// top-level session too), tool parts as activity, permission.asked as a
// wait for permission until permission.replied, session.idle as waiting
// for the user (a child's idle as its stop). It also keeps opencode's
// own cost and token figures (message metadata) as its report. It is safe
// for one writer and concurrent Report calls.
type Mapper struct {
	mu       sync.Mutex
	root     map[string]string   // session id → its top-level session ("" for itself)
	pending  map[string][]string // session id → permission ids asked, not yet replied
	running  map[string]bool     // callID of tool calls seen running
	messages map[string]msgUsage // assistant message id → its latest figures
	version  string
	events   int64
	beats    int64
}

type msgUsage struct {
	cost                       float64
	input, output, read, write int64
}

// Map reads one event's data. It never fails: what it cannot read is an
// unrecognised Outcome naming only the event's type.
func (m *Mapper) Map(data []byte) agent.Outcome {
	var e busEvent
	if !jsonObject(data, &e) {
		return agent.Unrecognize("", "(event that is not a JSON object)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events++
	p := &e.Properties
	typ := termtext.Cut(e.Type, 48)
	switch e.Type {
	case "server.heartbeat":
		m.beats++
	case "session.created":
		if p.Info == nil || p.Info.ID == "" {
			return agent.Unrecognize("", "session.created without info.id")
		}
		return m.created(p.Info.ID, p.Info.ParentID, p.Info.Agent, p.Info.Version, p.Info.Directory)
	case "session.status":
		if p.Status == nil || p.SessionID == "" {
			return agent.Unrecognize("", typ+" without status")
		}
		if p.Status.Type != "busy" {
			return agent.Ignore(m.sessionOf(p.SessionID), "session.status "+termtext.Cut(p.Status.Type, 16)+" (session.idle says it)")
		}
		if len(m.pending[p.SessionID]) > 0 {
			return agent.Ignore(m.sessionOf(p.SessionID), "session.status busy while a permission is pending")
		}
		return m.observe(agent.Observation{Kind: agent.Working, Session: p.SessionID, Native: typ, Summary: "busy"})
	case "session.idle":
		if p.SessionID == "" {
			return agent.Unrecognize("", typ+" without sessionID")
		}
		delete(m.pending, p.SessionID)
		if m.root[p.SessionID] != "" {
			return m.observe(agent.Observation{Kind: agent.SubagentStopped, Session: p.SessionID, Native: typ, Reason: "idle"})
		}
		return m.observe(agent.Observation{Kind: agent.TurnEnded, Session: p.SessionID, Native: typ})
	case "session.error":
		name := "unknown"
		if p.Error != nil {
			name = cmp.Or(termtext.Cut(p.Error.Name, 64), name)
		}
		if p.SessionID == "" {
			return agent.Ignore("", "session.error of no session")
		}
		return m.observe(agent.Observation{Kind: agent.ErrorReported, Session: p.SessionID, Native: typ, Reason: name})
	case "session.deleted":
		if p.Info == nil || p.Info.ID == "" {
			return agent.Unrecognize("", typ+" without info.id")
		}
		if m.root[p.Info.ID] != "" {
			return m.observe(agent.Observation{Kind: agent.SubagentStopped, Session: p.Info.ID, Native: typ, Reason: "deleted"})
		}
		return m.observe(agent.Observation{Kind: agent.SessionEnded, Session: p.Info.ID, Native: typ, Reason: "deleted"})
	case "message.updated":
		if p.Info != nil && p.Info.Role == "assistant" && p.Info.ID != "" && (p.Info.Cost != nil || p.Info.Tokens != nil) {
			m.usage(p.Info.ID, p.Info.Cost, p.Info.Tokens)
		}
		return agent.Ignore(m.sessionOf(p.SessionID), "message.updated (its figures kept for the report)")
	case "message.part.updated":
		return m.part(&e)
	case "permission.asked":
		if p.SessionID == "" || p.ID == "" {
			return agent.Unrecognize("", typ+" without sessionID or id")
		}
		if len(m.pending) < maxKnown && len(m.pending[p.SessionID]) < 64 {
			if m.pending == nil {
				m.pending = map[string][]string{}
			}
			m.pending[p.SessionID] = append(m.pending[p.SessionID], p.ID)
		}
		summary := ""
		if len(p.Patterns) > 0 {
			summary = p.Patterns[0]
		}
		return m.observe(agent.Observation{Kind: agent.Waiting, Session: p.SessionID, Native: typ, WaitingFor: event.WaitPermission,
			Tool: termtext.Cut(p.Permission, 64), Summary: termtext.Cut(summary, 120)})
	case "permission.replied":
		if p.SessionID == "" {
			return agent.Unrecognize("", typ+" without sessionID")
		}
		ids := m.pending[p.SessionID]
		for i, id := range ids {
			if id == p.RequestID {
				ids = append(ids[:i:i], ids[i+1:]...)
				break
			}
		}
		if len(ids) == 0 {
			delete(m.pending, p.SessionID)
		} else {
			m.pending[p.SessionID] = ids
			return agent.Ignore(m.sessionOf(p.SessionID), "permission.replied with another still pending")
		}
		reply := cmp.Or(termtext.Cut(p.Reply, 32), "unknown")
		return m.observe(agent.Observation{Kind: agent.Working, Session: p.SessionID, Native: typ, Summary: "permission answered: " + reply,
			Decision: &agent.AgentDecision{Decision: reply, Source: "opencode permission.replied (who answered is not said)"}})
	}
	if r, ok := ignored.Get()[e.Type]; ok {
		return agent.Ignore(m.sessionOf(p.SessionID), r)
	}
	return agent.Unrecognize(m.sessionOf(p.SessionID), typ)
}

// created opens a session, or a sub-agent of the top-level session above
// parent, of the agent opencode names (info.agent, "general" for the task
// tool's default; none named: unknown).
func (m *Mapper) created(id, parent, agentName, version, dir string) agent.Outcome {
	if m.root == nil {
		m.root = map[string]string{}
	}
	if version != "" && m.version == "" {
		m.version = termtext.Cut(version, 32)
	}
	if parent == "" {
		if len(m.root) < maxKnown {
			m.root[id] = ""
		}
		return agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: id, Native: "session.created", Source: "created",
			Facts: agent.Facts{Cwd: termtext.Cut(dir, 256), CLIVersion: termtext.Cut(version, 32)}})
	}
	top := cmp.Or(m.root[parent], parent)
	if len(m.root) < maxKnown {
		m.root[id] = top
	}
	return agent.Observe(agent.Observation{Kind: agent.SubagentStarted, Session: top, Agent: id, AgentType: termtext.Cut(agentName, 64), Native: "session.created (parentID)"})
}

// sessionOf is the top-level session of id.
func (m *Mapper) sessionOf(id string) string { return cmp.Or(m.root[id], id) }

// observe puts an observation about a (possibly child) session on its
// top-level session, naming the child as the sub-agent.
func (m *Mapper) observe(o agent.Observation) agent.Outcome {
	if top := m.root[o.Session]; top != "" {
		o.Agent, o.Session = o.Session, top
	}
	return agent.Observe(o)
}

// part maps a tool part's state; other parts are read past.
func (m *Mapper) part(e *busEvent) agent.Outcome {
	pt := e.Properties.Part
	if pt == nil || pt.SessionID == "" {
		return agent.Unrecognize("", "message.part.updated without part")
	}
	session := pt.SessionID
	if pt.Type != "tool" {
		return agent.Ignore(m.sessionOf(session), "message.part.updated "+termtext.Cut(pt.Type, 24))
	}
	if len(m.pending[session]) > 0 {
		return agent.Ignore(m.sessionOf(session), "tool part while a permission is pending")
	}
	o := agent.Observation{Session: session, Native: "message.part.updated tool " + termtext.Cut(pt.State.Status, 16),
		Tool: termtext.Cut(pt.Tool, 64), Facts: agent.Facts{ToolUseID: termtext.Cut(pt.CallID, 128)}}
	switch pt.State.Status {
	case "pending":
		return agent.Ignore(m.sessionOf(session), "tool part pending (its input still streaming)")
	case "running":
		if m.running[pt.CallID] {
			return agent.Ignore(m.sessionOf(session), "tool part running again")
		}
		if m.running == nil {
			m.running = map[string]bool{}
		}
		if len(m.running) < maxKnown {
			m.running[pt.CallID] = true
		}
		o.Kind, o.Summary = agent.ToolStarted, termtext.Cut(strings.TrimSpace(pt.State.Title), 120)
	case "completed":
		delete(m.running, pt.CallID)
		o.Kind, o.Facts.Status = agent.ToolEnded, "completed"
	case "error":
		delete(m.running, pt.CallID)
		o.Kind, o.Facts.Status = agent.ToolFailed, "error"
	default:
		return agent.Unrecognize(m.sessionOf(session), "tool part "+termtext.Cut(pt.State.Status, 16))
	}
	return m.observe(o)
}

func (m *Mapper) usage(id string, cost *float64, tok *struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cache  struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}) {
	if m.messages == nil {
		m.messages = map[string]msgUsage{}
	}
	if _, ok := m.messages[id]; !ok && len(m.messages) >= maxKnown {
		return
	}
	u := m.messages[id]
	if cost != nil {
		u.cost = *cost
	}
	if tok != nil {
		u.input, u.output, u.read, u.write = tok.Input, tok.Output, tok.Cache.Read, tok.Cache.Write
	}
	m.messages[id] = u
}

// Report is opencode's own account of the run as its events gave it:
// the sum of its assistant messages' cost and tokens (its estimate),
// attributed to opencode; nil when no event was read.
func (m *Mapper) Report(via string) *agent.AgentReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == 0 {
		return nil
	}
	r := &agent.AgentReport{ReportedBy: Source, Via: via}
	if len(m.messages) > 0 {
		var cost float64
		var in, out, read, write int64
		for _, u := range m.messages {
			cost += u.cost
			in, out, read, write = in+u.input, out+u.output, read+u.read, write+u.write
		}
		r.TotalCostUSD = &cost
		r.Usage = &agent.AgentUsage{Input: &in, Output: &out, CacheRead: &read, CacheCreation: &write}
	}
	return r
}

// Heartbeats is how many server.heartbeat events were read.
func (m *Mapper) Heartbeats() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.beats
}

// jsonObject decodes data (valid UTF-8 only) into v.
func jsonObject(data []byte, v any) bool {
	return utf8.Valid(data) && json.Unmarshal(data, v) == nil
}
