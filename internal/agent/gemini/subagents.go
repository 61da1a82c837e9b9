package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// Gemini CLI 0.61.0 runs a sub-agent (its invoke_agent tool: generalist,
// codebase_investigator, …) as a conversation of its own, which no hook
// names: the sub-agent's tool hooks carry its session's id. Two of its
// records do name it, and lcwrap reads both:
//
//   - its transcript, <chats>/<session id>/<agent id>.jsonl beside the
//     session's own (transcript_path), whose first line says kind
//     "subagent" and whose last, when it called complete_task (its
//     terminate reason GOAL), sets a summary (measured; never read);
//   - its telemetry: gemini_cli.agent.start and gemini_cli.agent.finish
//     (agent_id, agent_name, terminate_reason), sent in batches, often
//     after the session's end (a late start is then counted, never a
//     guessed child).
//
// The directory is read when a hook of the session arrives (never on a
// timer), so that a sub-agent is seen before the hook that follows its
// start (its first tool call, its invoke_agent's end, the session's end).
const (
	// NativeTranscript and NativeSummary name the transcript's evidence.
	NativeTranscript = "sub-agent transcript (kind: subagent)"
	NativeSummary    = "sub-agent transcript summary (written when it called complete_task)"
	// EventAgentStart and EventAgentFinish are the telemetry's.
	EventAgentStart  = "gemini_cli.agent.start"
	EventAgentFinish = "gemini_cli.agent.finish"
	// ToolInvokeAgent is the tool that starts a sub-agent.
	ToolInvokeAgent = "invoke_agent"
)

// Bounds of what is kept per run.
const (
	maxSubSessions   = 1024
	maxSubAgents     = 256
	maxPendingCalls  = 16
	maxFirstLine     = 64 << 10
	maxTranscriptRun = 16 << 20 // bytes of one transcript read per scan
)

// subagents is what a run knows of its sessions' sub-agents, shared by
// the hook server's goroutine and the telemetry's: every observation it
// makes is applied under its lock, so that a start always precedes its
// stop whichever source saw it first.
type subagents struct {
	t        *agent.Tracker
	mu       sync.Mutex
	sessions map[string]*subSession
}

type subSession struct {
	dir     string // <chats>/<session id>; "" until a hook names the transcript
	agents  map[string]*subAgent
	pending []string // agent_name of each invoke_agent call begun and not ended
}

type subAgent struct {
	started, stopped bool
	file             bool  // its transcript was found
	off              int64 // bytes of its transcript read
}

func newSubagents(t *agent.Tracker) *subagents {
	return &subagents{t: t, sessions: map[string]*subSession{}}
}

func (s *subagents) session(id string) *subSession {
	ss := s.sessions[id]
	if ss == nil && len(s.sessions) < maxSubSessions {
		ss = &subSession{agents: map[string]*subAgent{}}
		s.sessions[id] = ss
	}
	return ss
}

// hookFields is the part of a hook payload the sub-agent reader needs.
type hookFields struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
	ToolName       string `json:"tool_name"`
	ToolInput      struct {
		AgentName string `json:"agent_name"`
	} `json:"tool_input"`
}

// hook reads the session's sub-agent transcripts as a hook payload of it
// arrives, before the payload's own observations are applied.
func (s *subagents) hook(raw []byte) {
	if s == nil || len(raw) > MaxPayload || !bytes.Contains(raw, []byte(`"transcript_path"`)) {
		return
	}
	var p hookFields
	if json.Unmarshal(raw, &p) != nil || p.SessionID == "" || len(p.SessionID) > agent.MaxID {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.session(p.SessionID)
	if ss == nil {
		return
	}
	if ss.dir == "" {
		ss.dir = SubagentDir(p.TranscriptPath, p.SessionID)
	}
	if p.ToolName == ToolInvokeAgent && p.HookEventName == "BeforeTool" && len(ss.pending) < maxPendingCalls {
		ss.pending = append(ss.pending, event.CutRunes(p.ToolInput.AgentName, 64))
	}
	s.scan(p.SessionID, ss)
	if p.ToolName == ToolInvokeAgent && p.HookEventName == "AfterTool" {
		for i, n := range ss.pending {
			if n == p.ToolInput.AgentName || i == len(ss.pending)-1 {
				ss.pending = append(ss.pending[:i], ss.pending[i+1:]...)
				break
			}
		}
	}
}

// SubagentDir is where Gemini CLI 0.61.0 writes the transcripts of a
// session's sub-agents: beside the session's transcript, in a directory
// named by the session id ("" when either cannot be trusted: a relative
// path, or an id Gemini would have had to rewrite for a file name).
func SubagentDir(transcript, session string) string {
	if transcript == "" || !filepath.IsAbs(transcript) || !agent.PlainID(session) {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Clean(transcript)), session)
}

