//go:build linux

package supervise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/exitcode"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// waitLimit bounds every wait in these tests; none is a timing claim.
const waitLimit = 30 * time.Second

// inproc is one Run in this process, with injected signals (the test
// runner itself never receives one).
type inproc struct {
	t     *testing.T
	sigs  chan os.Signal
	sink  *memSink
	stdin *os.File    // the test's end of the child's stdin
	lines chan string // the child's stdout, line by line
	done  chan Result
	res   *Result
}

func startRun(t *testing.T, cfg Config) *inproc {
	t.Helper()
	return startRunContext(t, context.Background(), cfg)
}

func startRunContext(t *testing.T, ctx context.Context, cfg Config) *inproc {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &inproc{t: t, sigs: make(chan os.Signal, 16), sink: &memSink{}, stdin: inW, lines: make(chan string, 256), done: make(chan Result, 1)}
	cfg.Stdin, cfg.Stdout = inR, outW
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	cfg.Emitter = emit.New(emit.Options{}, p.sink)
	if cfg.Signals == nil {
		cfg.Signals = &Signals{}
	}
	cfg.Signals.c = p.sigs
	if cfg.ChildID == "" {
		cfg.ChildID = "test-child"
	}
	go func() {
		defer outR.Close()
		s := bufio.NewScanner(outR)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	go func() {
		res, err := Run(ctx, cfg)
		inR.Close()
		outW.Close()
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		p.done <- res
	}()
	t.Cleanup(func() {
		inW.Close()
		p.result()
	})
	return p
}

// expect waits for a stdout line starting with prefix and returns it.
func (p *inproc) expect(prefix string) string {
	p.t.Helper()
	return expectLine(p.t, p.lines, prefix, func(l string) (string, bool) {
		return l, strings.HasPrefix(l, prefix)
	})
}

// from matches a line holding s, and gives it from s on.
func from(s string) func(string) (string, bool) {
	return func(l string) (string, bool) {
		i := strings.Index(l, s)
		return l[max(i, 0):], i >= 0
	}
}

// expectLine reads lines until match accepts one and returns what match
// made of it; it fails the test when the lines end first or after
// waitLimit, saying what was seen.
func expectLine(t *testing.T, lines <-chan string, what string, match func(string) (string, bool)) string {
	t.Helper()
	deadline := time.After(waitLimit)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before a line with %q; saw %q", what, seen)
			}
			seen = append(seen, l)
			if got, ok := match(l); ok {
				return got
			}
		case <-deadline:
			t.Fatalf("no line with %q in time; saw %q", what, seen)
		}
	}
}

func (p *inproc) send(line string) {
	p.t.Helper()
	if _, err := p.stdin.WriteString(line + "\n"); err != nil {
		p.t.Fatal(err)
	}
}

// result waits for Run to return.
func (p *inproc) result() Result {
	p.t.Helper()
	if p.res != nil {
		return *p.res
	}
	select {
	case r := <-p.done:
		p.res = &r
		return r
	case <-time.After(waitLimit):
		p.t.Fatal("Run did not return")
	}
	return Result{}
}

// run runs argv to the end with cfg and returns its result and events.
func run(t *testing.T, cfg Config, argv ...string) (Result, []event.Event) {
	t.Helper()
	cfg.Argv = argv
	p := startRun(t, cfg)
	p.stdin.Close()
	res := p.result()
	return res, p.sink.events(t)
}

func states(evs []event.Event) string {
	var s []string
	for _, e := range evs {
		if e.State != "" {
			s = append(s, string(e.State))
		} else {
			s = append(s, string(e.Kind))
		}
	}
	return strings.Join(s, " ")
}

func terminalDetails(t *testing.T, evs []event.Event) map[string]any {
	t.Helper()
	last := evs[len(evs)-1]
	if last.Kind != event.KindTerminal {
		t.Fatalf("last event is %s, not terminal: %s", last.Kind, states(evs))
	}
	d := last.DetailsMap()
	if d["claim"] != "process-exit-status-only" {
		t.Fatalf("terminal details without the claim: %v", d)
	}
	return d
}

