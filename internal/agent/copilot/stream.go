package copilot

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// resultLine is the part of `--output-format json`'s result line lcwrap
// reads.
type resultLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	ExitCode  *int64 `json:"exitCode"`
	Usage     *struct {
		TotalAPIDurationMs *float64 `json:"totalApiDurationMs"`
		SessionDurationMs  *float64 `json:"sessionDurationMs"`
	} `json:"usage"`
}

// ParseResult reads one line of `copilot -p … --output-format json`: for
// its result line (the last; the only one that names the session), the
// report Copilot gives of the run; nil for any other line. It never
// fails.
func ParseResult(line []byte) *agent.AgentReport {
	line = bytes.TrimSpace(line)
	if !bytes.Contains(line, []byte(`"result"`)) || !utf8.Valid(line) {
		return nil
	}
	var m resultLine
	if json.Unmarshal(line, &m) != nil || m.Type != "result" {
		return nil
	}
	r := &agent.AgentReport{ReportedBy: Source, Via: "json output result", SessionID: termtext.Cut(m.SessionID, 80)}
	if m.ExitCode != nil {
		isErr := *m.ExitCode != 0
		r.IsError = &isErr
	}
	if u := m.Usage; u != nil {
		r.DurationMs, r.DurationAPIMs = u.SessionDurationMs, u.TotalAPIDurationMs
	}
	return r
}

// Stream reads `--output-format json` as lcwrap passes it through, for
// Copilot's report alone: its lines name no session before the last, so
// the hooks are the evidence.
type Stream struct {
	tap *agent.LineTap

	mu      sync.Mutex
	report  *agent.AgentReport
	results int64
	skipped int64
}

// NewStream returns a Stream.
func NewStream() *Stream {
	s := &Stream{}
	s.tap = agent.NewLineTap(s.line)
	return s
}

// Write implements io.Writer; it always takes all of p.
func (s *Stream) Write(p []byte) (int, error) { return s.tap.Write(p) }

func (s *Stream) line(l []byte) {
	if r := ParseResult(l); r != nil {
		s.mu.Lock()
		s.report, s.results = r, s.results+1
		s.mu.Unlock()
	}
}

// Flush reads a last line that has no newline.
func (s *Stream) Flush() {
	n := s.tap.Flush()
	s.mu.Lock()
	s.skipped = n
	s.mu.Unlock()
}

// Report returns Copilot's report from the last result line (nil when
// none came and no line was skipped).
func (s *Stream) Report() *agent.AgentReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.report == nil && s.skipped == 0 {
		return nil
	}
	r := &agent.AgentReport{ReportedBy: Source, Via: "json output"}
	if s.report != nil {
		*r = *s.report
		r.Results = s.results
	}
	r.LinesSkipped = s.skipped
	return r
}
