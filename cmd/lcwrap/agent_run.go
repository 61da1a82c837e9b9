package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/agent/codex"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/supervise"
)

// agentDrivers are the agent integrations of --agent; exe is lcwrap's own
// absolute path (for hooks that call it back).
func agentDrivers(exe string) []agent.Driver {
	return []agent.Driver{
		claudecode.Driver{Exe: exe},
		codex.Driver{},
	}
}

func agentNames() []string {
	names := []string{agent.SelectAuto, agent.SelectNone}
	for _, d := range agentDrivers("") {
		names = append(names, d.Name())
	}
	return names
}

func agentFlag() cli.Flag {
	return &cli.StringFlag{Name: "agent", Value: agent.SelectAuto, Usage: "agent integration: " + strings.Join(agentNames(), ", ") + " (auto: by the command's name; none: off). It reads the agent's own evidence (hooks, event streams) for its sessions"}
}

// agentRun is the agent integration of one run.
type agentRun struct {
	driver  agent.Driver
	launch  *agent.Launch
	tracker *agent.Tracker
	tap     *tapQueue // the stdout tap's queue (nil: none)

	closeOnce sync.Once
}

// prepareAgent picks the agent integration for cfg.Argv and lets it
// prepare the run: its command line, environment and created details,
// and the seams that end its children before the process's terminal
// event. It returns nil when no integration applies. A bad --agent is a
// usage error; an integration that cannot be set up is one warning line,
// and the command runs as it was.
func prepareAgent(ctx context.Context, cmd flagReader, std stdio, cfg *supervise.Config) (*agentRun, error) {
	name := cmd.String("agent")
	exe, _ := os.Executable()
	d, ok := agent.Select(name, cfg.Argv, agentDrivers(exe)...)
	if !ok {
		return nil, usagef(cmd, "--agent %q: choose one of %s", name, strings.Join(agentNames(), ", "))
	}
	if d == nil {
		return nil, nil
	}
	if cfg.Restart.Policy != supervise.RestartNo {
		fmt.Fprintf(std.err, "lcwrap: --restart: the %s integration is off (its hooks belong to one run); each attempt is reported as a process\n", d.Name())
		return nil, nil
	}
	prefix := d.Name()
	if p, ok := d.(interface{ ChildPrefix() string }); ok {
		prefix = p.ChildPrefix()
	}
	self, _ := event.SelfIdentity()
	tr := agent.New(agent.Config{
		Source: d.Name(), Prefix: prefix, Parent: cfg.ChildID, Root: firstSet(cfg.Lineage.RootChildID, cfg.ChildID),
		RunTag: runTag(cfg.ChildID), Limits: limitsOf(d), Wrapper: &self,
	})
	l := &agent.Launch{Argv: slices.Clone(cfg.Argv), ChildID: cfg.ChildID, RootChildID: firstSet(cfg.Lineage.RootChildID, cfg.ChildID), Tracker: tr}
	if err := d.Prepare(ctx, l); err != nil {
		fmt.Fprintf(std.err, "lcwrap: %v; reporting the process only\n", err)
		return nil, nil
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(std.err, "lcwrap: %s\n", oneLine(w))
	}
	switch {
	case l.Recorded != nil:
		cfg.RecordedArgv = l.Recorded
	case !slices.Equal(cfg.Argv, l.Argv):
		cfg.RecordedArgv = cfg.Argv // what the user asked for; details.agent says what was added
	}
	cfg.Argv = l.Argv
	cfg.ExtraEnv = append(cfg.ExtraEnv, l.Env...)
	cfg.OnStarted = l.Started
	event.SetPtr(&cfg.CreatedExtra, agent.KeyAgent, l.Added)
	ar := &agentRun{driver: d, launch: l, tracker: tr}
	cfg.BeforeTerminal = ar.beforeTerminal
	return ar, nil
}

// limitsOf is what the driver's evidence can never say.
func limitsOf(d agent.Driver) string {
	if l, ok := d.(interface{ SourceLimits() string }); ok {
		return l.SourceLimits()
	}
	if d.Name() == claudecode.Source {
		return claudecode.Limits
	}
	return ""
}