func TestAllExitCodesPassThrough(t *testing.T) {
	// Four loops side by side: most of the time is process start-up.
	for part := 0; part < 4; part++ {
		t.Run(strconv.Itoa(part), func(t *testing.T) {
			t.Parallel()
			for code := part; code < 256; code += 4 {
				res, evs := run(t, Config{}, helperArgv("exit", strconv.Itoa(code))...)
				want := event.StateFailed
				if code == 0 {
					want = event.StateCompleted
				}
				if res.ExitCode != code || res.State != want {
					t.Fatalf("exit %d: lcwrap exit %d, state %s", code, res.ExitCode, res.State)
				}
				if got := states(evs); got != "created starting running "+string(want) {
					t.Fatalf("exit %d: events %s", code, got)
				}
				if d := terminalDetails(t, evs); d["exit"].(map[string]any)["code"] != float64(code) {
					t.Fatalf("exit %d: details %v", code, d)
				}
			}
		})
	}
}

func TestSuccessExitCodesDecideStateNotExitCode(t *testing.T) {
	for _, tc := range []struct {
		code int
		want event.State
	}{{0, event.StateCompleted}, {3, event.StateCompleted}, {1, event.StateFailed}} {
		res, _ := run(t, Config{SuccessCodes: []int{0, 3}}, helperArgv("exit", strconv.Itoa(tc.code))...)
		if res.State != tc.want || res.ExitCode != tc.code {
			t.Errorf("exit %d: %s with exit code %d", tc.code, res.State, res.ExitCode)
		}
	}
}

func TestSignalDeaths(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGKILL, syscall.SIGSEGV} {
		res, evs := run(t, Config{}, "/bin/sh", "-c", fmt.Sprintf("kill -%d $$", int(sig)))
		if res.State != event.StateFailed || res.ExitCode != 128+int(sig) {
			t.Errorf("%v: %s, exit %d", sig, res.State, res.ExitCode)
		}
		d := terminalDetails(t, evs)
		exit := d["exit"].(map[string]any)
		if exit["signal"] != signalName(sig) || exit["signalNumber"] != float64(sig) || d["cancel"] != nil {
			t.Errorf("%v: details %v", sig, d)
		}
		if _, ok := exit["coreDumped"].(bool); !ok {
			t.Errorf("%v: no coreDumped in %v", sig, exit)
		}
	}
}

// Started with SIGHUP ignored (nohup, some CI agents), the tests still
// see each signal death: this test binary, run again under ignore-exec,
// resets what it inherited as the lcwrap binary does.
func TestSignalDeathsWithHUPIgnored(t *testing.T) {
	if signal.Ignored(syscall.SIGHUP) {
		t.Skip("SIGHUP is already ignored: TestSignalDeaths itself is this test")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := helperCommand("ignore-exec", strconv.Itoa(int(syscall.SIGHUP)), self, "-test.run=^TestSignalDeaths$", "-test.count=1", "-test.v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSignalDeaths") {
		t.Fatalf("TestSignalDeaths with SIGHUP ignored: %v\n%s", err, out)
	}
}

func TestCommandsThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		argv string
		code int
	}{
		{"not in PATH", "lcwrap-no-such-command-x", 127},
		{"no such file", filepath.Join(dir, "missing"), 127},
		{"missing interpreter", write("interp", "#!/no/such/interpreter\n", 0o755), 127},
		{"not executable", write("plain", "echo hi\n", 0o644), 126},
		{"a directory", dir, 126},
		{"not a program", write("garbage", "\x00\x01\x02 not an executable", 0o755), 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, evs := run(t, Config{}, tc.argv, "--token", "sk-abcdefghijklmnopqrstuv")
			if res.ExitCode != tc.code || res.State != event.StateFailed || res.StartErr == nil {
				t.Fatalf("exit %d, state %s, err %v", res.ExitCode, res.State, res.StartErr)
			}
			// No process started: created goes straight to failed.
			if got := states(evs); got != "created failed" {
				t.Fatalf("events %s", got)
			}
			d := terminalDetails(t, evs)
			if d["exit"].(map[string]any)["code"] != float64(tc.code) || d["error"] == "" {
				t.Fatalf("details %v", d)
			}
		})
	}
}

