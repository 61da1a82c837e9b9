package opencode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// runLine is the part of one `opencode run --format json` line lcwrap
// reads: text, tool input and output are never decoded.
type runLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		Tool   string `json:"tool"`
		CallID string `json:"callID"`
		Reason string `json:"reason"`
		State  *struct {
			Status string `json:"status"`
			Title  string `json:"title"`
		} `json:"state"`
		Tokens *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
			Cache  struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost *float64 `json:"cost"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
	} `json:"error"`
}

// RunStream reads `opencode run --format json` as lcwrap passes it
// through: its session (first seen at its first line), its finished tool
// calls (the output shows a call once, ended), the end of its turn, its
// errors, and the tokens and cost of its steps as its report.
type RunStream struct {
	tap     *agent.LineTap
	tracker *agent.Tracker

	mu      sync.Mutex
	session string
	lines   int64
	steps   int64
	cost    float64
	in, out int64
	read    int64
	write   int64
	skipped int64
}

// NewRunStream returns a RunStream recording into t.
func NewRunStream(t *agent.Tracker) *RunStream {
	s := &RunStream{tracker: t}
	s.tap = agent.NewLineTap(s.line)
	return s
}

// Write implements io.Writer; it always takes all of p.
func (s *RunStream) Write(p []byte) (int, error) { return s.tap.Write(p) }

func (s *RunStream) line(l []byte) {
	l = bytes.TrimSpace(l)
	if len(l) == 0 || bytes.HasPrefix(l, []byte(`{"schemaVersion":`)) {
		return
	}
	s.mu.Lock()
	outs := s.parse(l)
	s.mu.Unlock()
	for _, o := range outs {
		s.tracker.Apply(o)
	}
}

// parse maps one line (s.mu held).
func (s *RunStream) parse(l []byte) []agent.Outcome {
	var m runLine
	if !utf8.Valid(l) || json.Unmarshal(l, &m) != nil {
		return []agent.Outcome{agent.Unrecognize(s.session, "(run json line that is not a JSON object)")}
	}
	s.lines++
	var outs []agent.Outcome
	if s.session == "" && m.SessionID != "" {
		s.session = termtext.Cut(m.SessionID, 128)
		outs = append(outs, agent.Observe(agent.Observation{Kind: agent.SessionStarted, Session: s.session, Native: "run json (first line)", Source: "run"}))
	}
	sess := s.session
	if sess == "" {
		return append(outs, agent.Unrecognize("", "run json line before any session"))
	}
	typ := termtext.Cut(m.Type, 32)
	o := agent.Observation{Session: sess, Native: "run json " + typ}
	switch m.Type {
	case "tool_use":
		if m.Part == nil || m.Part.State == nil {
			return append(outs, agent.Unrecognize(sess, "tool_use without state"))
		}
		o.Tool, o.Facts.ToolUseID = termtext.Cut(m.Part.Tool, 64), termtext.Cut(m.Part.CallID, 128)
		start := o
		start.Kind, start.Summary = agent.ToolStarted, termtext.Cut(m.Part.State.Title, 120)
		end := o
		end.Kind, end.Facts.Status = agent.ToolEnded, termtext.Cut(m.Part.State.Status, 16)
		if m.Part.State.Status != "completed" {
			end.Kind = agent.ToolFailed
		}
		outs = append(outs, agent.Observe(start, end))
	case "step_finish":
		if m.Part != nil {
			s.steps++
			if m.Part.Cost != nil {
				s.cost += *m.Part.Cost
			}
			if t := m.Part.Tokens; t != nil {
				s.in, s.out, s.read, s.write = s.in+t.Input, s.out+t.Output, s.read+t.Cache.Read, s.write+t.Cache.Write
			}
			if m.Part.Reason == "stop" {
				o.Kind = agent.TurnEnded
				return append(outs, agent.Observe(o))
			}
		}
		outs = append(outs, agent.Ignore(sess, "step_finish (its figures kept for the report)"))
	case "error":
		o.Kind, o.Reason = agent.ErrorReported, "unknown"
		if m.Error != nil {
			o.Reason = cmp.Or(termtext.Cut(m.Error.Name, 64), o.Reason)
		}
		outs = append(outs, agent.Observe(o))
	case "step_start", "text", "reasoning":
		outs = append(outs, agent.Ignore(sess, "run json "+typ))
	default:
		outs = append(outs, agent.Unrecognize(sess, "run json "+typ))
	}
	return outs
}

// Flush reads a last line that has no newline.
func (s *RunStream) Flush() {
	n := s.tap.Flush()
	s.mu.Lock()
	s.skipped = n
	s.mu.Unlock()
}

// Report is opencode's own account from its steps (nil when no line was
// read nor skipped).
func (s *RunStream) Report() *agent.AgentReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lines == 0 && s.skipped == 0 {
		return nil
	}
	r := &agent.AgentReport{ReportedBy: Source, Via: "run --format json step_finish", SessionID: termtext.Cut(s.session, 80), LinesSkipped: s.skipped}
	if s.steps > 0 {
		cost, in, out, read, write := s.cost, s.in, s.out, s.read, s.write
		r.TotalCostUSD = &cost
		r.Usage = &agent.AgentUsage{Input: &in, Output: &out, CacheRead: &read, CacheCreation: &write}
	}
	return r
}