// runTag makes the agent's child ids unique to this run: the random tail
// of a generated child id, else a fresh one.
func runTag(childID string) string {
	if i := strings.LastIndexByte(childID, '-'); i >= 0 && len(childID)-i-1 == 8 {
		return childID[i+1:]
	}
	id := emit.NewChildID("x")
	return id[strings.LastIndexByte(id, '-')+1:]
}

// stdout wraps the writer the child's stdout is passed to, so that the
// integration sees every byte passed through (nil: no tap needed).
func (ar *agentRun) stdout(w io.Writer) io.Writer {
	if ar == nil || ar.launch.Stdout == nil {
		return w
	}
	if ar.tap == nil {
		ar.tap = newTapQueue(ar.launch.Stdout)
	}
	return tapWriter{w: w, q: ar.tap}
}

// attach gives the integration the run's emitter (its sinks) under the
// agent's own source.
func (ar *agentRun) attach(e *emit.Emitter) {
	if ar != nil {
		ar.tracker.SetEmitter(e.WithSource(ar.driver.Name()))
	}
}

// beforeTerminal ends the agent's evidence and children before the
// process's own terminal event, and adds what the agent reported.
func (ar *agentRun) beforeTerminal(term *event.Terminal) {
	var untapped int64
	if ar.tap != nil {
		untapped = ar.tap.close() // the streams are drained: every byte is in
	}
	ar.close()
	event.SetPtr(&term.Extra, agent.KeyAgentSessions, ar.tracker.End(agent.ProcessEnd{ChildID: ar.launch.ChildID, Exit: term.Exit}))
	if ar.launch.Report != nil {
		ar.launch.Report(term)
	}
	if untapped > 0 {
		event.SetPtr(&term.Extra, agent.KeyAgentOutputUnread, &agent.AgentOutputUnread{Bytes: untapped, Reason: "the agent's output came faster than it could be read; it passed through unchanged"})
	}
}

// close stops the integration's evidence (once); finish calls it too, for
// a run that never reached its terminal event's seam.
func (ar *agentRun) close() {
	ar.closeOnce.Do(func() {
		if ar.launch.Close != nil {
			ar.launch.Close()
		}
	})
}

// finish is called once supervise.Run has returned.
func (ar *agentRun) finish() {
	if ar == nil {
		return
	}
	if ar.tap != nil {
		ar.tap.close()
	}
	ar.close()
}

// tapWriter passes bytes to w and then queues what w took for tap, which
// a goroutine of its own feeds: the stream writes under its own lock, and
// what tap does (events, possibly to this very stream) must never wait
// for it, nor slow it. Past maxTapQueue bytes waiting, bytes are not
// queued but counted (tap then sees a gap, never a changed stream).
type tapWriter struct {
	w io.Writer
	q *tapQueue
}

const maxTapQueue = 8 << 20

type tapQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     [][]byte
	size    int
	closed  bool
	dropped int64
	tap     io.Writer
	done    chan struct{}
}

func newTapQueue(tap io.Writer) *tapQueue {
	q := &tapQueue{tap: tap, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (t tapWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.q.put(p[:n])
	}
	return n, err
}

func (q *tapQueue) put(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.size+len(p) > maxTapQueue {
		q.dropped += int64(len(p))
		return
	}
	q.buf = append(q.buf, append([]byte(nil), p...))
	q.size += len(p)
	q.cond.Signal()
}

func (q *tapQueue) run() {
	defer close(q.done)
	q.mu.Lock()
	for {
		for len(q.buf) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.buf) == 0 {
			q.mu.Unlock()
			return
		}
		batch := q.buf
		q.buf, q.size = nil, 0
		q.mu.Unlock()
		for _, b := range batch {
			q.tap.Write(b)
		}
		q.mu.Lock()
	}
}

// close feeds what is queued to tap and stops; it returns the bytes that
// were not queued.
func (q *tapQueue) close() int64 {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
	<-q.done
	return q.dropped
}