func TestEventDetails(t *testing.T) {
	secret := "sk-abcdefghijklmnopqrstuvwxyz0123"
	argv := append(helperArgv("exit", "0"), "--api-key", "hunter22", "--token="+secret)
	_, evs := run(t, Config{Heartbeat: 5 * time.Second, ChildID: "c1", Lineage: event.Lineage{ParentChildID: "p0", RootChildID: "r0", Attempt: 2}}, argv...)
	if got := states(evs); got != "created starting running completed" {
		t.Fatalf("events %s", got)
	}
	for _, e := range evs {
		line, _ := e.Marshal()
		for _, s := range []string{secret, "hunter22"} {
			if strings.Contains(string(line), s) {
				t.Fatalf("secret %q in %s", s, line)
			}
		}
		if e.Capabilities != event.Launched(true).Set || e.ChildID != "c1" {
			t.Fatalf("identity or capabilities: %s", line)
		}
		if e.Lineage != (event.Lineage{RootChildID: "r0", ParentChildID: "p0", Attempt: 2}) {
			t.Fatalf("lineage %+v", e.Lineage)
		}
	}
	created := evs[0].DetailsMap()
	wrapper := created["wrapper"].(map[string]any)
	if created["heartbeatIntervalMs"] != float64(5000) || created["profile"] != "launched" ||
		wrapper["pid"] != float64(os.Getpid()) || wrapper["startTime"] == float64(0) || wrapper["host"] != event.Host() {
		t.Fatalf("created details %v", created)
	}
	if cmd := created["command"].([]any); len(cmd) != len(argv) || cmd[len(cmd)-2] != "[REDACTED]" {
		t.Fatalf("command %v", cmd)
	}
	for _, e := range evs[1:3] {
		child := e.DetailsMap()["child"].(map[string]any)
		if child["pid"] == float64(0) || child["startTime"] == float64(0) {
			t.Fatalf("%s details %v", e.State, child)
		}
	}
}

func TestNoHeartbeatMeansUnknown(t *testing.T) {
	_, evs := run(t, Config{}, helperArgv("exit", "0")...)
	for _, e := range evs {
		if e.Capabilities.Heartbeat != event.Unknown {
			t.Fatalf("heartbeat capability %s without heartbeats", e.Capabilities.Heartbeat)
		}
	}
	d := evs[0].DetailsMap()
	if d["heartbeatIntervalMs"] != float64(0) || d["profile"] != "launched-no-heartbeat" {
		t.Fatalf("created details %v", d)
	}
}

func TestHeartbeats(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("wait-eof"), Heartbeat: 5 * time.Millisecond})
	p.expect("ready")
	testtool.Eventually(t, "two heartbeats", func() bool {
		n := 0
		for _, e := range p.sink.events(t) {
			if e.Kind == event.KindHeartbeat {
				n++
				if e.State != "" || e.Details != nil {
					t.Fatalf("heartbeat with state or details: %+v", e)
				}
			}
		}
		return n >= 2
	})
	p.stdin.Close()
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
}

func TestInstantExitsKeepTheWholeSequence(t *testing.T) {
	for i := 0; i < 20; i++ {
		_, evs := run(t, Config{}, "/bin/true")
		if got := states(evs); got != "created starting running completed" {
			t.Fatalf("run %d: %s", i, got)
		}
		for j, e := range evs {
			if n, _ := e.Seq(); n != int64(j+1) {
				t.Fatalf("run %d: sequence %d at %d", i, n, j)
			}
		}
	}
}

