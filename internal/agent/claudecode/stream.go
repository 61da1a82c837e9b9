package claudecode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// MaxStreamLine bounds one stream-json line; a longer one is skipped and
// counted.
const MaxStreamLine = 4 << 20

// streamLine is the part of a stream-json message lcwrap reads. Message
// text, tool results and the result text are never decoded.
type streamLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	// system/init
	Model          string `json:"model"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permissionMode"`
	// system/task_started, task_notification
	TaskID       string `json:"task_id"`
	TaskType     string `json:"task_type"`
	SubagentType string `json:"subagent_type"`
	Status       string `json:"status"`
	// assistant
	Message *struct {
		Content []struct {
			Type  string          `json:"type"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
	// result
	IsError        *bool             `json:"is_error"`
	NumTurns       *int64            `json:"num_turns"`
	DurationMs     *float64          `json:"duration_ms"`
	DurationAPIMs  *float64          `json:"duration_api_ms"`
	TotalCostUSD   *float64          `json:"total_cost_usd"`
	StopReason     string            `json:"stop_reason"`
	TerminalReason string            `json:"terminal_reason"`
	APIErrorStatus json.RawMessage   `json:"api_error_status"`
	Denials        []json.RawMessage `json:"permission_denials"`
	Usage          *struct {
		Input         *int64 `json:"input_tokens"`
		Output        *int64 `json:"output_tokens"`
		CacheRead     *int64 `json:"cache_read_input_tokens"`
		CacheCreation *int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// ParseStreamLine reads one stream-json line. It returns what the line
// shows about the session (with activity: tool use, sub-agent tasks, the
// end of a turn; otherwise nothing but the ignored or unrecognised
// outcome of a line it cannot read), and, for a result message, the
// agent's own report of its run. It never fails.
func ParseStreamLine(line []byte, activity bool) (agent.Outcome, *agent.AgentReport) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return agent.Outcome{}, nil
	}
	var m streamLine
	if !utf8.Valid(line) || json.Unmarshal(line, &m) != nil {
		return agent.Unrecognize("", "(stream-json line that is not a JSON object)"), nil
	}
	var report *agent.AgentReport
	if m.Type == "result" {
		report = resultReport(&m)
	}
	if !activity {
		return agent.Outcome{}, report
	}
	native := "stream-json " + cut(m.Type, 32)
	if m.Subtype != "" {
		native += "/" + cut(m.Subtype, 32)
	}
	if m.SessionID == "" {
		return agent.Unrecognize("", "("+native+" without session_id)"), report
	}
	o := agent.Observation{Session: m.SessionID, Native: native}
	switch {
	case m.Type == "system" && m.Subtype == "init":
		o.Kind = agent.SessionStarted
		o.Facts = agent.Facts{Cwd: fact(m.Cwd), Model: fact(m.Model), PermissionMode: fact(m.PermissionMode)}
	case m.Type == "system" && m.Subtype == "task_started" && m.TaskID != "":
		o.Kind, o.Agent, o.AgentType = agent.SubagentStarted, m.TaskID, cut(m.SubagentType, 64)
	case m.Type == "system" && m.Subtype == "task_notification" && m.TaskID != "":
		o.Kind, o.Agent, o.Reason = agent.SubagentStopped, m.TaskID, cut(m.Status, 32)
	case m.Type == "assistant" && m.Message != nil:
		var obs []agent.Observation
		for _, c := range m.Message.Content {
			if c.Type == "tool_use" {
				t := o
				t.Kind, t.Agent, t.Tool, t.Summary = agent.ToolStarted, m.AgentID, cut(c.Name, 64), Summary(c.Name, c.Input)
				obs = append(obs, t)
			}
		}
		if len(obs) == 0 {
			return agent.Ignore(m.SessionID, "stream-json assistant text"), report
		}
		return agent.Observe(obs...), report
	case m.Type == "result":
		o.Kind = agent.TurnEnded
	case m.Type == "system", m.Type == "user", m.Type == "stream_event", m.Type == "assistant":
		return agent.Ignore(m.SessionID, native), report
	default:
		return agent.Unrecognize(m.SessionID, native), report
	}
	return agent.Observe(o), report
}

// resultReport is what a result message says about the run, in lcwrap's
// words, attributed to Claude Code. The result text is never kept.
func resultReport(m *streamLine) *agent.AgentReport {
	r := &agent.AgentReport{ReportedBy: Source, Via: "stream-json result message",
		Subtype: cut(m.Subtype, 64), IsError: m.IsError, NumTurns: m.NumTurns,
		DurationMs: m.DurationMs, DurationAPIMs: m.DurationAPIMs, TotalCostUSD: m.TotalCostUSD,
		StopReason: cut(m.StopReason, 64), TerminalReason: cut(m.TerminalReason, 64), SessionID: cut(m.SessionID, 80)}
	var status any
	if json.Unmarshal(m.APIErrorStatus, &status) == nil {
		switch v := status.(type) {
		case float64:
			r.APIErrorStatus = strconv.FormatFloat(v, 'f', -1, 64)
		case string:
			r.APIErrorStatus = cut(v, 64)
		}
	}
	if m.Denials != nil {
		n := int64(len(m.Denials))
		r.PermissionDenials = &n
	}
	if u := m.Usage; u != nil {
		r.Usage = &agent.AgentUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheCreation: u.CacheCreation}
	}
	return r
}

// Stream reads the stream-json output of `claude -p --output-format
// stream-json` as lcwrap passes it through: an io.Writer that is given a
// copy of every byte and never changes, delays or fails the stream. With
// activity (no hooks this run), what the lines show goes to the Tracker;
// either way the last result message is kept as the agent's report.
type Stream struct {
	mu       sync.Mutex
	tracker  *agent.Tracker
	activity bool
	buf      []byte
	skipping bool // inside a line longer than MaxStreamLine
	started  bool // a system/init was passed on
	report   *agent.AgentReport
	results  int64
	skipped  int64
}

// NewStream returns a Stream recording into t (which may be nil when
// activity is false).
func NewStream(t *agent.Tracker, activity bool) *Stream {
	return &Stream{tracker: t, activity: activity && t != nil}
}

// Write implements io.Writer; it always takes all of p.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			break
		}
		s.keep(p[:i])
		if !s.skipping {
			s.line(s.buf)
		} else {
			s.skipped++
		}
		s.buf, s.skipping = s.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (s *Stream) keep(p []byte) {
	if s.skipping {
		return
	}
	if len(s.buf)+len(p) > MaxStreamLine {
		s.buf, s.skipping = s.buf[:0], true
		return
	}
	s.buf = append(s.buf, p...)
}

func (s *Stream) line(l []byte) {
	out, report := ParseStreamLine(l, s.activity)
	if report != nil {
		s.results++
		s.report = report
	}
	if !s.activity {
		return
	}
	var obs []agent.Observation
	for _, o := range out.Observations {
		if o.Kind == agent.SessionStarted {
			if s.started {
				continue
			}
			s.started = true
		}
		obs = append(obs, o)
	}
	out.Observations = obs
	if len(obs) > 0 || out.Ignored != "" || out.Unrecognized != "" {
		s.tracker.Apply(out)
	}
}

// Flush reads a last line that has no newline.
func (s *Stream) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) > 0 && !s.skipping {
		s.line(s.buf)
	}
	s.buf = s.buf[:0]
}

// Report returns the agent's own report from the last result message (nil
// when none came and no line was skipped): for the terminal event,
// attributed.
func (s *Stream) Report() *agent.AgentReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.report == nil && s.skipped == 0 {
		return nil
	}
	r := &agent.AgentReport{ReportedBy: Source, Via: "stream-json"}
	if s.report != nil {
		*r = *s.report
		r.Results = s.results
	}
	r.LinesSkipped = s.skipped
	return r
}
