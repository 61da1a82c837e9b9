//go:build linux

package supervise

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
)

func init() {
	// supervise-restart CONFIG-JSON: an lcwrap stand-in making attempts
	// as a subreaper (see restartConfig); it exits with Run's exit code.
	helpers["supervise-restart"] = func(args []string) int {
		var rc restartConfig
		if err := json.Unmarshal([]byte(args[0]), &rc); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 125
		}
		return runAsLcwrap(rc.Events, Config{
			Argv: rc.Argv, ChildID: "sub", Subreaper: true,
			Restart: Restart{Policy: RestartAlways, MaxAttempts: rc.MaxAttempts},
		})
	}
}

type restartConfig struct {
	Argv        []string `json:"argv"`
	Events      string   `json:"events"`
	MaxAttempts int      `json:"maxAttempts"`
}

// attempts splits events by child id, in the order the children appear.
func attempts(evs []event.Event) [][]event.Event {
	var out [][]event.Event
	index := map[string]int{}
	for _, e := range evs {
		i, ok := index[e.ChildID]
		if !ok {
			i = len(out)
			index[e.ChildID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

// restartDetails returns the restart details of the diagnostics of one
// attempt.
func restartDetails(evs []event.Event) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if d, ok := e.DetailsMap()["restart"].(map[string]any); ok && e.Kind == event.KindDiagnostic {
			out = append(out, d)
		}
	}
	return out
}

// counterScript fails until it has run ok times before, then exits 0.
func counterScript(t *testing.T, ok int) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "count")
	return []string{"/bin/sh", "-c", fmt.Sprintf(`n=$(cat %[1]s 2>/dev/null || echo 0); echo $((n+1)) > %[1]s; [ "$n" -ge %[2]d ]`, f, ok)}
}

func TestRestartOnFailureStopsAtTheFirstSuccess(t *testing.T) {
	res, evs := run(t, Config{ChildID: "job", Lineage: event.Lineage{ParentChildID: "outer", RootChildID: "root"},
		Restart: Restart{Policy: RestartOnFailure}}, counterScript(t, 2)...)
	if res.State != event.StateCompleted || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	got := attempts(evs)
	if len(got) != 3 {
		t.Fatalf("%d attempts", len(got))
	}
	for i, a := range got {
		wantID := "job"
		if i > 0 {
			wantID = fmt.Sprintf("job-a%d", i)
		}
		for _, e := range a {
			if e.ChildID != wantID || e.Lineage != (event.Lineage{RootChildID: "root", ParentChildID: "outer", Attempt: int64(i)}) {
				t.Fatalf("attempt %d: child %s lineage %+v", i, e.ChildID, e.Lineage)
			}
		}
		want := "created starting running failed diagnostic"
		if i == 2 {
			want = "created starting running completed"
		}
		if s := states(a); s != want {
			t.Fatalf("attempt %d: %s", i, s)
		}
		if i < 2 {
			d := restartDetails(a)[0]
			if d["policy"] != "on-failure" || d["nextAttempt"] != float64(i+1) || d["nextChildId"] != fmt.Sprintf("job-a%d", i+1) || d["delayMs"] != float64(0) {
				t.Fatalf("attempt %d: restart %v", i, d)
			}
		}
	}
}

func TestRestartAlwaysStopsAtMaxAttempts(t *testing.T) {
	res, evs := run(t, Config{ChildID: "w", Lineage: event.Lineage{Attempt: 4}, Restart: Restart{Policy: RestartAlways, MaxAttempts: 3}},
		"/bin/sh", "-c", "exit 3")
	if res.State != event.StateFailed || res.ExitCode != 3 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	got := attempts(evs)
	if len(got) != 3 || got[1][0].ChildID != "w-a5" || got[2][0].Lineage.Attempt != 6 || got[2][0].Lineage.RootChildID != "w" {
		t.Fatalf("%d attempts: %+v", len(got), got[len(got)-1][0])
	}
	last := restartDetails(got[2])
	if len(last) != 1 || last[0]["stopped"] != "max-attempts" || last[0]["maxAttempts"] != float64(3) {
		t.Fatalf("last attempt's restart diagnostics %v", last)
	}
	// always restarts after a completed attempt too.
	_, evs = run(t, Config{Restart: Restart{Policy: RestartAlways, MaxAttempts: 2}}, "/bin/true")
	if n := len(attempts(evs)); n != 2 {
		t.Fatalf("%d attempts of /bin/true", n)
	}
}

func TestRestartCancelDuringBackoff(t *testing.T) {
	p := startRun(t, Config{Argv: []string{"/bin/sh", "-c", "exit 1"}, Restart: Restart{Policy: RestartOnFailure, Backoff: time.Hour}})
	p.waitEvent("the restart diagnostic", func(e event.Event) bool { return len(restartDetails([]event.Event{e})) > 0 })
	p.sigs <- syscall.SIGTERM
	res := p.result()
	if res.State != event.StateFailed || res.ExitCode != 1 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	got := attempts(p.sink.events(t))
	if len(got) != 1 {
		t.Fatalf("%d attempts", len(got))
	}
	d := restartDetails(got[0])
	if len(d) != 2 || d[0]["nextAttempt"] != float64(1) || d[0]["delayMs"].(float64) < float64(time.Hour.Milliseconds()/2) ||
		d[1]["stopped"] != "cancel-request" || d[1]["signal"] != "SIGTERM" || !event.ValidTimestamp(d[1]["at"].(string)) {
		t.Fatalf("restart diagnostics %v", d)
	}
}

