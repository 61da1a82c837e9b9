package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

// TestRegistryFollowedOnChange: an adopted claude's pid registry is read
// again when it changes — rewritten in place or replaced — and End stops
// the follower at once, with no poll in between.
func TestRegistryFollowedOnChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "123.json")
	waitingFor := ""
	write := func(status string, replace bool) {
		b, _ := json.Marshal(Registry{PID: 123, SessionID: "s1", ProcStart: "77", Status: status, WaitingFor: waitingFor})
		if replace {
			tmp := path + ".tmp"
			os.WriteFile(tmp, b, 0o600)
			os.Rename(tmp, path)
			return
		}
		os.WriteFile(path, b, 0o600)
	}
	write("idle", false)
	if w := watchFile(path); w == nil && runtime.GOOS == "linux" {
		t.Fatal("no inotify watch on the registry's directory: the follower would poll")
	} else if w != nil {
		w.close()
	}
	reg, err := ReadRegistry(path)
	if err != nil {
		t.Fatal(err)
	}
	sink := &eventcap.Sink{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Emitter: emit.New(emit.Options{Source: Source}, sink), External: true})
	tr.Apply(agent.Observe(RegistryObservations(reg, true)...))
	a := &adopted{tracker: tr, reg: reg, childID: "claude-1", stop: make(chan struct{}), done: make(chan struct{})}
	go a.follow()
	states := func() []event.State {
		var out []event.State
		for _, ev := range sink.Events() {
			if ev.Kind == event.KindStateChanged {
				out = append(out, ev.State)
			}
		}
		return out
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 10s for %s: %v", what, states())
			}
		}
	}
	last := func(s event.State) func() bool {
		return func() bool { st := states(); return len(st) > 0 && st[len(st)-1] == s }
	}
	until("waiting (idle)", last(event.StateWaiting))
	write("busy", false)
	until("running after the file was rewritten", last(event.StateRunning))
	write("idle", true)
	until("waiting after the file was replaced", last(event.StateWaiting))
	// A permission prompt, then a dialog: the status stays "waiting", its
	// waitingFor changes, and each is read into its reason (the second,
	// already waiting, as activity: a repeated state is never a
	// self-edge).
	reasons := func() []string {
		var out []string
		for _, ev := range sink.Events() {
			if d, _ := event.DecodeDetails[agent.AgentEvent](ev.Details); ev.State == event.StateWaiting && d.WaitingFor != "" {
				out = append(out, d.WaitingFor)
			}
		}
		return out
	}
	lastReason := func(r string) func() bool {
		return func() bool { rs := reasons(); return len(rs) > 0 && rs[len(rs)-1] == r }
	}
	write("busy", false)
	until("running", last(event.StateRunning))
	waitingFor = "permission prompt"
	write("waiting", false)
	until("waiting for permission", lastReason("permission"))
	waitingFor = "dialog open"
	write("waiting", false)
	until("waiting for a dialog (activity)", func() bool {
		evs := sink.Events()
		e := evs[len(evs)-1]
		return e.Kind == event.KindActivity && strings.HasPrefix(e.Activity, "waiting for dialog") && strings.Contains(string(e.Details), `waitingFor \"dialog open\"`)
	})
	ended := make(chan struct{})
	go func() { a.End(false); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("End did not stop the follower")
	}
}
