package agent

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
	"github.com/lcwrap/lcwrap/internal/termtext"
)

// Config says whose evidence a Tracker records and where.
type Config struct {
	// Source names the agent ("claude-code", "codex"); every event's
	// source is the Emitter's, which should be the same.
	Source string
	// Emitter writes the events. In hook mode its sourceEpoch is the
	// session's (SessionState.Epoch).
	Emitter *emit.Emitter
	// Parent is the parentChildId of every session: the child id of the
	// process that runs the agent ("" when unknown). Root is the lineage's
	// root (default: Parent, else the session itself).
	Parent, Root string
	// External marks sessions this producer did not launch (a hook a user
	// installed): their lineage says external, adopted when first seen.
	External bool
	// Prefix starts every session's child id ("cc" for Claude Code).
	Prefix string
	// RunTag, when set, makes child ids unique to one run (the wrapper's):
	// cc-<first 8 of the session id>-<RunTag>, or the whole id when
	// another session of the run has those 8. Without it (hook mode),
	// the whole session id is used and later lifecycles are numbered.
	RunTag string
	// Limits says in one sentence what this source can never know; it is
	// recorded in every created event.
	Limits string
	// Wrapper, when set, is the lcwrap process that owns these events (a
	// run it launched): recorded in every created event, so that a dead
	// wrapper is found by reconciliation and its children become lost.
	Wrapper *event.Identity
	// Now replaces the clock (tests).
	Now func() time.Time
}

// MaxID bounds a session or sub-agent id, in bytes: an observation naming
// a longer one is refused alone and counted (real ids are UUIDs).
const MaxID = 256

// PlainID reports whether s is an id that can name a file as it is: 1 to
// MaxID ASCII letters, digits, '_' and '-' (no dot, no separator).
func PlainID(s string) bool {
	if s == "" || len(s) > MaxID {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// maxEventLine bounds the line of one event a Tracker writes: the journal's
// line cap, less room for the journalSequence it adds. A longer event is
// refused alone (kept for Errors), so that it never fails the journal
// writes of the events around it.
const maxEventLine = linereader.DefaultMaxBytes - 64

// Tracker turns an agent's observations into lifecycle events for its
// sessions and sub-agents, applying the contract's edges: created →
// starting → running ↔ waiting → terminal, a repeated state as activity,
// never a self-edge, and terminal states immutable. It is safe for
// concurrent use.
type Tracker struct {
	mu       sync.Mutex
	cfg      Config
	sessions map[string]*SessionState
	order    []string          // session ids in the order first seen
	orphans  Counts            // payloads that named no session
	keys     map[string]string // session id → its child-id key (with a RunTag)
	keyOwner map[string]string // child-id key → the session id that has it
	ended    bool              // End ran
	errs     []error
}

// ErrEnded means End ran: the Tracker records nothing more.
var ErrEnded = errors.New("agent: the tracker has ended")

// New returns a Tracker; it writes nothing until it observes something.
func New(cfg Config) *Tracker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "agent"
	}
	return &Tracker{cfg: cfg, sessions: map[string]*SessionState{}}
}

// SetEmitter sets the emitter when it could not be known at New (the
// run's sinks are made after the agent integration is prepared). Call it
// before the first Apply.
func (t *Tracker) SetEmitter(e *emit.Emitter) {
	t.mu.Lock()
	t.cfg.Emitter = e
	t.mu.Unlock()
}

// Load gives the Tracker a session's saved state (hook mode), replacing
// what it held for that session.
func (t *Tracker) Load(st *SessionState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.sessions[st.Session]; !ok {
		t.order = append(t.order, st.Session)
	}
	t.sessions[st.Session] = st
}

// State returns the state held for session (nil when none), for saving.
func (t *Tracker) State(session string) *SessionState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[session]
}

// Current returns the state of session's current lifecycle ("" when it
// has none).
func (t *Tracker) Current(session string) event.State {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.sessions[session]; s != nil && s.Current != nil {
		return s.Current.State
	}
	return ""
}

// Errors returns the events that could not be made (bugs: every event is
// validated before it is written).
func (t *Tracker) Errors() []error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]error(nil), t.errs...)
}

