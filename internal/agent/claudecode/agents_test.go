package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/eventcap"
)

// What claude 2.1.332 printed and kept for a finished background session
// (its name and detail — the agent's text — shortened).
const (
	agentsListed = `[{"pid":1256,"id":"55318979","cwd":"/tmp/p","kind":"background","startedAt":1796151412998,"sessionId":"55318979-7083-4107-b03e-3bd1086b7695","name":"ok","status":"idle","state":"working"}]`
	jobState     = `{"state":"working","detail":"…","tempo":"idle","inFlight":{"tasks":0},"tokens":12,"output":null,"sessionId":"55318979-7083-4107-b03e-3bd1086b7695","daemonShort":"55318979","firstTerminalAt":null,"backend":"daemon","name":"ok"}`
)

func TestParseAgentsAndJobState(t *testing.T) {
	es, err := ParseAgents([]byte(agentsListed))
	if err != nil || len(es) != 1 || es[0].PID != 1256 || es[0].Status != "idle" || es[0].State != "working" || es[0].ID != "55318979" {
		t.Fatalf("%+v %v", es, err)
	}
	js, err := ReadJobState([]byte(jobState))
	if err != nil || js.State != "working" || js.Tempo != "idle" || js.SessionID != es[0].SessionID {
		t.Fatalf("%+v %v", js, err)
	}
	for _, bad := range []string{``, `{}`, `[1]`, "[\xff]"} {
		if _, err := ParseAgents([]byte(bad)); err == nil && bad != `[1]` {
			t.Errorf("ParseAgents(%q) read it", bad)
		}
	}
	if _, err := ReadJobState([]byte(`[]`)); err == nil {
		t.Error("ReadJobState read an array")
	}
}