func TestRestartCancelDuringAnAttemptStopsTheLoop(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("trap-term"), KillAfter: time.Minute, Restart: Restart{Policy: RestartAlways}})
	p.expect("ready")
	p.sigs <- syscall.SIGTERM
	if res := p.result(); res.State != event.StateCancelled || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	got := attempts(p.sink.events(t))
	if d := restartDetails(got[0]); len(got) != 1 || len(d) != 1 || d[0]["stopped"] != "cancel-request" {
		t.Fatalf("%d attempts, restart diagnostics %v", len(got), d)
	}
}

func TestRestartStopsOnSIGINTAndStartErrors(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		stopped string
	}{
		{[]string{"/bin/sh", "-c", "kill -INT $$"}, "interrupted"},
		{[]string{"/no/such/command"}, "start-error"},
	} {
		_, evs := run(t, Config{Restart: Restart{Policy: RestartAlways}}, tc.argv...)
		got := attempts(evs)
		if d := restartDetails(got[0]); len(got) != 1 || len(d) != 1 || d[0]["stopped"] != tc.stopped {
			t.Fatalf("%v: %d attempts, restart diagnostics %v", tc.argv, len(got), d)
		}
	}
}

func TestRestartTimeoutEndsOnlyTheAttempt(t *testing.T) {
	res, evs := run(t, Config{Timeout: 20 * time.Millisecond, KillAfter: time.Minute,
		Restart: Restart{Policy: RestartOnFailure, MaxAttempts: 2}}, "sleep", "1000")
	if res.State != event.StateCancelled || res.ExitCode != ExitTimeout {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	if n := len(attempts(evs)); n != 2 {
		t.Fatalf("%d attempts", n)
	}
}

func TestRestartWithNotifySharesTheSocket(t *testing.T) {
	res, evs := run(t, Config{Notify: true, ReadyNotify: true, Restart: Restart{Policy: RestartAlways, MaxAttempts: 2}},
		helperArgv("notify-now", "READY=1")...)
	if res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
	for i, a := range attempts(evs) {
		if s := states(a); !strings.HasPrefix(s, "created starting running completed") {
			t.Fatalf("attempt %d: %s", i, s)
		}
	}
}

func TestRestartKeepsInterposing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStream("stdout", w)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	e := emit.New(emit.Options{}, sink, st.Sink())
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	res, err := Run(context.Background(), Config{
		Argv:  []string{"/bin/sh", "-c", `printf "out $LCWRAP_CHILD_ID"; exit 1`},
		Stdin: devnull, Stdout: st.ChildFile(), Stderr: os.Stderr, Streams: []*Stream{st},
		Emitter: e, ChildID: "s", Signals: &Signals{c: make(chan os.Signal, 1)},
		Restart: Restart{Policy: RestartAlways, MaxAttempts: 3},
	})
	if err != nil || res.ExitCode != 1 {
		t.Fatalf("%v, exit %d", err, res.ExitCode)
	}
	st.Close()
	w.Close()
	var out bytes.Buffer
	out.ReadFrom(r)
	var children []string
	s := bufio.NewScanner(&out)
	for s.Scan() {
		if l := s.Text(); strings.HasPrefix(l, "out ") {
			children = append(children, l)
		} else if _, _, err := event.Parse([]byte(l)); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if strings.Join(children, ",") != "out s,out s-a1,out s-a2" {
		t.Fatalf("the children's output: %q in\n%s", children, out.String())
	}
}

func TestRestartAsSubreaperWithOrphans(t *testing.T) {
	// Every attempt leaves an orphan behind (it lives until stdin closes),
	// so the wait4(-1) loop outlives each attempt: the next attempt's
	// status must still reach its supervisor.
	events := filepath.Join(t.TempDir(), "events.jsonl")
	orphan := strings.Join(helperArgv("wait-eof"), " ")
	cfg, _ := json.Marshal(restartConfig{Events: events, MaxAttempts: 4,
		Argv: []string{"/bin/sh", "-c", "(" + orphan + " >/dev/null &); exit 1"}})
	c := helperCommand("supervise-restart", string(cfg))
	stdin, _ := c.StdinPipe()
	c.Stderr = os.Stderr
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	defer stdin.Close()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("lcwrap stand-in: %v", err)
		}
	case <-time.After(waitLimit):
		c.Process.Kill()
		t.Fatal("an attempt's status was lost: the run never ended")
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	got := attempts(parseLines(t, strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")))
	if len(got) != 4 {
		t.Fatalf("%d attempts", len(got))
	}
}

func TestRestartConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{Restart: Restart{Policy: "sometimes"}}, ErrRestartPolicy},
		{Config{Restart: Restart{Policy: RestartAlways, Backoff: -1}}, ErrNegative},
		{Config{Restart: Restart{Policy: RestartAlways, MaxAttempts: -1}}, ErrNegative},
		{Config{ReadyNotify: true}, ErrNeedsNotify},
		{Config{Watchdog: time.Second}, ErrNeedsNotify},
		{Config{Notify: true, ReadyTimeout: time.Second}, ErrNeedsNotify},
	} {
		sink := &memSink{}
		tc.cfg.Argv, tc.cfg.Emitter, tc.cfg.Signals = []string{"/bin/true"}, emit.New(emit.Options{}, sink), &Signals{}
		if _, err := Run(context.Background(), tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.cfg.Restart, err, tc.want)
		}
		if len(sink.lines) != 0 {
			t.Errorf("events written for an unusable config: %q", sink.lines)
		}
	}
	for in, want := range map[string]RestartPolicy{"no": RestartNo, "on-failure": RestartOnFailure, "always": RestartAlways} {
		if got, err := ParseRestartPolicy(in); got != want || err != nil {
			t.Errorf("ParseRestartPolicy(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseRestartPolicy("yes"); err == nil {
		t.Error("ParseRestartPolicy accepted yes")
	}
}