// Apply records what a source made of one payload. Its outcomes: nil;
// ErrEnded after End (nothing recorded). Events that could not be made
// are kept for Errors, never returned: one bad event does not stop the
// others.
func (t *Tracker) Apply(out Outcome) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return ErrEnded
	}
	switch {
	case out.Unrecognized != "":
		t.count(out.Session, "unrecognized:"+cutKind(out.Unrecognized))
	case out.Ignored != "":
		t.count(out.Session, "ignored:"+cutKind(out.Ignored))
	}
	for _, o := range out.Observations {
		switch {
		case o.Session == "":
			t.count("", "unrecognized:(no session id)")
			continue
		case len(o.Session) > MaxID:
			// Refused alone: an id this long is no agent's, and the
			// events it would name would not fit a journal line.
			t.count("", fmt.Sprintf("unrecognized:(session id over %d bytes)", MaxID))
			continue
		case len(o.Agent) > MaxID:
			t.count(o.Session, fmt.Sprintf("unrecognized:(sub-agent id over %d bytes)", MaxID))
			continue
		}
		o.AgentType = cutKind(o.AgentType)
		t.apply(o)
	}
	return nil
}

// ProcessEnd says how the agent's process ended, for the children still
// open when it did.
type ProcessEnd struct {
	// ChildID is the launched process's child id.
	ChildID string
	// Exit is its exit as lcwrap recorded it (nil: not known).
	Exit *event.Exit
	// Adopted says lcwrap did not launch it (it observed it).
	Adopted bool
}

// End is called once the agent's process has ended, before that
// process's own terminal event: every session and sub-agent still open
// becomes lost, with that cause, once. It returns what the process's
// terminal event may add about the agent (the sessions seen, payloads that
// named no session), or nil when there is nothing to say. Later calls
// return nil.
func (t *Tracker) End(p ProcessEnd) *AgentSessions {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return nil
	}
	t.ended = true
	var ids []string
	for _, sid := range t.order {
		s := t.sessions[sid]
		if s.Current != nil {
			ids = append(ids, s.Current.ID)
		}
		claim := ClaimProcessEnded
		if p.Adopted {
			claim = ClaimAgentProcessEnded
		}
		cause := AgentEvent{Claim: claim, Process: &AgentProcess{ChildID: p.ChildID, Exit: p.Exit},
			Note: "the agent's process ended while this was open; how it ended is unknown"}
		t.closeAgents(s, cause)
		if s.Current.Open() {
			t.summary(s)
			t.write(s.Current, emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: cause})
		}
	}
	if len(ids) == 0 && len(t.orphans) == 0 {
		return nil
	}
	return &AgentSessions{Sessions: ids, Source: t.cfg.Source, Unattributed: IntMap(t.orphans)}
}

// EndSession ends one session that its source can no longer follow (its
// process gone, no longer listed): its open sub-agents and itself become
// lost with cause, once. Nothing happens for a session not open.
func (t *Tracker) EndSession(session string, cause AgentEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions[session]
	if t.ended || s == nil || !s.Current.Open() {
		return
	}
	t.closeAgents(s, cause)
	t.summary(s)
	t.write(s.Current, emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: cause})
}

// --- observations -----------------------------------------------------