func FuzzReadJobState(f *testing.F) {
	f.Add([]byte(jobState))
	f.Add([]byte(`{"state":"stopped","tempo":"idle","firstTerminalAt":"2026-12-01T18:57:09.472Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		js, err := ReadJobState(b)
		if err != nil && js != (JobState{}) {
			t.Fatal("an unreadable state gave fields")
		}
		if len([]rune(js.State)) > 33 || len([]rune(js.Tempo)) > 33 {
			t.Fatalf("%+v", js)
		}
	})
}

func FuzzParseAgents(f *testing.F) {
	f.Add([]byte(agentsListed))
	f.Add([]byte(`[{"pid":7,"id":"x","sessionId":"s","status":"waiting","state":"blocked","waitingFor":"sandbox request"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ParseAgents(b)
		for _, e := range es {
			if err != nil || e.SessionID == "" {
				t.Fatalf("%+v %v", e, err)
			}
			for _, o := range observeEntry(e, nil) { // never panics
				if o.Kind == agent.Waiting && event.ParseWaitReason(string(o.WaitingFor)) != o.WaitingFor {
					t.Fatalf("a reason outside the vocabulary: %q", o.WaitingFor)
				}
				if o.Kind == agent.Waiting && e.WaitingFor != "" && !strings.Contains(o.Native, "waitingFor ") {
					t.Fatalf("the raw waitingFor is not in the evidence: %q", o.Native)
				}
			}
		}
	})
}

// TestWaitingFor: a listed session's waitingFor (the words claude 2.1.332
// writes, and others) is read into the one vocabulary by keyword where
// the words say it, else other; the raw words stay in the evidence. The
// pid registry's waiting status reads the same way.
func TestWaitingFor(t *testing.T) {
	for _, tc := range []struct {
		status, waitingFor string
		want               event.WaitReason
	}{
		{"idle", "", event.WaitUser},
		{"waiting", "", event.WaitOther}, // it says it waits, naming nothing
		{"waiting", "permission prompt", event.WaitPermission},
		{"waiting", "input needed", event.WaitInput},
		{"waiting", "dialog open", event.WaitDialog},
		{"waiting", "sandbox request", event.WaitOther},
		{"waiting", "worker request", event.WaitOther},
		{"waiting", "goal proposal", event.WaitOther},
		{"waiting", "Approval required", event.WaitPermission},
		{"waiting", "a question for you", event.WaitInput},
		{"waiting", "login", event.WaitDialog},
		{"waiting", "trust this folder?", event.WaitDialog},
	} {
		e := AgentEntry{PID: 1, ID: "a", SessionID: "s", Status: tc.status, State: "blocked", WaitingFor: tc.waitingFor}
		obs := observeEntry(e, &AgentEntry{SessionID: "s", Status: "busy", State: "working"})
		if len(obs) != 1 || obs[0].Kind != agent.Waiting || obs[0].WaitingFor != tc.want {
			t.Errorf("%s %q: %+v (want waiting for %s)", tc.status, tc.waitingFor, obs, tc.want)
			continue
		}
		if tc.waitingFor != "" && !strings.Contains(obs[0].Native, `waitingFor "`+tc.waitingFor+`"`) {
			t.Errorf("%q: the evidence %q does not keep the raw words", tc.waitingFor, obs[0].Native)
		}
		r := &Registry{PID: 1, SessionID: "s", Status: tc.status, WaitingFor: tc.waitingFor, Path: "/x/sessions/1.json"}
		ro := RegistryObservations(r, false)
		if len(ro) != 1 || ro[0].Kind != agent.Waiting || ro[0].WaitingFor != tc.want || tc.waitingFor != "" && !strings.Contains(ro[0].Native, `waitingFor "`+tc.waitingFor+`"`) {
			t.Errorf("registry %s %q: %+v (want waiting for %s)", tc.status, tc.waitingFor, ro, tc.want)
		}
	}
	// The tracker's known inconsistency the other way: working during a
	// permission prompt. Both kept; no state chosen.
	obs := observeEntry(AgentEntry{SessionID: "s", Status: "waiting", State: "working", WaitingFor: "permission prompt"}, &AgentEntry{SessionID: "s", Status: "busy", State: "working"})
	if len(obs) != 1 || obs[0].Kind != agent.Note || obs[0].Facts.Status != "waiting" || obs[0].Facts.State != "working" || !strings.Contains(obs[0].Native, `waitingFor "permission prompt"`) {
		t.Fatalf("waiting with working: %+v", obs)
	}
	// Only the waitingFor changed: a new observation.
	if obs := observeEntry(AgentEntry{SessionID: "s", Status: "waiting", State: "blocked", WaitingFor: "dialog open"},
		&AgentEntry{SessionID: "s", Status: "waiting", State: "blocked", WaitingFor: "permission prompt"}); len(obs) != 1 || obs[0].WaitingFor != event.WaitDialog {
		t.Fatalf("a new waitingFor: %+v", obs)
	}
}

// fakeList is a session list the test sets.
type fakeList struct {
	mu  sync.Mutex
	out string
	n   int
}

func (l *fakeList) set(s string) { l.mu.Lock(); l.out = s; l.mu.Unlock() }
func (l *fakeList) list(context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return []byte(l.out), nil
}

func entry(sid, id string, pid int, status, state string) string {
	b, _ := json.Marshal(AgentEntry{PID: pid, ID: id, SessionID: sid, Kind: "background", Status: status, State: state})
	return string(b)
}

// TestFleet: every listed session is a child; status and state decide a
// state only when they agree (a disagreement is activity with both); a
// session no longer listed ends as its job state reports it (stopped:
// cancelled, the agent's report), else lost; the list is read again when
// the registry's directories change.
func TestFleet(t *testing.T) {
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "sessions"), 0o700)
	dead := deadPID(t)
	l := &fakeList{}
	l.set("[" + entry("s-a", "aaaa", os.Getpid(), "busy", "working") + "," + entry("s-b", "bbbb", dead, "busy", "working") + "]")
	sink := &eventcap.Sink{}
	req := agent.AdoptRequest{Target: agent.RegistryTarget{}, Emitter: emit.New(emit.Options{Source: "lcwrap"}, sink)}
	f, err := adoptRegistry(context.Background(), req, agent.RegistryTarget{}, cfg, l.list)
	if err != nil {
		t.Fatal(err)
	}
	defer f.End(false)
	changed := func() { // what claude does to its registry on a change
		os.WriteFile(filepath.Join(cfg, "sessions", fmt.Sprintf("x%d.json", time.Now().UnixNano())), []byte("{}"), 0o600)
	}
	last := func(sid string) (event.Event, agent.AgentEvent) {
		var ev event.Event
		for _, e := range sink.Events() {
			d, _ := event.DecodeDetails[agent.AgentEvent](e.Details)
			if e.Kind == event.KindCreated && d.SessionID == sid {
				ev.ChildID = e.ChildID
			}
		}
		var lastEv event.Event
		var lastD agent.AgentEvent
		for _, e := range sink.Events() {
			if e.ChildID == ev.ChildID && ev.ChildID != "" && e.Kind != event.KindDiagnostic {
				lastEv = e
				lastD, _ = event.DecodeDetails[agent.AgentEvent](e.Details)
			}
		}
		return lastEv, lastD
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				for _, e := range sink.Events() {
					t.Logf("%s %s %s %s %s", e.ChildID, e.Kind, e.State, e.Activity, e.Details)
				}
				t.Fatalf("waited 10s for %s", what)
			}
		}
	}
	if ev, _ := last("s-a"); ev.State != event.StateRunning && ev.Kind != event.KindActivity {
		t.Fatalf("s-a first: %+v", ev)
	}
	// The registry's known inconsistency: working with an idle status.
	l.set("[" + entry("s-a", "aaaa", os.Getpid(), "idle", "working") + "," + entry("s-b", "bbbb", dead, "busy", "working") + "]")
	changed()
	until("the disagreement recorded", func() bool {
		ev, d := last("s-a")
		return ev.Kind == event.KindActivity && d.Reported != nil && d.Reported.Status == "idle" && d.Reported.State == "working"
	})
	l.set("[" + entry("s-a", "aaaa", os.Getpid(), "idle", "blocked") + "," + entry("s-b", "bbbb", dead, "busy", "working") + "]")
	changed()
	until("waiting for the user", func() bool {
		for _, e := range sink.Events() {
			d, _ := event.DecodeDetails[agent.AgentEvent](e.Details)
			if e.State == event.StateWaiting && d.WaitingFor == "user" {
				return true
			}
		}
		return false
	})
	// Both go: s-a's job state says stopped, s-b's process is gone.
	os.MkdirAll(filepath.Join(cfg, "jobs", "aaaa"), 0o700)
	os.WriteFile(filepath.Join(cfg, "jobs", "aaaa", "state.json"), []byte(`{"state":"stopped","tempo":"idle","sessionId":"s-a"}`), 0o600)
	l.set("[]")
	changed()
	until("both ended", func() bool {
		a, ad := last("s-a")
		b, bd := last("s-b")
		return a.State == event.StateCancelled && ad.Claim == agent.ClaimAgentReportedEnd && b.State == event.StateLost && bd.Claim == agent.ClaimAgentProcessEnded
	})
}

