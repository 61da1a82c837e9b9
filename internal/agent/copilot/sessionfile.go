package copilot

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// Copilot CLI 1.0.102 writes every session's events to
// $COPILOT_HOME/session-state/<session id>/events.jsonl (COPILOT_HOME
// defaults to ~/.copilot), one JSON object a line. Two of its types say
// what no hook lcwrap may register says: permission.requested (a prompt to
// answer is open; written only when Copilot asks, never for a tool the
// rules allow, measured) and permission.completed (answered: result.kind,
// and who decided, decisionSource). The wrapper follows that one file,
// read-only, named by the session id its own sessionStart hook receives,
// from the session's start to the run's end: run-scoped, nothing edited.
const (
	// NativeRequested and NativeCompleted are the lines' types, and
	// NativeUsage a model request's usage record.
	NativeRequested = "permission.requested"
	NativeCompleted = "permission.completed"
	NativeUsage     = "session.usage_record"
	// ViaUsage names the evidence of the totals made from usage records.
	ViaUsage = "session file " + NativeUsage
	// MaxSessionLine bounds a line of the session file that is read; a
	// longer one (a tool's output) is skipped whole.
	MaxSessionLine = 1 << 20
	// pollEvery is how often a followed file is read for new lines.
	pollEvery = 100 * time.Millisecond
	// maxFollowed bounds the sessions followed in one run.
	maxFollowed = 16
)

// SessionFile is the events file of session under home ($COPILOT_HOME,
// else ~/.copilot); "" for an id that is not a plain name.
func SessionFile(home, session string) string {
	if home == "" || !agent.PlainID(session) {
		return ""
	}
	return filepath.Join(home, "session-state", session, "events.jsonl")
}

// CopilotHome is where Copilot keeps its state for an environment's
// $COPILOT_HOME and $HOME ("" when neither is set).
func CopilotHome(copilotHome, home string) string {
	if copilotHome != "" {
		return copilotHome
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".copilot")
}

// sessionLine is the part of a session file line lcwrap reads: the
// command a permission is asked for (its first line, cut and redacted) and
// the answer; tool arguments, results and messages are never decoded.
type sessionLine struct {
	Type string `json:"type"`
	Data struct {
		AgentID           string `json:"agentId"`
		ToolCallID        string `json:"toolCallId"`
		PermissionRequest *struct {
			Kind            string `json:"kind"`
			ToolCallID      string `json:"toolCallId"`
			FullCommandText string `json:"fullCommandText"`
		} `json:"permissionRequest"`
		Result *struct {
			Kind string `json:"kind"`
		} `json:"result"`
		DecisionSource string `json:"decisionSource"`
		Usage          *struct {
			Model            string `json:"model"`
			InputTokens      int64  `json:"inputTokens"`
			OutputTokens     int64  `json:"outputTokens"`
			CacheReadTokens  int64  `json:"cacheReadTokens"`
			CacheWriteTokens int64  `json:"cacheWriteTokens"`
		} `json:"usage"`
	} `json:"data"`
}

// ParseSessionLine maps one line of a session file into an observation
// of session: permission.requested a wait for permission,
// permission.completed its answer (running again, with Copilot's decision
// and who made it), session.usage_record one model request's tokens (a
// UsageReported whose Usage holds that request alone: the caller keeps
// the running totals; Copilot's cost field is not read — it is 0 under
// bring-your-own-model — so the cost stays unknown). ok is false for any
// other line, or one it cannot read (never a panic, never a guess).
func ParseSessionLine(session string, line []byte) (agent.Observation, bool) {
	if len(line) > MaxSessionLine || !bytes.Contains(line, []byte(`"permission.`)) && !bytes.Contains(line, []byte(`"`+NativeUsage+`"`)) || !utf8.Valid(line) {
		return agent.Observation{}, false
	}
	var l sessionLine
	if json.Unmarshal(line, &l) != nil {
		return agent.Observation{}, false
	}
	o := agent.Observation{Session: session, Native: l.Type}
	if agent.PlainID(l.Data.AgentID) && l.Data.AgentID != session {
		o.Agent = l.Data.AgentID
	}
	switch l.Type {
	case NativeRequested:
		o.Kind, o.WaitingFor = agent.Waiting, event.WaitPermission
		if p := l.Data.PermissionRequest; p != nil {
			cmd, _, _ := strings.Cut(strings.TrimSpace(p.FullCommandText), "\n")
			o.Summary = termtext.Cut(strings.TrimSuffix(termtext.Cut(p.Kind, 32)+": "+cmd, ": "), 120)
		}
	case NativeCompleted:
		if l.Data.Result == nil || l.Data.Result.Kind == "" {
			return agent.Observation{}, false
		}
		d := &agent.AgentDecision{Decision: termtext.Cut(l.Data.Result.Kind, 32),
			Source: termtext.Cut(cmp.Or(l.Data.DecisionSource, "unknown"), 32), ToolUseID: termtext.Cut(l.Data.ToolCallID, 64)}
		who := d.Source
		if l.Data.DecisionSource == "" {
			who = "(copilot does not say who)"
		}
		o.Kind, o.Decision = agent.Working, d
		o.Summary = "permission " + d.Decision + ", decided by " + who
	case NativeUsage:
		u := l.Data.Usage
		if u == nil || u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
			return agent.Observation{}, false
		}
		o.Agent = "" // the session's totals, as Copilot's accounting keeps them
		o.Kind, o.Native = agent.UsageReported, ViaUsage
		o.Usage = &agent.AgentTotals{Requests: 1, Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
			CacheCreation: u.CacheWriteTokens, Model: termtext.Cut(u.Model, 64), CostUnknown: true, ReportedBy: Source, Via: ViaUsage}
	default:
		return agent.Observation{}, false
	}
	return o, true
}