func (t *Tracker) apply(o Observation) {
	s := t.sessions[o.Session]
	if s == nil {
		s = &SessionState{Session: o.Session}
		t.sessions[o.Session] = s
		t.order = append(t.order, o.Session)
	}
	if o.Kind == UsageReported {
		t.usage(s, o)
		return
	}
	late := o.Kind != SessionStarted && o.Kind != SessionEnded && (o.Kind != SubagentStopped || s.Agents[o.Agent] == nil)
	if s.Current != nil && !s.Current.Open() && late {
		// After the session's end only a new start opens a lifecycle; a
		// late payload (an async hook finishing after SessionEnd) is
		// counted, never a guessed new session.
		t.count(o.Session, "ignored:after the session's end")
		return
	}
	switch o.Kind {
	case SessionStarted:
		if s.Current.Open() {
			t.activity(s.Current, o, "session started again"+paren(o.Source))
			return
		}
		t.open(s, o, true)
	case PromptSubmitted:
		c := t.ensure(s, o)
		t.to(c, event.StateRunning, o, "prompt submitted")
	case ToolStarted, ToolEnded, ToolFailed:
		c := t.target(s, o)
		if c.State == event.StateWaiting || c.State == event.StateStarting {
			t.to(c, event.StateRunning, o, "")
		}
		t.activity(c, o, toolText(o))
	case Working:
		t.to(t.target(s, o), event.StateRunning, o, o.Summary)
	case Waiting:
		c := t.target(s, o)
		t.to(c, event.StateWaiting, o, "waiting for "+string(o.WaitingFor)+summaryAfter(o))
	case TurnEnded:
		c := t.ensure(s, o)
		o.WaitingFor = event.WaitUser
		t.to(c, event.StateWaiting, o, "turn ended; waiting for the user")
	case ErrorReported:
		c := t.target(s, o)
		d := evidence(o)
		d.ReportedError = cmp.Or(o.Reason, "unknown")
		d.Message = "the agent reported an error; its state is unchanged"
		t.write(c, emit.Spec{Kind: event.KindDiagnostic, Details: d})
	case Note:
		t.activity(t.target(s, o), o, o.Summary)
	case SubagentStarted:
		t.subagentStarted(s, o)
	case SubagentStopped:
		t.subagentStopped(s, o)
	case SessionEnded:
		t.sessionEnded(s, o)
	default:
		t.count(o.Session, "unrecognized:"+cutKind(string(o.Kind)))
	}
}

// usage records the agent's running totals on the sub-agent or session
// they are about, as a diagnostic (never a state), ended or not; totals
// for a session not seen yet are counted, never a guessed session (the
// next totals carry them).
func (t *Tracker) usage(s *SessionState, o Observation) {
	c := s.Current
	if o.Agent != "" {
		c = s.Agents[o.Agent] // a sub-agent's totals are never put on its session
	}
	if c == nil || o.Usage == nil {
		t.count(o.Session, "ignored:telemetry for a session not seen yet")
		return
	}
	d := evidence(o)
	d.Usage = o.Usage
	d.Message = "the agent's own running totals of its model requests (its estimate)"
	t.write(c, emit.Spec{Kind: event.KindDiagnostic, Details: d})
}

// open starts a new lifecycle of the session: created, then starting.
func (t *Tracker) open(s *SessionState, o Observation, seenStart bool) *ChildState {
	s.Lifecycles++
	s.Agents = nil
	id := t.cfg.Prefix + "-" + t.sessionKey(s.Session)
	if s.Lifecycles > 1 {
		id += fmt.Sprintf("+%d", s.Lifecycles)
	}
	root := cmp.Or(t.cfg.Root, t.cfg.Parent, id)
	c := &ChildState{ID: id, Parent: t.cfg.Parent, Root: root, History: seenStart, State: ""}
	if t.cfg.External {
		c.External, c.AdoptedAt = true, event.Timestamp(t.cfg.Now())[:19]+"Z"
	}
	s.Current = c
	d := evidence(o)
	d.Agent, d.SessionID, d.Observation, d.SessionSource, d.Limits, d.Wrapper = t.cfg.Source, s.Session, "agent-report", o.Source, t.cfg.Limits, t.cfg.Wrapper
	if !seenStart {
		d.Note = "first seen at " + cmp.Or(o.Native, string(o.Kind)) + "; what came before is unknown"
	}
	t.write(c, emit.Spec{Kind: event.KindCreated, State: event.StateCreated, Details: d})
	t.write(c, emit.Spec{Kind: event.KindStateChanged, State: event.StateStarting, Details: evidence(o)})
	return c
}

// ensure returns the open session lifecycle, opening one first seen here.
func (t *Tracker) ensure(s *SessionState, o Observation) *ChildState {
	if s.Current.Open() {
		return s.Current
	}
	return t.open(s, o, false)
}

