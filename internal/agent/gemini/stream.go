package gemini

import (
	"bytes"
	"cmp"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// streamLine is the part of a `-o stream-json` line lcwrap reads: message
// content, tool parameters other than the summary's and tool output are
// never decoded.
type streamLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Severity   string          `json:"severity"`
	Stats      *struct {
		InputTokens  *int64   `json:"input_tokens"`
		OutputTokens *int64   `json:"output_tokens"`
		Cached       *int64   `json:"cached"`
		DurationMs   *float64 `json:"duration_ms"`
		ToolCalls    *int64   `json:"tool_calls"`
	} `json:"stats"`
}

// ParseStreamLine reads one stream-json line of a session already named
// (session: the init line's id, "" before it). It returns what the line
// shows (init, the user's message, tool use and results, errors, the
// result), and for a result line, Gemini's own report of the run. It
// never fails.
func ParseStreamLine(line []byte, session string) (agent.Outcome, *agent.AgentReport) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return agent.Outcome{}, nil
	}
	var m streamLine
	if !utf8.Valid(line) || json.Unmarshal(line, &m) != nil {
		return agent.Unrecognize(session, "(stream-json line that is not a JSON object)"), nil
	}
	if m.Type == "init" && m.SessionID != "" {
		session = m.SessionID
	}
	o := agent.Observation{Session: session, Native: "stream-json " + termtext.Cut(m.Type, 32)}
	var report *agent.AgentReport
	switch m.Type {
	case "init":
		if m.SessionID == "" {
			return agent.Unrecognize(session, "(init without session_id)"), nil
		}
		o.Kind, o.Source = agent.SessionStarted, "headless"
		o.Facts = agent.Facts{Model: fact(m.Model)}
	case "message":
		if m.Role != "user" {
			return agent.Ignore(session, "stream-json "+termtext.Cut(m.Role, 32)+" message"), nil
		}
		o.Kind = agent.PromptSubmitted
	case "tool_use":
		o.Kind, o.Tool, o.Summary = agent.ToolStarted, termtext.Cut(m.ToolName, 64), Summary(m.ToolName, m.Parameters)
		o.Facts = agent.Facts{ToolUseID: termtext.Cut(m.ToolID, 128)}
	case "tool_result":
		o.Kind, o.Facts = agent.ToolEnded, agent.Facts{Status: termtext.Cut(m.Status, 32), ToolUseID: termtext.Cut(m.ToolID, 128)}
		if m.Status != "success" {
			o.Kind = agent.ToolFailed
		}
	case "error":
		o.Kind, o.Reason = agent.ErrorReported, cmp.Or(termtext.Cut(m.Severity, 32), "error")
	case "result":
		o.Kind, o.Summary = agent.Note, "result"+paren(termtext.Cut(m.Status, 32))
		report = resultReport(&m, session)
	default:
		return agent.Unrecognize(session, "stream-json "+termtext.Cut(m.Type, 32)), nil
	}
	return agent.Observe(o), report
}

// resultReport is what a result line says about the run, attributed to
// Gemini CLI.
func resultReport(m *streamLine, session string) *agent.AgentReport {
	r := &agent.AgentReport{ReportedBy: Source, Via: "stream-json result", Subtype: termtext.Cut(m.Status, 64), SessionID: termtext.Cut(session, 80)}
	isErr := m.Status != "success"
	r.IsError = &isErr
	if s := m.Stats; s != nil {
		r.DurationMs = s.DurationMs
		if s.InputTokens != nil || s.OutputTokens != nil || s.Cached != nil {
			r.Usage = &agent.AgentUsage{Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.Cached}
		}
	}
	return r
}

// Stream reads the stream-json output of `gemini -p … -o stream-json` as
// lcwrap passes it through. With activity (no hooks this run), what the
// lines show goes to the Tracker; either way the last result line is kept
// as Gemini's report.
type Stream struct {
	tap      *agent.LineTap
	tracker  *agent.Tracker
	activity bool

	mu      sync.Mutex
	session string
	tools   map[string]string // tool_id → tool_name of the calls open
	report  *agent.AgentReport
	results int64
	skipped int64
}

// NewStream returns a Stream recording into t.
func NewStream(t *agent.Tracker, activity bool) *Stream {
	s := &Stream{tracker: t, activity: activity}
	s.tap = agent.NewLineTap(s.line)
	return s
}

// Write implements io.Writer; it always takes all of p.
func (s *Stream) Write(p []byte) (int, error) { return s.tap.Write(p) }

func (s *Stream) line(l []byte) {
	if bytes.HasPrefix(l, []byte(`{"schemaVersion":`)) {
		return // lcwrap's own event line (--emit stdout shares the stream)
	}
	s.mu.Lock()
	out, report := ParseStreamLine(l, s.session)
	for i, o := range out.Observations {
		switch {
		case o.Kind == agent.SessionStarted:
			s.session = o.Session
		case o.Kind == agent.ToolStarted && o.Facts.ToolUseID != "" && len(s.tools) < 256:
			if s.tools == nil {
				s.tools = map[string]string{}
			}
			s.tools[o.Facts.ToolUseID] = o.Tool
		case o.Kind == agent.ToolEnded || o.Kind == agent.ToolFailed:
			out.Observations[i].Tool = s.tools[o.Facts.ToolUseID] // a result names no tool, only its call
			delete(s.tools, o.Facts.ToolUseID)
		}
	}
	if report != nil {
		s.results++
		s.report = report
	}
	s.mu.Unlock()
	if s.activity {
		s.tracker.Apply(out)
	}
}

// Flush reads a last line that has no newline.
func (s *Stream) Flush() {
	n := s.tap.Flush()
	s.mu.Lock()
	s.skipped = n
	s.mu.Unlock()
}

// Report returns Gemini's own report from the last result line (nil when
// none came and no line was skipped).
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
