package claudecode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
)

// registryPoll is how often an adopted claude's pid registry is read
// again where its directory cannot be watched (no inotify).
const registryPoll = 500 * time.Millisecond

// Adopt implements agent.Driver. A process (agent.PIDTarget) is followed
// through Claude Code's own pid registry, when a file of it proves which
// session that process runs: read again whenever its directory says it
// changed (inotify; every registryPoll without it), each change of status
// recorded. Its outcomes: the Adoption; agent.ErrNotAgent for a
// process not named claude (unless the user named the agent); an error
// saying why there is nothing to follow (its start time is not in clock
// ticks, no registry file proves its session, or a hook the user
// installed records that session already). Every session the registry
// lists (agent.RegistryTarget) is followed through `claude agents --json`,
// run again only when the registry's directories change. A server
// (agent.ServerTarget) is an *agent.UnsupportedError.
func (Driver) Adopt(ctx context.Context, req agent.AdoptRequest) (agent.Adoption, error) {
	if rt, ok := req.Target.(agent.RegistryTarget); ok {
		f, err := adoptRegistry(ctx, req, rt, configDir(), claudeAgents)
		if err != nil {
			return nil, err // never a nil *fleet in the interface
		}
		return f, nil
	}
	t, ok := req.Target.(agent.PIDTarget)
	if !ok {
		return nil, agent.NotSupported(Source, req.Target)
	}
	if !t.Named && t.Name != "claude" {
		return nil, agent.ErrNotAgent
	}
	id := t.Identity
	if id.Clock != "" {
		return nil, errors.New("its start time is not in clock ticks here, so Claude Code's pid registry cannot be matched; observing its presence only")
	}
	reg, err := FindRegistry(id.PID, id.StartTime, RegistryDirs(id.PID))
	if err != nil {
		return nil, fmt.Errorf("claude, but no file of its own proves which session it runs (%v); observing its presence only", err)
	}
	if req.Journal != "" {
		state := filepath.Join(agent.StateDir(req.Journal, Source), reg.SessionID+".json")
		if _, err := os.Stat(state); err == nil {
			return nil, fmt.Errorf("session %s is recorded by a hook you installed; not recorded twice", reg.SessionID)
		}
	}
	tr := t.Tracker(req.Emitter, Source, ChildPrefix, RegistryLimits)
	tr.Apply(agent.Observe(RegistryObservations(reg, true)...))
	req.Sayf("Claude Code's pid registry (%s) names session %s: following it", reg.Path, reg.SessionID)
	a := &adopted{tracker: tr, reg: reg, childID: t.Child.ID(), stop: make(chan struct{}), done: make(chan struct{})}
	go a.follow()
	return a, nil
}

// adopted follows an adopted claude's pid registry.
type adopted struct {
	tracker *agent.Tracker
	reg     *Registry
	childID string
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// follow reads the registry again each time its directory says the file
// changed (inotify; every registryPoll where there is none), until
// stopped, recording status changes.
func (a *adopted) follow() {
	defer close(a.done)
	w := watchFile(a.reg.Path)
	var tick <-chan time.Time
	if w == nil {
		t := time.NewTicker(registryPoll)
		defer t.Stop()
		tick = t.C
	} else {
		defer w.close()
	}
	last := [2]string{a.reg.Status, a.reg.WaitingFor}
	for {
		// Read first: a change between the adoption's read and the
		// watch's start is not missed.
		r, err := ReadRegistry(a.reg.Path)
		if err == nil && r.PID == a.reg.PID && r.ProcStart == a.reg.ProcStart && r.SessionID == a.reg.SessionID && [2]string{r.Status, r.WaitingFor} != last {
			last = [2]string{r.Status, r.WaitingFor}
			a.tracker.Apply(agent.Observe(RegistryObservations(r, false)...))
		}
		// (gone — the process is ending — or another's: nothing to follow)
		if w != nil {
			if !w.wait(a.stop) {
				return
			}
			continue
		}
		select {
		case <-a.stop:
			return
		case <-tick:
		}
	}
}

// Done implements agent.Adoption: the caller watches the process.
func (a *adopted) Done() <-chan struct{} { return nil }

// End implements agent.Adoption: with the process gone, the session still
// open becomes lost, once.
func (a *adopted) End(gone bool) {
	a.once.Do(func() {
		close(a.stop)
		<-a.done
		if gone {
			a.tracker.End(agent.ProcessEnd{ChildID: a.childID, Adopted: true})
		}
	})
}