// target is the child an observation is about: the open sub-agent it
// names, else the session.
func (t *Tracker) target(s *SessionState, o Observation) *ChildState {
	c := t.ensure(s, o)
	if o.Agent != "" {
		if a := s.Agents[o.Agent]; a.Open() {
			return a
		}
	}
	return c
}

func (t *Tracker) subagentStarted(s *SessionState, o Observation) {
	parent := t.ensure(s, o)
	a := s.Agents[o.Agent]
	if a.Open() {
		t.activity(a, o, "sub-agent started again (resumed, or a new message to it)")
		return
	}
	a = t.newAgent(s, parent, o, true)
	t.write(a, emit.Spec{Kind: event.KindStateChanged, State: event.StateStarting, Details: evidence(o)})
	t.write(a, emit.Spec{Kind: event.KindStateChanged, State: event.StateRunning, Details: evidence(o)})
	t.activity(a, o, cmp.Or(o.AgentType, "unnamed")+" sub-agent started")
}

func (t *Tracker) newAgent(s *SessionState, parent *ChildState, o Observation, seenStart bool) *ChildState {
	if s.Agents == nil {
		s.Agents = map[string]*ChildState{}
	}
	n := 1
	if prev := s.Agents[o.Agent]; prev != nil {
		n = prev.Lifecycles + 1
	}
	id := parent.ID + "." + shortKey(s, o.Agent)
	if n > 1 {
		id += fmt.Sprintf("+%d", n)
	}
	a := &ChildState{ID: id, Parent: parent.ID, Root: parent.Root, External: parent.External, History: seenStart, Lifecycles: n}
	if a.External {
		a.AdoptedAt = event.Timestamp(t.cfg.Now())[:19] + "Z"
	}
	s.Agents[o.Agent] = a
	d := evidence(o)
	d.Agent, d.SessionID, d.AgentID, d.AgentType, d.Observation, d.Limits, d.Wrapper = t.cfg.Source, s.Session, o.Agent, o.AgentType, "agent-report", t.cfg.Limits, t.cfg.Wrapper
	if !seenStart {
		d.Note = "first seen at " + cmp.Or(o.Native, string(o.Kind)) + "; what came before is unknown"
	}
	t.write(a, emit.Spec{Kind: event.KindCreated, State: event.StateCreated, Details: d})
	return a
}

func (t *Tracker) subagentStopped(s *SessionState, o Observation) {
	a := s.Agents[o.Agent]
	if a != nil && !a.Open() {
		d := evidence(o)
		d.Message = "another stop for a sub-agent already recorded as ended: it may have gone on after the first (a hook can keep it running), or its stop came after its session's end; its record stays ended"
		t.write(a, emit.Spec{Kind: event.KindDiagnostic, Details: d})
		return
	}
	parent := t.ensure(s, o)
	if a == nil {
		a = t.newAgent(s, parent, o, false)
	}
	t.reportedEnd(a, o, "the agent reported that this sub-agent stopped; whether it did its job is not known")
}

func (t *Tracker) sessionEnded(s *SessionState, o Observation) {
	if s.Current != nil && !s.Current.Open() {
		d := evidence(o)
		d.Message = "another end for a session already recorded as ended; its record stays ended"
		t.write(s.Current, emit.Spec{Kind: event.KindDiagnostic, Details: d})
		return
	}
	c := t.ensure(s, o)
	cause := evidence(o)
	cause.Claim, cause.Reason = ClaimSessionEnded, o.Reason
	cause.Note = "the session ended before the end of this sub-agent was reported; how it ended is unknown"
	t.closeAgents(s, cause)
	t.summary(s)
	t.reportedEnd(c, o, "the agent reported that the session ended; whether its work was done is not known")
}

