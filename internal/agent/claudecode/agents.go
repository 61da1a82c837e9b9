package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// AgentEntry is one session as `claude agents --json` lists it (seen with
// 2.1.332): interactive and background (`claude --bg`) alike. Its name
// (the prompt, or a summary of it) is never read.
type AgentEntry struct {
	PID        int    `json:"pid"`
	ID         string `json:"id"`
	Cwd        string `json:"cwd"`
	Kind       string `json:"kind"`
	SessionID  string `json:"sessionId"`
	Status     string `json:"status"`
	State      string `json:"state"`
	WaitingFor string `json:"waitingFor"`
}

// ParseAgents reads the output of `claude agents --json`. Outcomes: the
// entries that name a session (others are left out); an error for output
// that is not a JSON array (nothing is guessed from it).
func ParseAgents(b []byte) ([]AgentEntry, error) {
	if len(b) > MaxPayload || !utf8.Valid(b) {
		return nil, errors.New("claude agents: output not UTF-8 or over 1 MiB")
	}
	var all []AgentEntry
	if err := json.Unmarshal(bytes.TrimSpace(b), &all); err != nil {
		return nil, errors.New("claude agents: output is not a JSON array of sessions")
	}
	out := all[:0]
	for _, e := range all {
		if e.SessionID != "" && len(e.SessionID) <= agent.MaxID {
			out = append(out, e)
		}
	}
	return out, nil
}

// JobState is a background session's jobs/<id>/state.json as lcwrap reads
// it: its state (working, blocked, done, failed, stopped) and tempo, and
// when it first reached a terminal state. Its detail and output (the
// agent's text) are never decoded.
type JobState struct {
	State           string `json:"state"`
	Tempo           string `json:"tempo"`
	SessionID       string `json:"sessionId"`
	FirstTerminalAt string `json:"firstTerminalAt"`
}

// ReadJobState reads one state.json's bytes. Outcomes: the JobState; an
// error for bytes that are not one JSON object (over 1 MiB, not UTF-8).
func ReadJobState(b []byte) (JobState, error) {
	var s JobState
	if len(b) > MaxPayload || !utf8.Valid(b) {
		return s, errors.New("job state: not UTF-8 or over 1 MiB")
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return JobState{}, errors.New("job state: not a JSON object")
	}
	s.State, s.Tempo = cut(s.State, 32), cut(s.Tempo, 32)
	return s, nil
}

// ClaimUnlisted is the claim of a session lost because the session list
// no longer names it while its process is still there.
const ClaimUnlisted = "no-longer-listed"

// AgentsLimits is what Claude Code's session list can never say.
const AgentsLimits = "Claude Code's own session list (claude agents) and job state: which sessions run, their pid, and the status and state it keeps (the two can disagree: both are kept, neither is chosen); read again when its registry directories change; nothing before adoption, no tool calls, no sub-agents, no cancel authority"

// observeEntry is what one listed session shows: its first sight, and its
// status and state when they changed. Status and state decide a state
// only when they agree (busy and working: running; idle or waiting, and
// blocked or no state: waiting, for the reason waitReason reads, its
// waitingFor kept raw in the evidence); when they disagree the activity
// says both and the state stays.
func observeEntry(e AgentEntry, prev *AgentEntry) []agent.Observation {
	native := "claude agents"
	facts := agent.Facts{Status: cut(e.Status, 32), State: cut(e.State, 32), Kind: cut(e.Kind, 32), PID: int64(e.PID)}
	var obs []agent.Observation
	if prev == nil {
		f := facts
		f.Cwd = fact(e.Cwd)
		obs = append(obs, agent.Observation{Kind: agent.Note, Session: e.SessionID, Native: native,
			Summary: "adopted: claude agents lists this " + cmp.Or(cut(e.Kind, 32), "") + " session (pid " + strconv.Itoa(e.PID) + ")", Facts: f})
	} else if prev.Status == e.Status && prev.State == e.State && prev.WaitingFor == e.WaitingFor {
		if prev.PID != e.PID && e.PID > 0 {
			return []agent.Observation{{Kind: agent.Note, Session: e.SessionID, Native: native,
				Summary: "claude agents: its process is pid " + strconv.Itoa(e.PID), Facts: facts}}
		}
		return nil
	}
	o := agent.Observation{Session: e.SessionID, Native: native + ": status " + cut(e.Status, 32) + ", state " + cut(e.State, 32) + waitingEvidence(e.WaitingFor), Facts: facts}
	switch {
	case e.State == "done" || e.State == "failed" || e.State == "stopped":
		o.Kind, o.Reason = agent.SessionEnded, e.State
		o.EndState = map[string]event.State{"done": event.StateCompleted, "failed": event.StateFailed, "stopped": event.StateCancelled}[e.State]
	case e.Status == "busy" && e.State == "working":
		o.Kind, o.Summary = agent.Working, "claude agents: busy, working"
	case (e.Status == "idle" || e.Status == "waiting") && (e.State == "blocked" || e.State == ""):
		o.Kind, o.WaitingFor = agent.Waiting, waitReason(e.Status, e.WaitingFor)
		o.Summary = "claude agents: " + cut(e.Status, 32)
		if e.WaitingFor != "" {
			o.Summary += ", waiting for " + cut(e.WaitingFor, 40)
		}
	case e.Status == "":
		o.Kind = agent.Note
		o.Summary = "claude agents: state " + cmp.Or(cut(e.State, 32), "(none)") + ", no status yet"
	default:
		o.Kind = agent.Note
		o.Summary = "claude agents: status " + cmp.Or(cut(e.Status, 32), "(none)") + ", state " + cmp.Or(cut(e.State, 32), "(none)") + ": they disagree; both kept, the state unchanged"
	}
	return append(obs, o)
}

