//go:build linux

package supervise

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// The test binary doubles as every helper process: `TESTBIN helperArg NAME
// ARGS...` runs helpers[NAME]. Every helper inherits leakEnv, so that
// TestMain can check that none outlives the tests.
const (
	helperArg = "lcwrap-supervise-helper"
	leakEnv   = "LCWRAP_SUPERVISE_TEST_RUN"
)

var helpers = map[string]func(args []string) int{
	// exit N: exit with code N.
	"exit": func(args []string) int {
		n, _ := strconv.Atoi(args[0])
		return n
	},
	// signals SIG...: report each listed signal as "got SIG n"; on the
	// stdin line "done" (or EOF) print "total SIG n" for each, exit 0.
	"signals": helperSignals,
	// trap-term: exit 0 on SIGTERM.
	"trap-term": func([]string) int {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		<-c
		return 0
	},
	// ignore-term: ignore SIGTERM, wait for stdin to close.
	"ignore-term": func([]string) int {
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		waitEOF()
		return 0
	},
	// wait-eof: print ready, exit 0 when stdin closes.
	"wait-eof": func([]string) int {
		fmt.Println("ready")
		waitEOF()
		return 0
	},
	// spawn NAME ARGS...: start helper NAME (sharing stdin and stderr, in
	// this process group), print "spawned PID" once it is ready, exit 0.
	"spawn": func(args []string) int {
		c := helperCommand(args...)
		c.Stdin, c.Stderr = os.Stdin, os.Stderr
		out, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		bufio.NewReader(out).ReadString('\n')
		fmt.Println("spawned", c.Process.Pid)
		return 0
	},
	// partial ARGS...: write each argument as it is (no newline added),
	// reading one stdin line before each but the first.
	"partial": func(args []string) int {
		in := bufio.NewReader(os.Stdin)
		for i, a := range args {
			if i > 0 {
				in.ReadString('\n')
			}
			os.Stdout.WriteString(a)
		}
		return 0
	},
	// env KEY...: print KEY=value for each.
	"env": func(args []string) int {
		for _, k := range args {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
		return 0
	},
	// stoppable: print ready, "continued" on each SIGCONT, exit 0 on the
	// stdin line "done". It can be stopped (no SIGTSTP handler).
	"stoppable": func([]string) int {
		c := make(chan os.Signal, 4)
		signal.Notify(c, syscall.SIGCONT)
		lines := stdinLines()
		fmt.Println("ready")
		for {
			select {
			case <-c:
				fmt.Println("continued")
			case l, ok := <-lines:
				if !ok || l == "done" {
					return 0
				}
			}
		}
	},
	// supervise CONFIG-JSON: an lcwrap stand-in, running Run with real
	// signals (see procConfig); it exits with Run's exit code.
	"supervise": helperSupervise,
	// ignore-exec SIG PROGRAM ARGS...: ignore signal number SIG, then
	// exec PROGRAM (as nohup does for SIGHUP).
	"ignore-exec": func(args []string) int {
		n, _ := strconv.Atoi(args[0])
		signal.Ignore(syscall.Signal(n))
		err := syscall.Exec(args[1], args[1:], os.Environ())
		fmt.Fprintln(os.Stderr, err)
		return 2
	},
	// blocked-exec CONFIG-JSON: block and ignore signals, then exec
	// "supervise CONFIG-JSON" so that it inherits both (with --direct
	// PROGRAM ARGS...: exec that program instead).
	"blocked-exec": func(args []string) int {
		runtime.LockOSThread()
		var set unix.Sigset_t
		for _, s := range []unix.Signal{unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM, unix.SIGTSTP, unix.SIGTERM, unix.SIGPIPE, unix.SIGWINCH, 40} {
			addSignal(&set, s)
		}
		if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGUSR2, syscall.SIGQUIT, syscall.Signal(40))
		self, _ := os.Executable()
		argv := []string{self, helperArg, "supervise", args[0]}
		if args[0] == "--direct" {
			argv = args[1:]
		}
		err := syscall.Exec(argv[0], argv, os.Environ())
		fmt.Fprintln(os.Stderr, err)
		return 2
	},
}

func helperSignals(args []string) int {
	var sigs []os.Signal
	counts := map[string]int{}
	for _, a := range args {
		sigs = append(sigs, unix.SignalNum(a))
	}
	c := make(chan os.Signal, 16)
	signal.Notify(c, sigs...)
	lines := stdinLines()
	fmt.Println("ready")
	for {
		select {
		case s := <-c:
			name := unix.SignalName(s.(syscall.Signal))
			counts[name]++
			fmt.Println("got", name, counts[name])
		case l, ok := <-lines:
			if ok && l != "done" {
				continue
			}
			for _, a := range args {
				fmt.Println("total", a, counts[a])
			}
			return 0
		}
	}
}