// scan reads the session's sub-agent directory: a new transcript is a
// sub-agent started, a summary in one already seen is its stop.
func (s *subagents) scan(session string, ss *subSession) {
	if ss.dir == "" {
		return
	}
	entries, err := os.ReadDir(ss.dir)
	if err != nil {
		return // none yet
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || !agent.PlainID(id) {
			continue
		}
		a := ss.agents[id]
		if a == nil {
			if len(ss.agents) >= maxSubAgents {
				continue
			}
			a = &subAgent{}
			ss.agents[id] = a
		}
		path := filepath.Join(ss.dir, e.Name())
		if !a.file {
			if !IsSubagentTranscript(path, id) {
				if !a.started {
					delete(ss.agents, id) // not (yet) a sub-agent's: looked at again next time
				}
				continue
			}
			a.file = true
			if !a.started {
				a.started = true
				// The agent's name is known when exactly one invoke_agent
				// call is open: that call started it.
				var name string
				if len(ss.pending) == 1 {
					name = ss.pending[0]
				}
				s.t.Apply(agent.Observe(agent.Observation{Kind: agent.SubagentStarted, Session: session, Agent: id, AgentType: name, Native: NativeTranscript}))
			}
		}
		if a.stopped {
			continue
		}
		if found, off := summaryAfter(path, a.off); found {
			a.stopped = true
			s.t.Apply(agent.Observe(agent.Observation{Kind: agent.SubagentStopped, Session: session, Agent: id, Reason: "GOAL", Native: NativeSummary}))
		} else {
			a.off = off
		}
	}
}

// IsSubagentTranscript says whether path's first line is a sub-agent's
// transcript header for id (kind "subagent", its sessionId the agent's).
func IsSubagentTranscript(path, id string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxFirstLine), 4096).ReadSlice('\n')
	if err != nil {
		return false // the header is written whole, with its newline
	}
	var h struct {
		SessionID string `json:"sessionId"`
		Kind      string `json:"kind"`
	}
	return json.Unmarshal(line, &h) == nil && h.Kind == "subagent" && h.SessionID == id
}

// summaryLine starts the line Gemini CLI appends when a sub-agent's
// summary is saved (its terminate reason GOAL).
var summaryLine = []byte(`{"$set":{"summary":`)

// summaryAfter reads path's whole lines from off: whether one of them
// sets the summary, and the offset of the first line not read whole.
func summaryAfter(path string, off int64) (bool, int64) {
	f, err := os.Open(path)
	if err != nil {
		return false, off
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return false, off
	}
	r := bufio.NewReaderSize(io.LimitReader(f, maxTranscriptRun), 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line (a tool's output): not a summary line's start
			// unless it begins so; skip to its end.
			start := bytes.HasPrefix(line, summaryLine)
			n := int64(len(line))
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				n += int64(len(line))
			}
			if err != nil {
				return false, off
			}
			if start {
				return true, off + n
			}
			off += n
			continue
		}
		if err != nil {
			return false, off // an unfinished line is read again next time
		}
		if bytes.HasPrefix(line, summaryLine) {
			return true, off + int64(len(line))
		}
		off += int64(len(line))
	}
}

// telemetry records a sub-agent's start or end from Gemini's telemetry,
// unless its transcript said it first.
func (s *subagents) telemetry(r Telemetry) {
	if s == nil || r.AgentID == "" || len(r.AgentID) > agent.MaxID {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.session(r.Session)
	if ss == nil {
		return
	}
	a := ss.agents[r.AgentID]
	if a == nil {
		if len(ss.agents) >= maxSubAgents {
			return
		}
		a = &subAgent{}
		ss.agents[r.AgentID] = a
	}
	switch r.Event {
	case "agent_start":
		if !a.started {
			a.started = true
			s.t.Apply(agent.Observe(agent.Observation{Kind: agent.SubagentStarted, Session: r.Session, Agent: r.AgentID, AgentType: r.AgentName, Native: "OTLP " + EventAgentStart}))
		}
	case "agent_finish":
		if !a.stopped {
			a.stopped = true
			s.t.Apply(agent.Observe(agent.Observation{Kind: agent.SubagentStopped, Session: r.Session, Agent: r.AgentID,
				Reason: r.TerminateReason, EndState: endState(r.TerminateReason), Native: "OTLP " + EventAgentFinish}))
		}
	}
}

// endState is the terminal state Gemini's terminate reason reports, as
// its own word: GOAL (it called complete_task) is completed, ABORTED
// cancelled, any other (ERROR, TIMEOUT, MAX_TURNS,
// ERROR_NO_COMPLETE_TASK_CALL) failed.
func endState(reason string) event.State {
	switch reason {
	case "GOAL":
		return ""
	case "ABORTED":
		return event.StateCancelled
	}
	return event.StateFailed
}

// agentOfPrompt is the sub-agent a telemetry record's prompt_id names
// ("<agent id>#<turn>", measured), "" for the session's own (its id, or
// "<session id>########<n>" in the TUI, measured).
func agentOfPrompt(promptID string) string {
	id, turn, ok := strings.Cut(promptID, "#")
	if !ok || turn == "" || !agent.PlainID(id) {
		return ""
	}
	for _, r := range turn {
		if r < '0' || r > '9' {
			return ""
		}
	}
	return id
}