// waitReason reads what a waiting session waits for — Claude Code's
// status and its waitingFor, the words it shows (2.1.332 writes
// "permission prompt", "input needed", "dialog open", "sandbox request",
// "worker request", "goal proposal") — into the one vocabulary, by
// keyword where the words say it: a permission, an input or a question,
// a dialog, a trust prompt or a login; nothing named after a turn
// (status idle) is the user's move; anything else, and a waiting status
// that names nothing, is other. The raw words are kept in the evidence
// (waitingEvidence), never replaced by the reason.
func waitReason(status, w string) event.WaitReason {
	l := strings.ToLower(w)
	has := func(words ...string) bool {
		return slices.ContainsFunc(words, func(k string) bool { return strings.Contains(l, k) })
	}
	switch {
	case w == "" && status == "idle":
		return event.WaitUser
	case has("permission", "approv"):
		return event.WaitPermission
	case has("input", "question", "answer", "elicitation"):
		return event.WaitInput
	case has("dialog", "trust", "login", "log in", "sign in"):
		return event.WaitDialog
	}
	return event.WaitOther
}

// waitingEvidence is a waitingFor as the evidence keeps it: raw, quoted,
// cut to 60 characters ("" when none).
func waitingEvidence(w string) string {
	if w == "" {
		return ""
	}
	return ", waitingFor " + strconv.Quote(cut(w, 60))
}

// registryDebounce gathers a burst of changes in the registry's
// directories into one listing.
const registryDebounce = 200 * time.Millisecond

// lister runs `claude agents --json` (a seam for tests and benchmarks).
type lister func(ctx context.Context) ([]byte, error)

func claudeAgents(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "claude", "agents", "--json").Output()
}

// fleet follows every session Claude Code's registry lists.
type fleet struct {
	tracker *agent.Tracker
	cfgDir  string
	list    lister
	say     func(format string, args ...any)
	seen    map[string]*AgentEntry // by session id, the last listing's
	// ids are the listed pids' process identities (pid and start time),
	// read when a session's pid is first listed: a pid reused by another
	// process is then not taken for the session's.
	ids    map[string]event.Identity
	procs  event.ProcTable // the process table (a seam for tests)
	listed int             // listings made
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex // guards listed (read by tests)
}

// adoptRegistry follows every session of the registry under cfgDir.
func adoptRegistry(ctx context.Context, req agent.AdoptRequest, t agent.RegistryTarget, cfgDir string, list lister) (*fleet, error) {
	// The watch starts before the first listing: a change between the two
	// is then seen, where a watch started after would miss it.
	dirs := []string{filepath.Join(cfgDir, "sessions"), filepath.Join(cfgDir, "jobs")}
	w := watchDirs(cfgDir, dirs...)
	out, err := list(ctx)
	if err == nil {
		var entries []AgentEntry
		if entries, err = ParseAgents(out); err == nil {
			return startFleet(req, t, cfgDir, list, w, dirs, entries), nil
		}
	} else {
		err = errors.New("claude agents --json: " + err.Error() + "; nothing to follow")
	}
	if w != nil {
		w.close()
	}
	return nil, err
}

// startFleet records the first listing's sessions and follows the
// registry with w (nil: no inotify here).
func startFleet(req agent.AdoptRequest, t agent.RegistryTarget, cfgDir string, list lister, w *fileWatch, dirs []string, entries []AgentEntry) *fleet {
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Limits: AgentsLimits,
		Emitter: req.Emitter.WithSource(Source), Parent: t.Lineage.ParentChildID,
		Root: cmp.Or(t.Lineage.RootChildID, t.Lineage.ParentChildID), External: true, RunTag: agent.RunTag("")})
	f := &fleet{tracker: tr, cfgDir: cfgDir, list: list, seen: map[string]*AgentEntry{}, ids: map[string]event.Identity{}, procs: event.System, stop: make(chan struct{}), done: make(chan struct{}),
		say: func(format string, args ...any) { req.Sayf(format, args...) }}
	f.apply(entries)
	req.Sayf("following every session Claude Code lists (%d now), as they come and go; ^C to stop", len(entries))
	go f.follow(w, dirs)
	return f
}

