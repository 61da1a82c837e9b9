package codex

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/hookhttp"
)

// gate applies what a run's sources say (codex's exec stream, its
// rollout, its hooks) to the run's Tracker, one outcome at a time: a
// session's start, and a sub-agent's start and end, are recorded once,
// from whichever source said it first; another source's saying it again
// becomes an activity line.
type gate struct {
	tr      *agent.Tracker
	mu      sync.Mutex
	started map[string]bool
	agents  map[[2]string]bool // (session, sub-agent) → open
}

func newGate(tr *agent.Tracker) *gate {
	return &gate{tr: tr, started: map[string]bool{}, agents: map[[2]string]bool{}}
}

// Apply implements the Tracker's Apply for the run's sources.
func (g *gate) Apply(out agent.Outcome) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, o := range out.Observations {
		k := [2]string{o.Session, o.Agent}
		open, seen := g.agents[k]
		switch {
		case o.Kind == agent.SessionStarted && g.started[o.Session]:
			o.Kind, o.Summary = agent.Note, "session start reported by "+cmp.Or(o.Native, "another source")+paren(o.Source)
		case o.Kind == agent.SessionStarted:
			if len(g.started) < 4096 { // bounded: past it a start may be recorded twice
				g.started[o.Session] = true
			}
		case o.Kind == agent.SubagentStarted && open:
			o.Kind, o.Summary = agent.Note, "sub-agent start reported by "+cmp.Or(o.Native, "another source")
		case o.Kind == agent.SubagentStopped && seen && !open:
			o.Kind, o.Summary = agent.Note, "sub-agent end reported by "+cmp.Or(o.Native, "another source")+paren(o.Reason)
		case o.Kind == agent.SubagentStarted:
			if len(g.agents) < 4096 {
				g.agents[k] = true
			}
		case o.Kind == agent.SubagentStopped:
			if len(g.agents) < 4096 || seen {
				g.agents[k] = false
			}
		}
		out.Observations[i] = o
	}
	return g.tr.Apply(out)
}

// hookSide is lcwrap's hook server for one launched codex: the payloads
// `lcwrap hook codex --relay` hands over, recorded in order on a goroutine
// of their own, so that a hook is answered as soon as its payload is
// queued.
type hookSide struct {
	turnsWait bool
	apply     func(agent.Outcome) error
	report    CodexHooks

	mu   sync.Mutex
	srv  *hookhttp.Server // nil once closed
	c    chan []byte
	done chan struct{}

	rmu      sync.Mutex
	taken    int64
	rejected map[string]int
}

// startHooks listens on 127.0.0.1 with a fresh token; env is what the
// child needs to reach it.
func startHooks(apply func(agent.Outcome) error, turnsWait bool) (h *hookSide, env []string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("codex: cannot listen for hooks on 127.0.0.1: %w", err)
	}
	token := make([]byte, 16)
	rand.Read(token)
	tok := hex.EncodeToString(token)
	h = &hookSide{turnsWait: turnsWait, apply: apply, c: make(chan []byte, 1024), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for b := range h.c {
			h.apply(NormalizeHook(b, h.turnsWait))
		}
	}()
	h.srv = hookhttp.Serve(ln, tok, h.put, h.reject)
	url := "http://" + h.srv.Addr() + hookhttp.HookPath
	return h, []string{EnvHookURL + "=" + url, EnvHookToken + "=" + tok}, nil
}

func (h *hookSide) url() string { return "http://" + h.srv.Addr() + hookhttp.HookPath }

func (h *hookSide) put(b []byte) {
	h.rmu.Lock()
	h.taken++
	h.rmu.Unlock()
	h.c <- b
}

func (h *hookSide) reject(reason string) {
	h.rmu.Lock()
	defer h.rmu.Unlock()
	if h.rejected == nil {
		h.rejected = map[string]int{}
	}
	h.rejected[reason]++
}

// close stops the server; every payload taken is recorded first.
func (h *hookSide) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv == nil {
		return // closed, or none started: no hook was registered
	}
	h.srv.Close(2 * time.Second)
	h.srv = nil
	close(h.c)
	<-h.done
}

// terminal adds what came of the hooks to the terminal event.
func (h *hookSide) terminal(term *event.Terminal) {
	h.rmu.Lock()
	rep := h.report
	rep.Payloads = h.taken
	if len(h.rejected) > 0 {
		rep.Rejected = agent.IntMap(maps.Clone(h.rejected))
	}
	h.rmu.Unlock()
	switch {
	case len(rep.Registered) == 0:
		rep.Note = "no hook registered: codex runs a hook only once the user has trusted it, and none of lcwrap's was"
	case rep.Payloads == 0:
		rep.Note = "no hook payload arrived"
	}
	event.SetPtr(&term.Extra, KeyCodexHooks, &rep)
}

// hookWarning is the one line lcwrap says when codex will not run some of
// its hooks: why, the exact step, and what lcwrap sees meanwhile.
func hookWarning(exe, codexHome string, untrusted []HookEvent, fallback string) string {
	return fmt.Sprintf("codex runs a hook only once you have trusted it, and %d of the %d lcwrap would add are not trusted in %s, so lcwrap adds only the others: "+
		"to trust them, review what 'lcwrap hook codex --print-config' prints (codex's own trust entries for hooks that run %s) and add it to that file; "+
		"until then lcwrap sees this run %s",
		len(untrusted), len(HookEvents), shortPath(codexHome+"/config.toml"), HookCommand(exe), fallback)
}

func shortPath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// labels are the names of events.
func labels(evs []HookEvent) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.Name)
	}
	return slices.Clip(out)
}