func TestLineageEnvironment(t *testing.T) {
	p := startRun(t, Config{
		Argv:     helperArgv("env", EnvChildID, EnvRootChildID, "LCWRAP_JOURNAL", "EXTRA"),
		ChildID:  "build-7",
		Lineage:  event.Lineage{RootChildID: "root-1"},
		ExtraEnv: []string{"LCWRAP_JOURNAL=/tmp/j.jsonl", "EXTRA=x"},
	})
	for _, want := range []string{EnvChildID + "=build-7", EnvRootChildID + "=root-1", "LCWRAP_JOURNAL=/tmp/j.jsonl", "EXTRA=x"} {
		if got := p.expect(strings.SplitN(want, "=", 2)[0] + "="); got != want {
			t.Fatalf("child sees %q, want %q", got, want)
		}
	}
}

func TestCancelTrappedAndExit0IsCancelled(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("trap-term"), KillAfter: time.Minute})
	p.expect("ready")
	p.sigs <- syscall.SIGTERM
	res := p.result()
	if res.State != event.StateCancelled || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	d := terminalDetails(t, p.sink.events(t))
	cancel := d["cancel"].(map[string]any)
	if cancel["signal"] != "SIGTERM" || cancel["by"] != "signal" || !event.ValidTimestamp(cancel["at"].(string)) {
		t.Fatalf("cancel %v", cancel)
	}
	if d["exit"].(map[string]any)["code"] != float64(0) {
		t.Fatalf("exit %v", d["exit"])
	}
}

func TestTermIgnoringChildIsKilledAfterKillAfter(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("ignore-term"), KillAfter: 50 * time.Millisecond})
	p.expect("ready")
	p.sigs <- syscall.SIGTERM
	res := p.result()
	if res.State != event.StateCancelled || res.ExitCode != 128+9 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	d := terminalDetails(t, p.sink.events(t))
	if d["exit"].(map[string]any)["signal"] != "SIGKILL" || d["cancel"].(map[string]any)["signal"] != "SIGTERM" {
		t.Fatalf("details %v", d)
	}
}

func TestTimeout(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("wait-eof"), Timeout: 50 * time.Millisecond, KillAfter: time.Minute})
	res := p.result()
	if res.State != event.StateCancelled || res.ExitCode != ExitTimeout {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	d := terminalDetails(t, p.sink.events(t))
	if d["cancel"].(map[string]any)["by"] != "timeout" || d["exit"].(map[string]any)["signal"] != "SIGTERM" {
		t.Fatalf("details %v", d)
	}
}

func TestEverySignalForwardedOnce(t *testing.T) {
	p := startRun(t, Config{Argv: helperArgv("signals", "SIGUSR1", "SIGUSR2", "SIGQUIT", "SIGINT"), KillAfter: time.Minute})
	p.expect("ready")
	for i := 1; i <= 3; i++ {
		p.sigs <- syscall.SIGUSR1
		p.expect(fmt.Sprintf("got SIGUSR1 %d", i))
	}
	p.sigs <- syscall.SIGUSR2
	p.expect("got SIGUSR2 1")
	p.sigs <- syscall.SIGQUIT
	p.expect("got SIGQUIT 1")
	p.sigs <- syscall.SIGINT
	p.expect("got SIGINT 1")
	p.send("done")
	for _, want := range []string{"total SIGUSR1 3", "total SIGUSR2 1", "total SIGQUIT 1", "total SIGINT 1"} {
		if got := p.expect("total"); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	}
	// INT was a cancel request; the others were not.
	if res := p.result(); res.State != event.StateCancelled || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	if c := terminalDetails(t, p.sink.events(t))["cancel"].(map[string]any); c["signal"] != "SIGINT" {
		t.Fatalf("cancel %v", c)
	}
}

func TestIgnoredCancelSignalIsDropped(t *testing.T) {
	// lcwrap inherited SIGHUP as ignored: it must not pass one on.
	ignored := &Signals{ignored: map[syscall.Signal]bool{syscall.SIGHUP: true}}
	p := startRun(t, Config{Argv: helperArgv("signals", "SIGHUP"), Signals: ignored})
	p.expect("ready")
	p.sigs <- syscall.SIGHUP
	p.send("done")
	if got := p.expect("total"); got != "total SIGHUP 0" {
		t.Fatalf("%q", got)
	}
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
}