// procConfig is the configuration of the "supervise" helper.
type procConfig struct {
	Argv          []string      `json:"argv"`
	Events        string        `json:"events"` // file the events go to
	Heartbeat     time.Duration `json:"heartbeat"`
	Timeout       time.Duration `json:"timeout"`
	KillAfter     time.Duration `json:"killAfter"`
	KillLeftovers bool          `json:"killLeftovers"`
	Subreaper     bool          `json:"subreaper"`
}

func helperSupervise(args []string) int {
	var pc procConfig
	if err := json.Unmarshal([]byte(args[0]), &pc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return runAsLcwrap(pc.Events, Config{
		Argv: pc.Argv, ChildID: "helper",
		Heartbeat: pc.Heartbeat, Timeout: pc.Timeout, KillAfter: pc.KillAfter,
		KillLeftovers: pc.KillLeftovers, Subreaper: pc.Subreaper,
	})
}

// runAsLcwrap runs cfg as lcwrap would, on this process's stdio and
// signals, its events written to the file events, and returns Run's exit
// code (125 when Run refuses).
func runAsLcwrap(events string, cfg Config) int {
	sigs := Subscribe()
	defer sigs.Stop()
	sink, err := emit.OpenFileSink(events)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	e := emit.New(emit.Options{}, sink)
	defer e.Close()
	cfg.Stdin, cfg.Stdout, cfg.Stderr, cfg.Emitter, cfg.Signals = os.Stdin, os.Stdout, os.Stderr, e, sigs
	res, err := Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return res.ExitCode
}

func waitEOF() {
	for range stdinLines() {
	}
}

func stdinLines() <-chan string {
	c := make(chan string)
	go func() {
		defer close(c)
		s := bufio.NewScanner(os.Stdin)
		for s.Scan() {
			c <- s.Text()
		}
	}()
	return c
}

// helperArgv is the command line of helper NAME.
func helperArgv(args ...string) []string {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return append([]string{self, helperArg}, args...)
}

func helperCommand(args ...string) *exec.Cmd {
	argv := helperArgv(args...)
	return exec.Command(argv[0], argv[1:]...)
}

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		h, ok := helpers[os.Args[2]]
		if !ok {
			fmt.Fprintln(os.Stderr, "no such helper:", os.Args[2])
			os.Exit(2)
		}
		os.Exit(h(os.Args[3:]))
	}
	// In-process runs get a stand-in subscription (supervise_test.go)
	// that never receives a real signal; their children must still start
	// with the dispositions the binary gives them: whatever the test
	// process inherited as ignored (nohup: SIGHUP) is reset, as Subscribe
	// does.
	dropSignals(make(chan os.Signal, 1), inheritedIgnored())
	// In-process runs must never take over the terminal the tests were
	// started from; the subprocess tests give the helpers a real pty.
	terminalOf = func() *terminal { return nil }
	// Helpers built with -race would sleep a second before exiting 0.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	run := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	os.Setenv(leakEnv, run)
	code := m.Run()
	if leaked := helpersAlive(run); len(leaked) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "helper processes outlived the tests: %v\n", leaked)
		code = 1
	}
	os.Exit(code)
}

// helpersAlive lists live processes (other than this one) started by this
// test run, waiting briefly for the ones already dying.
func helpersAlive(run string) []string {
	var alive []string
	testtool.Poll(5*time.Second, func() bool {
		alive = nil
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !strings.Contains(string(env), leakEnv+"="+run+"\x00") {
				continue
			}
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			alive = append(alive, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
		}
		return len(alive) == 0
	})
	return alive
}

// memSink keeps the lines written to it.
type memSink struct {
	mu    sync.Mutex
	lines []string
}

func (m *memSink) Name() string { return "memory" }
func (m *memSink) WriteEvent(_ *event.Event, line []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, string(line))
	return nil
}
func (m *memSink) Close() error { return nil }

// events parses the lines written so far.
func (m *memSink) events(t *testing.T) []event.Event {
	t.Helper()
	m.mu.Lock()
	lines := append([]string(nil), m.lines...)
	m.mu.Unlock()
	return parseLines(t, lines)
}

func parseLines(t *testing.T, lines []string) []event.Event {
	t.Helper()
	var evs []event.Event
	for _, l := range lines {
		ev, _, err := event.Parse([]byte(strings.TrimSuffix(l, "\n")))
		if err != nil {
			t.Fatalf("invalid event line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// addSignal adds sig to set (unix.Sigset_t has no method for it).
func addSignal(set *unix.Sigset_t, sig unix.Signal) {
	bits := uint(unsafe.Sizeof(set.Val[0])) * 8
	n := uint(sig) - 1
	set.Val[n/bits] |= 1 << (n % bits)
}