// follower follows the session files of a run's sessions and applies
// what they show; it also serializes the hook server's outcomes with
// them (one lock), so that a wait and its answer land in order.
type follower struct {
	t    *agent.Tracker
	home string // $COPILOT_HOME, else ~/.copilot; "" follows nothing

	mu       sync.Mutex
	followed map[string]*followed // by session id
	stop     chan struct{}
	stopped  bool
	wg       sync.WaitGroup
}

type followed struct {
	open bool // the file was opened: its waits are the ones recorded
}

func newFollower(t *agent.Tracker, home string) *follower {
	return &follower{t: t, home: home, followed: map[string]*followed{}, stop: make(chan struct{})}
}

// apply records a hook's outcome: a session's start begins following its
// file; a permission prompt's notification is no second wait when the
// file is followed (the file says it, and says its answer).
func (f *follower) apply(out agent.Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obs := out.Observations[:0:0]
	for _, o := range out.Observations {
		if o.Kind == agent.Waiting && o.WaitingFor == event.WaitPermission && o.Native == "notification" {
			if s := f.followed[o.Session]; s != nil && s.open {
				f.t.Apply(agent.Ignore(o.Session, "permission_prompt: the wait is read from the session file"))
				continue
			}
		}
		obs = append(obs, o)
	}
	out.Observations = obs
	f.t.Apply(out)
	for _, o := range obs {
		if o.Kind == agent.SessionStarted && o.Agent == "" {
			f.follow(o.Session, o.Source)
		}
	}
}

// follow starts following session's file (once); a resumed session's is
// read from its end, a new one's from its start.
func (f *follower) follow(session, source string) {
	path := SessionFile(f.home, session)
	if path == "" || f.stopped || f.followed[session] != nil || len(f.followed) >= maxFollowed {
		return
	}
	s := &followed{}
	f.followed[session] = s
	fromEnd := source != "" && source != "new" && source != "startup"
	f.wg.Add(1)
	go f.run(session, path, s, fromEnd)
}

// close reads what the files hold now and stops following them.
func (f *follower) close() {
	f.mu.Lock()
	if !f.stopped {
		f.stopped = true
		close(f.stop)
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *follower) run(session, path string, s *followed, fromEnd bool) {
	defer f.wg.Done()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var r *lineReader
	var totals *agent.AgentTotals // the session's running totals
	for {
		last := false
		select {
		case <-f.stop:
			last = true
		case <-tick.C:
		}
		if r == nil {
			fh, err := os.Open(path)
			if err == nil {
				r = &lineReader{f: fh}
				if fromEnd {
					r.off, _ = fh.Seek(0, io.SeekEnd)
				}
				f.mu.Lock()
				s.open = true
				f.mu.Unlock()
				defer fh.Close()
			}
		}
		if r != nil {
			for {
				line, err := r.next()
				if err != nil {
					break
				}
				if o, ok := ParseSessionLine(session, line); ok {
					if o.Kind == agent.UsageReported {
						totals = addUsage(totals, o.Usage)
						u := *totals
						o.Usage = &u
					}
					f.mu.Lock()
					f.t.Apply(agent.Observe(o))
					f.mu.Unlock()
				}
			}
		}
		if last {
			return
		}
	}
}

// lineReader reads whole lines of a growing file; a line not yet ended
// is read again once it is, one longer than MaxSessionLine is skipped.
type lineReader struct {
	f    *os.File
	off  int64
	buf  []byte
	skip bool // in a line too long to keep
}

var errNoLine = errors.New("no whole line yet")

func (r *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			line := r.buf[:i]
			r.buf = r.buf[i+1:]
			if r.skip || len(line) > MaxSessionLine {
				r.skip = false
				continue
			}
			return line, nil
		}
		if len(r.buf) > MaxSessionLine {
			r.buf, r.skip = r.buf[:0], true
		}
		chunk := make([]byte, 64<<10)
		n, err := r.f.ReadAt(chunk, r.off)
		r.off += int64(n)
		r.buf = append(r.buf, chunk[:n]...)
		if n == 0 {
			if err == nil || err == io.EOF {
				return nil, errNoLine
			}
			return nil, err
		}
	}
}

// addUsage adds one request's usage to the running totals (nil: none yet);
// a count that would overflow stays at its last value.
func addUsage(t, u *agent.AgentTotals) *agent.AgentTotals {
	if t == nil {
		t = &agent.AgentTotals{ReportedBy: Source, Via: ViaUsage, CostUnknown: true}
	}
	add := func(a *int64, b int64) {
		if *a+b >= *a {
			*a += b
		}
	}
	add(&t.Requests, u.Requests)
	add(&t.Input, u.Input)
	add(&t.Output, u.Output)
	add(&t.CacheRead, u.CacheRead)
	add(&t.CacheCreation, u.CacheCreation)
	if u.Model != "" {
		t.Model = u.Model
	}
	return t
}