// deadPID is the pid of a process that has ended.
func deadPID(t *testing.T) int {
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}

// BenchmarkFleetIdle is an idle follower of 50 background sessions (50
// job directories, 50 pid registry files, nothing changing) inside the
// test process: its listings (none while nothing changes) and the
// process's CPU (getrusage) over each idle second, scaled to a minute,
// beside the same second with no follower. The test process wakes every
// second, so its CPU is mostly its own; the follower's figure, measured
// as a process of its own with a real background session, is
// bench/claudefleet's.
func BenchmarkFleetIdle(b *testing.B) {
	b.Run("no follower", func(b *testing.B) { idleCPU(b, nil) })
	b.Run("50 sessions", func(b *testing.B) {
		cfg := b.TempDir()
		var list []string
		for i := range 50 {
			id := fmt.Sprintf("job%05d", i)
			os.MkdirAll(filepath.Join(cfg, "jobs", id), 0o700)
			os.WriteFile(filepath.Join(cfg, "jobs", id, "state.json"), []byte(jobState), 0o600)
			os.MkdirAll(filepath.Join(cfg, "sessions"), 0o700)
			os.WriteFile(filepath.Join(cfg, "sessions", fmt.Sprintf("%d.json", 100000+i)), []byte("{}"), 0o600)
			list = append(list, entry(fmt.Sprintf("s-%d", i), id, os.Getpid(), "idle", "blocked"))
		}
		l := &fakeList{}
		l.set("[" + joinComma(list) + "]")
		req := agent.AdoptRequest{Target: agent.RegistryTarget{}, Emitter: emit.New(emit.Options{Source: "lcwrap"}, discard{})}
		f, err := adoptRegistry(context.Background(), req, agent.RegistryTarget{}, cfg, l.list)
		if err != nil {
			b.Fatal(err)
		}
		defer f.End(false)
		idleCPU(b, l)
	})
}

func idleCPU(b *testing.B, l *fakeList) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	listed := 0
	if l != nil {
		listed = l.n
	}
	start := cpu()
	for b.Loop() {
		time.Sleep(time.Second)
	}
	b.ReportMetric(float64((cpu()-start).Microseconds())/1000*60/float64(b.N), "cpu-ms/idle-min")
	if l != nil {
		b.ReportMetric(float64(l.n-listed), "listings")
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// TestFleetPIDReused: a session no longer listed whose pid now belongs to
// another process (its start time differs from the one read when the
// session was first listed) ended with its process; one whose process is
// the same is only no longer listed.
func TestFleetPIDReused(t *testing.T) {
	procs := &event.FakeProcTable{}
	procs.Set(4001, event.ProcInfo{PID: 4001, StartTime: 100, State: 'S'})
	procs.Set(4002, event.ProcInfo{PID: 4002, StartTime: 100, State: 'S'})
	sink := &eventcap.Sink{}
	tr := agent.New(agent.Config{Source: Source, Prefix: ChildPrefix, Limits: AgentsLimits,
		Emitter: emit.New(emit.Options{Source: Source}, sink), External: true, RunTag: agent.RunTag("")})
	f := &fleet{tracker: tr, cfgDir: t.TempDir(), seen: map[string]*AgentEntry{}, ids: map[string]event.Identity{}, procs: procs}
	var es []AgentEntry
	json.Unmarshal([]byte("["+entry("s-reused", "r", 4001, "busy", "working")+","+entry("s-same", "s", 4002, "busy", "working")+"]"), &es)
	f.apply(es)
	procs.Set(4001, event.ProcInfo{PID: 4001, StartTime: 999, State: 'S'}) // another process now
	f.apply(nil)
	claims := map[string]string{}
	for _, e := range sink.Events() {
		d, _ := event.DecodeDetails[agent.AgentEvent](e.Details)
		if e.Kind == event.KindTerminal {
			claims[e.ChildID] = d.Claim
		}
		if e.Kind == event.KindCreated {
			claims[d.SessionID] = e.ChildID
		}
	}
	if c := claims[claims["s-reused"]]; c != agent.ClaimAgentProcessEnded {
		t.Errorf("the session whose pid was reused ended with claim %q", c)
	}
	if c := claims[claims["s-same"]]; c != ClaimUnlisted {
		t.Errorf("the session whose process is still there ended with claim %q", c)
	}
}