// follow lists the sessions again each time the registry's directories
// change (inotify; every 2 s where there is none), until stopped.
func (f *fleet) follow(w *fileWatch, dirs []string) {
	defer close(f.done)
	if w != nil {
		defer w.close()
	}
	for {
		if w != nil {
			if !w.wait(f.stop) {
				return
			}
			w.add(dirs...) // a directory created meanwhile
			// Gather the burst: one listing for it.
			select {
			case <-f.stop:
				return
			case <-time.After(registryDebounce):
			}
		} else {
			select {
			case <-f.stop:
				return
			case <-time.After(2 * time.Second):
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-f.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		out, err := f.list(ctx)
		cancel()
		if err != nil {
			continue // a failed listing proves nothing: the next change tries again
		}
		if entries, err := ParseAgents(out); err == nil {
			f.apply(entries)
		}
	}
}

// apply records one listing: new sessions, changed ones, and those no
// longer listed — ended as the job state reports it, else lost.
func (f *fleet) apply(entries []AgentEntry) {
	f.mu.Lock()
	f.listed++
	f.mu.Unlock()
	now := map[string]bool{}
	for i := range entries {
		e := entries[i]
		now[e.SessionID] = true
		prev := f.seen[e.SessionID]
		if obs := observeEntry(e, prev); len(obs) > 0 {
			f.tracker.Apply(agent.Observe(obs...))
		}
		if prev == nil || prev.PID != e.PID {
			delete(f.ids, e.SessionID)
			if id, _, err := event.IdentityOf(f.procs, e.PID); e.PID > 0 && err == nil {
				f.ids[e.SessionID] = id
			}
		}
		f.seen[e.SessionID] = &e
	}
	for sid, e := range f.seen {
		if now[sid] {
			continue
		}
		delete(f.seen, sid)
		id, known := f.ids[sid]
		delete(f.ids, sid)
		if js, err := f.jobState(e); err == nil && (js.State == "done" || js.State == "failed" || js.State == "stopped") {
			last := *e
			last.State, last.Status = js.State, js.Tempo
			f.tracker.Apply(agent.Observe(observeEntry(last, e)...))
			continue
		}
		cause := agent.AgentEvent{Evidence: "claude agents", Claim: agent.ClaimAgentProcessEnded,
			Note: "no longer listed by claude agents, and its job state names no end; how it ended is unknown"}
		v := event.Verdict{Status: event.Gone}
		switch {
		case known:
			v = event.CheckIdentity(f.procs, id)
		case processAlive(e.PID):
			v = event.Verdict{Status: event.ProcUnknown, Reason: "a process has that pid; its start time was never read"}
		}
		switch v.Status {
		case event.Alive:
			cause.Claim = ClaimUnlisted
			cause.Note = "no longer listed by claude agents while its process is still there; how it ended is unknown"
		case event.ProcUnknown:
			cause.Claim = ClaimUnlisted
			cause.Note = "no longer listed by claude agents; whether its process is still there is unknown (" + v.Reason + "); how it ended is unknown"
		}
		f.tracker.EndSession(sid, cause)
	}
}

// jobState reads a background session's jobs/<id>/state.json.
func (f *fleet) jobState(e *AgentEntry) (JobState, error) {
	if e.ID == "" || strings.ContainsAny(e.ID, "/\\") || e.ID == "." || e.ID == ".." {
		return JobState{}, os.ErrNotExist
	}
	fh, err := os.Open(filepath.Join(f.cfgDir, "jobs", e.ID, "state.json"))
	if err != nil {
		return JobState{}, err
	}
	defer fh.Close()
	b := make([]byte, MaxPayload)
	n, _ := fh.Read(b)
	js, err := ReadJobState(b[:n])
	if err == nil && js.SessionID != "" && js.SessionID != e.SessionID {
		return JobState{}, errors.New("job state names another session")
	}
	return js, err
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// Done implements agent.Adoption: the registry has no end of its own.
func (f *fleet) Done() <-chan struct{} { return nil }

// End implements agent.Adoption: observation stops; the sessions are left
// as they are (their state is unknown from now on, never guessed).
func (f *fleet) End(gone bool) {
	f.once.Do(func() {
		close(f.stop)
		<-f.done
		if gone {
			f.tracker.End(agent.ProcessEnd{Adopted: true})
		}
	})
}

// configDir is Claude Code's config directory for lcwrap's environment:
// $CLAUDE_CONFIG_DIR, else $HOME/.claude.
func configDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".claude")
}
