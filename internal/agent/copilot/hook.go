package copilot

import (
	"cmp"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// MaxPayload bounds the bytes of one hook payload that are read.
const MaxPayload = agent.MaxHookPayload

// payload is the part of a Copilot CLI hook payload lcwrap reads: prompts,
// tool arguments and results, and sub-agent responses are never decoded.
type payload struct {
	SessionID        string `json:"sessionId"`
	Cwd              string `json:"cwd"`
	Source           string `json:"source"`
	Reason           string `json:"reason"`
	StopReason       string `json:"stopReason"`
	TranscriptPath   string `json:"transcriptPath"`
	ToolName         string `json:"toolName"`
	AgentID          string `json:"agentId"`
	AgentType        string `json:"agentType"`
	AgentName        string `json:"agentName"`
	ParentAgentID    string `json:"parentAgentId"`
	NotificationType string `json:"notification_type"`
	Message          string `json:"message"`
	ToolResult       *struct {
		ResultType string `json:"resultType"`
	} `json:"toolResult"`
	Error *struct {
		Name string `json:"name"`
	} `json:"error"`
}

// envelope is what `lcwrap hook copilot --relay --event NAME` posts: the
// event's name (Copilot's payloads do not carry it) and the payload.
type envelope struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// Wrap makes the relayed body of one payload of event.
func Wrap(event string, raw []byte) []byte {
	if len(raw) > MaxPayload || !json.Valid(raw) {
		raw = []byte("null")
	}
	ev, _ := json.Marshal(event)
	return append(append(append([]byte(`{"event":`), ev...), `,"payload":`...), append(raw, '}')...)
}

// Unwrap reads a relayed body; ok is false when it is not one.
func Unwrap(body []byte) (event string, raw []byte, ok bool) {
	var e envelope
	if len(body) > MaxPayload+1024 || json.Unmarshal(body, &e) != nil || e.Event == "" {
		return "", nil, false
	}
	return e.Event, e.Payload, true
}

// Normalize maps one hook payload of event (as Copilot CLI 1.0.102 writes
// it on the hook's stdin) into observations. A sub-agent's own hooks name
// it as their sessionId, with parentAgentId its parent: parent, when not
// nil, says which session an agent id belongs to (nested sub-agents). It
// never fails and never panics.
func Normalize(ev string, raw []byte, parent func(agentID string) string) agent.Outcome {
	var p payload
	if len(raw) > MaxPayload || !utf8.Valid(raw) || json.Unmarshal(raw, &p) != nil {
		return agent.Unrecognize("", "(payload that is not a JSON object)")
	}
	session, sub := p.SessionID, ""
	if p.AgentID != "" && p.ParentAgentID != "" {
		session, sub = p.ParentAgentID, p.AgentID
		if parent != nil {
			if s := parent(p.ParentAgentID); s != "" {
				session = s
			}
		}
	}
	o := agent.Observation{Session: session, Agent: sub, Native: termtext.Cut(ev, 64)}
	switch ev {
	case "sessionStart":
		o.Agent = ""
		o.Kind, o.Source, o.Facts = agent.SessionStarted, termtext.Cut(p.Source, 32), agent.Facts{Cwd: fact(p.Cwd)}
	case "userPromptSubmitted":
		o.Kind = agent.PromptSubmitted
		if sub != "" {
			o.Kind, o.Summary = agent.Note, "prompt to the sub-agent"
		}
	case "preToolUse":
		// Never lcwrap's own hook (a failing one denies the tool); a
		// hook of the user's may relay it.
		o.Kind, o.Tool = agent.ToolStarted, termtext.Cut(p.ToolName, 64)
	case "permissionRequest":
		// Asked before the permission rules decide: it fires for a tool
		// allowed outright too (measured), so it is no wait.
		o.Kind, o.Summary = agent.Note, "permission requested"+paren(termtext.Cut(p.ToolName, 64))
	case "postToolUse":
		o.Kind, o.Tool = agent.ToolEnded, termtext.Cut(p.ToolName, 64)
		if p.ToolResult != nil && p.ToolResult.ResultType != "" && p.ToolResult.ResultType != "success" {
			o.Kind = agent.ToolFailed
			o.Facts = agent.Facts{Status: termtext.Cut(p.ToolResult.ResultType, 32)}
		}
	case "postToolUseFailure":
		o.Kind, o.Tool = agent.ToolFailed, termtext.Cut(p.ToolName, 64)
	case "agentStop":
		o.Kind, o.Facts = agent.TurnEnded, agent.Facts{Reason: termtext.Cut(p.StopReason, 32), Transcript: fact(p.TranscriptPath)}
		if sub != "" {
			o.Kind, o.Summary = agent.Note, "sub-agent turn ended"+paren(termtext.Cut(p.StopReason, 32))
		}
	case "subagentStart", "subagentStop":
		if p.AgentID == "" {
			return agent.Unrecognize(p.SessionID, ev+" without agentId")
		}
		o.Session, o.Agent, o.AgentType = p.SessionID, p.AgentID, termtext.Cut(cmp.Or(p.AgentType, p.AgentName), 64)
		if parent != nil && p.ParentAgentID != "" {
			if s := parent(p.ParentAgentID); s != "" {
				o.Session = s
			}
		}
		o.Kind = agent.SubagentStarted
		if ev == "subagentStop" {
			o.Kind, o.Reason = agent.SubagentStopped, termtext.Cut(p.StopReason, 32)
		}
	case "notification":
		o.Facts = agent.Facts{Notification: termtext.Cut(p.NotificationType, 64)}
		if p.NotificationType == "permission_prompt" {
			o.Kind, o.WaitingFor, o.Summary = agent.Waiting, event.WaitPermission, oneLine(p.Message)
		} else {
			o.Kind, o.Summary = agent.Note, "notification"+paren(termtext.Cut(p.NotificationType, 32))
		}
	case "errorOccurred":
		o.Kind, o.Reason = agent.ErrorReported, "errorOccurred"
		if p.Error != nil && p.Error.Name != "" {
			o.Reason = termtext.Cut(p.Error.Name, 64)
		}
	case "sessionEnd":
		o.Agent = ""
		o.Kind, o.Reason = agent.SessionEnded, termtext.Cut(p.Reason, 64)
	default:
		return agent.Unrecognize(session, termtext.Cut(ev, 64))
	}
	return agent.Observe(o)
}

// relay normalizes relayed bodies, one at a time (the HookServer's
// order), remembering which session each sub-agent belongs to.
type relay struct {
	sessionOf map[string]string
	fol       *follower // not nil: outcomes are applied through it (the session files' lock)
}

func (r *relay) parent(id string) string { return r.sessionOf[id] }

func (r *relay) normalize(body []byte) agent.Outcome {
	ev, raw, ok := Unwrap(body)
	if !ok {
		return agent.Unrecognize("", "(relayed body that is not lcwrap's)")
	}
	out := Normalize(ev, raw, r.parent)
	for _, o := range out.Observations {
		if o.Kind == agent.SubagentStarted && len(r.sessionOf) < 4096 {
			if r.sessionOf == nil {
				r.sessionOf = map[string]string{}
			}
			r.sessionOf[o.Agent] = o.Session
		}
	}
	if r.fol != nil {
		r.fol.apply(out)
		return agent.Outcome{}
	}
	return out
}

func fact(s string) string { return termtext.Cut(s, 500) }

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func oneLine(s string) string { return termtext.Cut(strings.Join(strings.Fields(s), " "), 160) }