// spawnLeftover starts a child that leaves a grandchild (helper args) in
// its process group and exits 0; it returns the run and the grandchild.
func spawnLeftover(t *testing.T, cfg Config, args ...string) (*inproc, int) {
	t.Helper()
	cfg.Argv = helperArgv(append([]string{"spawn"}, args...)...)
	p := startRun(t, cfg)
	pid, err := strconv.Atoi(strings.TrimPrefix(p.expect("spawned "), "spawned "))
	if err != nil {
		t.Fatal(err)
	}
	return p, pid
}

func leftoverReport(t *testing.T, evs []event.Event) map[string]any {
	t.Helper()
	var diag map[string]any
	for _, e := range evs {
		if e.Kind == event.KindDiagnostic {
			diag = e.DetailsMap()["leftovers"].(map[string]any)
		}
	}
	term, _ := terminalDetails(t, evs)["leftovers"].(map[string]any)
	if diag == nil || term == nil || fmt.Sprint(diag) != fmt.Sprint(term) {
		t.Fatalf("leftovers: diagnostic %v, terminal %v", diag, term)
	}
	return term
}

func TestLeftoversAreReportedNotKilled(t *testing.T) {
	p, grandchild := spawnLeftover(t, Config{}, "wait-eof")
	res := p.result()
	if res.State != event.StateCompleted || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	l := leftoverReport(t, p.sink.events(t))
	if l["count"] != float64(1) || l["action"] != "reported" || l["pids"].([]any)[0] != float64(grandchild) {
		t.Fatalf("leftovers %v", l)
	}
	if v := event.CheckIdentity(event.System, identity(t, grandchild)); v.Status != event.Alive {
		t.Fatalf("the leftover was not left alone: %v", v)
	}
	p.stdin.Close() // the grandchild ends with its stdin
	waitGone(t, grandchild)
}

func TestKillLeftovers(t *testing.T) {
	p, grandchild := spawnLeftover(t, Config{KillLeftovers: true, KillAfter: time.Minute}, "wait-eof")
	res := p.result()
	if res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
	if l := leftoverReport(t, p.sink.events(t)); l["count"] != float64(1) || l["action"] != "terminated" {
		t.Fatalf("leftovers %v", l)
	}
	waitGone(t, grandchild)
}

func TestCancelReachesTheWholeGroup(t *testing.T) {
	// The main child exits 0 on SIGTERM; its child ignores SIGTERM, so once
	// the main child has ended the group gets SIGTERM again, then SIGKILL
	// at the kill deadline. The grandchild announces itself only once it
	// ignores SIGTERM, so the cancel cannot overtake its trap. (Shells: a Go
	// helper built with -race takes longer to exit than a short kill
	// deadline.)
	p := startRun(t, Config{KillAfter: time.Second, Argv: []string{"/bin/sh", "-c",
		`trap 'exit 0' TERM; sh -c 'trap "" TERM; echo "spawned $$"; exec sleep 1000' & wait`}})
	grandchild, _ := strconv.Atoi(strings.TrimPrefix(p.expect("spawned "), "spawned "))
	p.sigs <- syscall.SIGTERM
	res := p.result()
	if res.State != event.StateCancelled || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	if l := leftoverReport(t, p.sink.events(t)); l["action"] != "terminated" || l["count"] != float64(1) {
		t.Fatalf("leftovers %v", l)
	}
	waitGone(t, grandchild)
}

func identity(t *testing.T, pid int) event.Identity {
	t.Helper()
	id, _, err := event.IdentityOf(event.System, pid)
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	return id
}

// waitGone waits until pid is gone (absent or a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testtool.Eventually(t, fmt.Sprintf("pid %d gone", pid), func() bool {
		info, err := event.System.Stat(pid)
		return errors.Is(err, event.ErrNoProcess) || (err == nil && info.Zombie())
	})
}

