package agent

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// HookAppend records one payload's Outcome straight into a journal, for a
// hook a user installed (no lcwrap launched the agent, so no wrapper owns
// its events). Each session keeps its state beside the journal
// (<journal>.agents/<source>/), with one sourceEpoch per session, so a new
// session never reads the journal, and a hook process only appends.
type HookAppend struct {
	Source, Prefix, Limits string
	// Journal is the journal's path.
	Journal string
	// Wait bounds each wait: for the session's state lock and for the
	// journal's lock.
	Wait time.Duration
	// Parent and Root are the lineage of the agent's process when it runs
	// under an lcwrap that does not own its events (--agent none).
	Parent, Root string
	// Now replaces the clock (tests).
	Now func() time.Time
}

// StateDir is where the sessions' state lives for a journal.
func StateDir(journalPath, source string) string {
	return journalPath + ".agents/" + source
}

// lineSink collects the lines a Tracker writes.
type lineSink struct {
	lines    [][]byte
	terminal bool
}

func (s *lineSink) Name() string { return "hook" }
func (s *lineSink) WriteEvent(ev *event.Event, line []byte) error {
	s.lines = append(s.lines, append([]byte(nil), line...))
	s.terminal = s.terminal || ev.Kind == event.KindTerminal
	return nil
}
func (s *lineSink) Close() error { return nil }

// Record applies out to its session's saved state and appends the events
// it makes — after the ones an earlier call could not write — to the
// journal. It never fails the caller: what it could not do is said in the
// returned warnings (one line each), and events the journal could not
// take are kept for the next call of the same session (at most
// MaxPending; older ones given up are counted and said).
func (h HookAppend) Record(out Outcome) (warnings []string) {
	session := out.Session
	for _, o := range out.Observations {
		if session == "" {
			session = o.Session
		}
	}
	if session == "" {
		what := cmp.Or(out.Unrecognized, out.Ignored, "a payload")
		return []string{fmt.Sprintf("%s names no session; not recorded", what)}
	}
	held, err := Store{Dir: StateDir(h.Journal, h.Source)}.Lock(session, h.Wait)
	if err != nil {
		return []string{fmt.Sprintf("session %s: not recorded: %v", key(session, 60), err)}
	}
	defer held.Unlock()
	st := held.State
	if st.Epoch == "" {
		st.Epoch = emit.NewEpoch()
	}
	sink := &lineSink{}
	tr := New(Config{
		Source: h.Source, Prefix: h.Prefix, Limits: h.Limits, External: true,
		Parent: h.Parent, Root: h.Root, Now: h.Now,
		Emitter: emit.New(emit.Options{Source: h.Source, Epoch: st.Epoch, Now: h.Now}, sink),
	})
	tr.Load(st)
	tr.Apply(out)
	for _, err := range tr.Errors() {
		warnings = append(warnings, err.Error())
	}
	lines := make([][]byte, 0, len(st.Pending)+len(sink.lines))
	for _, p := range st.Pending {
		lines = append(lines, []byte(p))
		sink.terminal = sink.terminal || bytes.Contains([]byte(p), []byte(`"kind":"terminal"`))
	}
	lines = append(lines, sink.lines...)
	if len(lines) > 0 {
		if err := h.append(lines, sink.terminal); err != nil {
			st.Pending = nil
			if n := st.Queue(lines); n > 0 {
				warnings = append(warnings, fmt.Sprintf("session %s: %d older events given up (%d in all so far): the journal has refused events for too long", key(session, 60), n, st.Dropped))
			}
			warnings = append(warnings, fmt.Sprintf("session %s: %d events kept for the next hook call: %v", key(session, 60), len(st.Pending), err))
		} else {
			st.Pending = nil
		}
	}
	if err := held.Save(); err != nil {
		warnings = append(warnings, fmt.Sprintf("session %s: its state could not be saved (the next call may repeat sequence numbers): %v", key(session, 60), err))
	}
	return warnings
}

func (h HookAppend) append(lines [][]byte, terminal bool) error {
	j, err := journal.Open(h.Journal, journal.Options{LockTimeout: h.Wait})
	if err != nil {
		return err
	}
	_, err = j.Append(lines, terminal)
	return errors.Join(err, j.Close())
}