// reportedEnd is the terminal event of a child whose end the agent
// reported: completed with the claim agent-reported-end where the
// contract allows it (from running or waiting), otherwise lost (a child
// never seen at work has no edge to completed).
func (t *Tracker) reportedEnd(c *ChildState, o Observation, note string) {
	d := evidence(o)
	d.Claim, d.Reason, d.Note = ClaimAgentReportedEnd, o.Reason, note
	state := event.StateCompleted
	if o.EndState.Terminal() {
		state = o.EndState // failed, cancelled: as the agent reported it
	}
	if event.Transition(c.State, state) != nil {
		state = event.StateLost
		d.Note = note + "; it was never seen at work (no prompt, tool call or start of work was reported), and the lifecycle has no edge from " + string(c.State) + " to " + string(cmp.Or(string(o.EndState), "completed"))
	}
	t.write(c, emit.Spec{Kind: event.KindTerminal, State: state, Details: d})
}

// closeAgents ends every open sub-agent of s as lost with cause.
func (t *Tracker) closeAgents(s *SessionState, cause AgentEvent) {
	ids := make([]string, 0, len(s.Agents))
	for id, a := range s.Agents {
		if a.Open() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.write(s.Agents[id], emit.Spec{Kind: event.KindTerminal, State: event.StateLost, Details: cause})
	}
}

// to moves c to state and records text as its activity; a child in that
// state already gets the activity only (a repeated state is never a
// self-edge).
func (t *Tracker) to(c *ChildState, state event.State, o Observation, text string) {
	if c.State == state {
		if text != "" {
			t.activity(c, o, text)
		}
		return
	}
	if err := event.Transition(c.State, state); err != nil {
		if c.State == event.StateCreated && state != event.StateStarting {
			t.write(c, emit.Spec{Kind: event.KindStateChanged, State: event.StateStarting, Details: evidence(o)})
		} else {
			t.errs = append(t.errs, fmt.Errorf("agent: %s: %w", c.ID, err))
			return
		}
	}
	d := evidence(o)
	if state == event.StateWaiting {
		d.WaitingFor = string(o.WaitingFor)
	}
	d.Tool = o.Tool
	t.write(c, emit.Spec{Kind: event.KindStateChanged, State: state, Details: d})
	t.activity(c, o, text) // what moved it, as the child's latest activity
}

func (t *Tracker) activity(c *ChildState, o Observation, text string) {
	if text == "" {
		return
	}
	d := evidence(o)
	d.Tool = o.Tool
	t.write(c, emit.Spec{Kind: event.KindActivity, Activity: text, Details: d})
}

// count records a payload that became no event; the first unrecognised
// one of each kind on a session is a diagnostic there at once, and the
// totals of every kind (the ignored ones too) follow at the session's end.
func (t *Tracker) count(session, kind string) {
	s := t.sessions[session]
	if session == "" || s == nil || !s.Current.Open() {
		if s != nil && session != "" {
			s.Counts.add(kind)
			return
		}
		t.orphans.add(kind)
		return
	}
	if !s.Counts.add(kind) || !strings.HasPrefix(kind, "unrecognized:") {
		return
	}
	_, what, _ := strings.Cut(kind, ":")
	t.write(s.Current, emit.Spec{Kind: event.KindDiagnostic, Details: AgentEvent{
		Normalization: &Normalization{Outcome: "unrecognized", Kind: what, Count: 1},
		Message:       "a payload of this kind was not recognised and is recorded as nothing else; further ones are counted",
	}})
}

// summary writes the session's counts once it ends, when any kind came
// more than once (the first of each was a diagnostic already).
func (t *Tracker) summary(s *SessionState) {
	more := false
	for k, n := range s.Counts {
		more = more || n > 1 || !strings.HasPrefix(k, "unrecognized:")
	}
	if !more || !s.Current.Open() {
		return
	}
	t.write(s.Current, emit.Spec{Kind: event.KindDiagnostic, Details: AgentEvent{
		Normalization: &Normalization{Counts: IntMap(s.Counts)},
		Message:       "payloads of this session that became no event, by kind",
	}})
}