// The seams for observers built on top (agent sources): OnStarted sees
// the child's identity once, after its starting event; BeforeTerminal sees
// the terminal details lcwrap made and may add to them.
func TestStartedAndBeforeTerminalSeams(t *testing.T) {
	var started []event.Identity
	var seen event.Terminal
	cfg := Config{
		OnStarted: func(id event.Identity) { started = append(started, id) },
		BeforeTerminal: func(d *event.Terminal) {
			seen = *d
			d.Error = "added by the observer"
		},
	}
	res, evs := run(t, cfg, helperArgv("exit", "3")...)
	if res.ExitCode != 3 || len(started) != 1 || started[0].PID <= 0 {
		t.Fatalf("result %+v, started %+v", res, started)
	}
	child, _ := event.DecodeDetails[event.StateChanged](evs[1].Details)
	if child.Child == nil || child.Child.PID != started[0].PID || child.Child.StartTime != started[0].StartTime {
		t.Fatalf("starting details %s, OnStarted %+v", evs[1].Details, started[0])
	}
	if seen.Claim != event.ClaimExitStatusOnly || seen.Exit == nil || *seen.Exit.Code != 3 {
		t.Fatalf("BeforeTerminal saw %+v", seen)
	}
	if d := terminalDetails(t, evs); d["error"] != "added by the observer" {
		t.Fatalf("terminal details %v", d)
	}
}

// Cancelling Run's context is a cancel request, like SIGTERM: the child
// gets SIGTERM, the lifecycle ends cancelled, and the request says who
// made it; a restart policy starts no further attempt.
func TestContextCancelIsACancelRequest(t *testing.T) {
	for _, restart := range []RestartPolicy{RestartNo, RestartAlways} {
		ctx, cancel := context.WithCancel(context.Background())
		p := startRunContext(t, ctx, Config{Argv: helperArgv("trap-term"), KillAfter: time.Minute, Restart: Restart{Policy: restart}})
		p.expect("ready")
		cancel()
		res := p.result()
		if res.State != event.StateCancelled || res.ExitCode != 0 {
			t.Fatalf("restart %q: %s, exit %d", restart, res.State, res.ExitCode)
		}
		evs := p.sink.events(t)
		var term event.Terminal
		for _, e := range evs {
			if e.Kind == event.KindTerminal {
				term, _ = event.DecodeDetails[event.Terminal](e.Details)
			}
		}
		if term.Cancel == nil || term.Cancel.By != "context" || term.Cancel.Signal != "SIGTERM" {
			t.Fatalf("restart %q: cancel %+v", restart, term.Cancel)
		}
		if restart != RestartNo {
			last, _ := event.DecodeDetails[RestartDiagnostic](evs[len(evs)-1].Details)
			if last.Restart == nil || last.Restart.Stopped != "cancel-request" {
				t.Fatalf("restart %q: last event %s", restart, evs[len(evs)-1].Details)
			}
		}
	}
}

// A child whose exit status lcwrap cannot read (something else in the
// process reaped it: here OnStarted, before Run's reaper) ends lost, with
// its own exit code: the end is unknown (internal/exitcode), never
// usage's 125 nor 0.
func TestStatusTakenElsewhereEndsLost(t *testing.T) {
	cfg := Config{OnStarted: func(id event.Identity) {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(id.PID, &ws, 0, nil)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}}
	res, evs := run(t, cfg, helperArgv("exit", "0")...)
	if res.State != event.StateLost || res.ExitCode != exitcode.EndUnknown || res.ExitCode == exitcode.Usage {
		t.Fatalf("result %+v, want lost with %d", res, exitcode.EndUnknown)
	}
	if got := states(evs); got != "created starting running lost" {
		t.Fatalf("events %s", got)
	}
	if d := terminalDetails(t, evs); d["exit"].(map[string]any)["status"] != "unknown" {
		t.Fatalf("terminal details %v", d)
	}
}