// write emits one event for c with its next sequence, and follows its
// state.
func (t *Tracker) write(c *ChildState, spec emit.Spec) {
	set := event.AllUnknown()
	if c.History {
		set.History = event.Known
	}
	lin := event.Lineage{RootChildID: c.Root, ParentChildID: c.Parent, External: c.External, AdoptedAt: c.AdoptedAt}
	ch := t.cfg.Emitter.Child(c.ID, lin, event.Profile{Name: t.cfg.Source, Set: set})
	ch.SetNextSequence(c.Seq + 1)
	if _, line, err := ch.Build(spec); err == nil && len(line) > maxEventLine {
		t.errs = append(t.errs, fmt.Errorf("agent: %s: a %s event of %d bytes is over the journal's line cap; refused alone", c.ID, spec.Kind, len(line)))
		return
	}
	if _, err := ch.Emit(spec); err != nil {
		t.errs = append(t.errs, err)
		return
	}
	c.Seq++
	if spec.State != "" && spec.Kind != event.KindDiagnostic && spec.Kind != event.KindReconciliation {
		c.State = spec.State
	}
}

// sessionKey is the part of a session's child id that names the session:
// its whole key in hook mode; with a RunTag, the first 8 characters of its
// key when no other session of this run has them, else its whole key (or,
// should that be taken too, a hash of the whole id), so two sessions of
// one run never share a child (the RunTag keeps runs apart). A session
// keeps the key it was first given.
func (t *Tracker) sessionKey(sid string) string {
	if t.cfg.RunTag == "" {
		return key(sid, 60)
	}
	if k, ok := t.keys[sid]; ok {
		return k
	}
	if t.keys == nil {
		t.keys, t.keyOwner = map[string]string{}, map[string]string{}
	}
	whole := key(sid, 60)
	k := whole
	if len(k) > 8 {
		k = k[:8]
	}
	for _, cand := range []string{k + "-" + t.cfg.RunTag, whole + "-" + t.cfg.RunTag, hashKey(sid) + "-" + t.cfg.RunTag} {
		if owner, taken := t.keyOwner[cand]; !taken || owner == sid {
			k = cand
			break
		}
	}
	t.keys[sid], t.keyOwner[k] = k, sid
	return k
}

// hashKey is a session id as 16 hex digits of its FNV-64a hash.
func hashKey(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	return fmt.Sprintf("h%016x", h.Sum64())
}

// --- helpers ----------------------------------------------------------

// evidence is the details every event of an observation starts from.
func evidence(o Observation) AgentEvent {
	d := AgentEvent{Evidence: o.Native, Decision: o.Decision}
	if !o.Facts.IsZero() {
		f := o.Facts
		d.Reported = &f
	}
	return d
}

func toolText(o Observation) string {
	tool := cmp.Or(o.Tool, "tool")
	var verb string
	switch o.Kind {
	case ToolStarted:
		verb = ""
	case ToolEnded:
		verb = " done"
	case ToolFailed:
		verb = " failed"
	}
	if o.Summary == "" || o.Kind != ToolStarted {
		return tool + verb
	}
	return tool + ": " + o.Summary
}

func summaryAfter(o Observation) string {
	switch {
	case o.Tool != "" && o.Summary != "":
		return " (" + o.Tool + ": " + o.Summary + ")"
	case o.Tool != "":
		return " (" + o.Tool + ")"
	case o.Summary != "":
		return ": " + o.Summary
	}
	return ""
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// key returns id when it is a plain id of at most max characters
// ([A-Za-z0-9_-]), else "h" and a checksum of it, so that child ids stay
// short and printable whatever a payload holds.
func key(id string, max int) string {
	plain := id != "" && len(id) <= max
	for i := 0; plain && i < len(id); i++ {
		c := id[i]
		plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if plain {
		return id
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return fmt.Sprintf("h%016x", h.Sum64())
}

// shortKey is the first 8 characters of a sub-agent's id when no other
// sub-agent of the session shares them, else its whole key.
func shortKey(s *SessionState, agentID string) string {
	k := key(agentID, 60)
	if len(k) <= 8 {
		return k
	}
	for other := range s.Agents {
		if other != agentID && strings.HasPrefix(key(other, 60), k[:8]) {
			return k
		}
	}
	return k[:8]
}

// cutKind keeps a kind printable and short: it comes from a payload.
func cutKind(s string) string { return event.CutRunes(termtext.Blank(s, '?'), 64) }
