//go:build linux

package supervise

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func init() {
	// tty: report "pid N", whether 0, 1 and 2 are terminals, whether it
	// leads the foreground group of its controlling terminal, and the
	// window size; then "winch ROWSxCOLS" on each SIGWINCH, "got LINE"
	// for each stdin line, "eof" at the end of stdin; exit 0 on "done"
	// or at the end.
	helpers["tty"] = helperTTY
	// supervise-pty CONFIG-JSON: an lcwrap --pty stand-in (ptyConfig),
	// on the real signals; like cmd/lcwrap, it closes the PTY in a defer.
	helpers["supervise-pty"] = helperSupervisePTY
	// suspendable: like vim or less, stop itself with SIGSTOP on SIGTSTP
	// (a terminal's ^Z alone cannot stop it: in a session of its own it
	// is an orphaned process group); print "continued" when continued,
	// exit 0 on the stdin line "done".
	helpers["suspendable"] = func([]string) int {
		c := make(chan os.Signal, 4)
		signal.Notify(c, syscall.SIGTSTP, syscall.SIGCONT)
		lines := stdinLines()
		fmt.Println("ready")
		for {
			select {
			case sig := <-c:
				if sig == syscall.SIGTSTP {
					syscall.Kill(0, syscall.SIGSTOP)
				} else {
					fmt.Println("continued")
				}
			case l, ok := <-lines:
				if !ok || l == "done" {
					return 0
				}
			}
		}
	}
}

func helperTTY([]string) int {
	winch := make(chan os.Signal, 8)
	signal.Notify(winch, syscall.SIGWINCH)
	isatty := func(fd int) bool {
		_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		return err == nil
	}
	size := func() string {
		ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%dx%d", ws.Row, ws.Col)
	}
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	leads := err == nil && fg == unix.Getpgrp() && unix.Getpgrp() == os.Getpid()
	fmt.Printf("pid %d tty 0=%v 1=%v 2=%v foreground=%v size %s\n", os.Getpid(), isatty(0), isatty(1), isatty(2), leads, size())
	lines := stdinLines()
	for {
		select {
		case <-winch:
			fmt.Println("winch", size())
		case l, ok := <-lines:
			switch {
			case !ok:
				fmt.Println("eof")
				return 0
			case l == "done":
				return 0
			}
			fmt.Println("got", l)
		}
	}
}

// ptyConfig is the configuration of the "supervise-pty" helper.
type ptyConfig struct {
	Argv      []string      `json:"argv"`
	Events    string        `json:"events"`
	Timeout   time.Duration `json:"timeout"`
	Activity  string        `json:"activity"`
	PanicOn   string        `json:"panicOn"` // panic when an activity event says this
	EmitOut   bool          `json:"emitOut"` // events on stdout too (through the Stream)
	Heartbeat time.Duration `json:"heartbeat"`
}

// panicSink panics on the first activity event whose text holds on.
type panicSink struct{ on string }

func (p panicSink) Name() string { return "panic" }
func (p panicSink) WriteEvent(ev *event.Event, _ []byte) error {
	if ev.Kind == event.KindActivity && strings.Contains(ev.Activity, p.on) {
		panic("test panic: " + ev.Activity)
	}
	return nil
}
func (p panicSink) Close() error { return nil }

func helperSupervisePTY(args []string) int {
	var pc ptyConfig
	if err := json.Unmarshal([]byte(args[0]), &pc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	sigs := Subscribe()
	defer sigs.Stop()
	p, err := OpenPTY(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	defer p.Close()
	file, err := emit.OpenFileSink(pc.Events)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	sinks := []event.Sink{file}
	cfg := Config{Argv: pc.Argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, PTY: p,
		ChildID: "pty", Signals: sigs, Timeout: pc.Timeout, KillAfter: time.Minute, Activity: pc.Activity, Heartbeat: pc.Heartbeat}
	if pc.PanicOn != "" {
		sinks = append(sinks, panicSink{pc.PanicOn})
	}
	if pc.EmitOut {
		st, err := NewStream("stdout", os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 125
		}
		defer st.Close()
		sinks = append(sinks, st.Sink())
		cfg.Stdout, cfg.Streams = st.ChildFile(), []*Stream{st}
	}
	cfg.Emitter = emit.New(emit.Options{}, sinks...)
	defer cfg.Emitter.Close()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return res.ExitCode
}

// outerTerminal is the terminal a "supervise-pty" helper runs on, as a
// shell would start it: a session of its own, the terminal's slave as its
// controlling terminal and stdio. The test keeps its own copy of the
// slave, to read the terminal's settings at any time.
type outerTerminal struct {
	t      *testing.T
	master *os.File
	slave  *os.File
	before unix.Termios // the terminal's settings before the helper started
	cmd    *exec.Cmd
	events string
	lines  chan string
	exit   chan int
}

func startOuter(t *testing.T, pc ptyConfig, size *pty.Winsize) *outerTerminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	if size != nil {
		if err := pty.Setsize(master, size); err != nil {
			t.Fatal(err)
		}
	}
	pc.Events = filepath.Join(t.TempDir(), "events.jsonl")
	cfg, _ := json.Marshal(pc)
	o := &outerTerminal{t: t, master: master, slave: slave, cmd: helperCommand("supervise-pty", string(cfg)),
		events: pc.Events, lines: make(chan string, 1024), exit: make(chan int, 1)}
	o.cmd.Stdin, o.cmd.Stdout, o.cmd.Stderr = slave, slave, slave
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	o.before = o.termios()
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(master) // not a Scanner: it would drop the "\r" of "\r\n"
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				break
			}
			o.lines <- strings.TrimSuffix(l, "\n")
		}
		close(o.lines)
	}()
	go func() {
		o.cmd.Wait()
		o.exit <- o.cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		select {
		case <-o.exit:
		default:
			o.cmd.Process.Kill()
			<-o.exit
		}
	})
	return o
}

func (o *outerTerminal) termios() unix.Termios {
	o.t.Helper()
	tio, err := unix.IoctlGetTermios(int(o.slave.Fd()), unix.TCGETS)
	if err != nil {
		o.t.Fatal(err)
	}
	return *tio
}

// expect waits for a line holding s and returns it from there, without
// the "\r" a terminal's line ends with.
func (o *outerTerminal) expect(s string) string {
	o.t.Helper()
	return strings.TrimSuffix(o.expectRaw(s), "\r")
}

// expectRaw is expect, keeping the line's end as it came.
func (o *outerTerminal) expectRaw(s string) string {
	o.t.Helper()
	return expectLine(o.t, o.lines, s, from(s))
}

func (o *outerTerminal) write(s string) {
	o.t.Helper()
	if _, err := io.WriteString(o.master, s); err != nil {
		o.t.Fatal(err)
	}
}

func (o *outerTerminal) wait() (int, []event.Event) {
	o.t.Helper()
	var code int
	select {
	case code = <-o.exit:
		o.exit <- code // for the cleanup
	case <-time.After(waitLimit):
		o.t.Fatal("the supervisor did not exit")
	}
	b, err := os.ReadFile(o.events)
	if err != nil {
		o.t.Fatal(err)
	}
	return code, parseLines(o.t, strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n"))
}

// childPid reads the pid from the tty helper's first line.
func childPid(t *testing.T, line string) int {
	t.Helper()
	f := strings.Fields(line)
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("no pid in %q", line)
	}
	return pid
}

func TestPTYChildHasATerminalThatFollowsTheWindow(t *testing.T) {
	o := startOuter(t, ptyConfig{Argv: helperArgv("tty")}, &pty.Winsize{Rows: 31, Cols: 97})
	first := o.expect("pid ")
	if !strings.HasSuffix(first, "tty 0=true 1=true 2=true foreground=true size 31x97") {
		t.Fatalf("the child sees %q", first)
	}
	if err := pty.Setsize(o.master, &pty.Winsize{Rows: 42, Cols: 133}); err != nil {
		t.Fatal(err)
	}
	o.expect("winch 42x133")
	// Keys reach the child's terminal as typed: a line, then the line
	// the child's terminal turns a carriage return into.
	o.write("hello\r")
	o.expect("got hello")
	o.write("done\r")
	if code, evs := o.wait(); code != 0 || states(evs) != "created starting running completed" {
		t.Fatalf("exit %d, %s", code, states(evs))
	}
}

// TestPTYRestoresTheOuterTerminal: the outer terminal's settings are
// raw while the child runs and byte for byte what they were afterwards,
// however the child ends.
func TestPTYRestoresTheOuterTerminal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pc     ptyConfig
		ready  string
		end    func(o *outerTerminal, ready string)
		code   int
		state  event.State
		cancel bool
	}{
		{"normal exit", ptyConfig{Argv: helperArgv("tty")}, "pid ",
			func(o *outerTerminal, _ string) { o.write("done\r") }, 0, event.StateCompleted, false},
		{"killed by a signal", ptyConfig{Argv: helperArgv("tty")}, "pid ",
			func(o *outerTerminal, ready string) { syscall.Kill(childPid(o.t, ready), syscall.SIGKILL) }, 137, event.StateFailed, false},
		{"ctrl-c typed: the child's terminal signals it, not lcwrap", ptyConfig{Argv: helperArgv("tty")}, "pid ",
			func(o *outerTerminal, _ string) { o.write("\x03") }, 130, event.StateFailed, false},
		// (The timeout leaves the helper time to install its handler.)
		{"timeout", ptyConfig{Argv: helperArgv("signals", "SIGTERM"), Timeout: 2 * time.Second}, "got SIGTERM 1",
			func(o *outerTerminal, _ string) { o.write("done\r") }, ExitTimeout, event.StateCancelled, true},
		{"a panic in lcwrap", ptyConfig{Argv: helperArgv("tty"), Activity: ActivityOutput, PanicOn: "PANIC"}, "pid ",
			func(o *outerTerminal, _ string) { o.write("PANIC\r") }, 2, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := startOuter(t, tc.pc, nil)
			before := o.before
			if before.Lflag&unix.ICANON == 0 {
				t.Fatal("the outer terminal is raw before the test")
			}
			ready := o.expect(tc.ready)
			if during := o.termios(); during.Lflag&(unix.ICANON|unix.ISIG|unix.ECHO) != 0 || during.Oflag&unix.OPOST != 0 {
				t.Fatalf("the outer terminal is not raw while the child runs: lflag %#o oflag %#o", during.Lflag, during.Oflag)
			}
			tc.end(o, ready)
			code, evs := o.wait()
			if after := o.termios(); after != before {
				t.Fatalf("outer terminal settings changed:\nbefore %+v\nafter  %+v", before, after)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d (%s)", code, tc.code, states(evs))
			}
			if tc.state == "" {
				return // the panic: no terminal event
			}
			d := terminalDetails(t, evs)
			if evs[len(evs)-1].State != tc.state || (d["cancel"] != nil) != tc.cancel {
				t.Fatalf("%s, %v", states(evs), d)
			}
		})
	}
}

func TestPTYOuterStdinThatIsNoTerminal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin func(t *testing.T) *os.File
		want  []string
	}{
		{"a pipe, ending in an unfinished line", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { w.WriteString("one\ntwo"); w.Close() }()
			return r
		}, []string{"got one", "got two", "eof"}},
		{"/dev/null", func(t *testing.T) *os.File {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}, []string{"eof"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.stdin(t)
			defer in.Close()
			p, err := OpenPTY(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			sink := &memSink{}
			done := make(chan Result, 1)
			go func() {
				res, err := Run(context.Background(), Config{Argv: helperArgv("tty"), PTY: p, Stdout: w, Emitter: emit.New(emit.Options{}, sink),
					ChildID: "pty", Signals: &Signals{c: make(chan os.Signal, 1)}, Activity: ActivityOutput})
				w.Close()
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			read := make(chan []byte, 1)
			go func() {
				out, _ := io.ReadAll(r)
				read <- out
			}()
			var out []byte
			var res Result
			select {
			case res = <-done:
				out = <-read
			case <-time.After(waitLimit):
				t.Fatal("the child never saw the end of its input")
			}
			// The child's terminal echoes what it is given (as script(1)
			// does), so the child's own lines are looked for in order.
			rest := string(out)
			for _, want := range tc.want {
				i := strings.Index(rest, want+"\r\n")
				if i < 0 {
					t.Fatalf("output %q: no %q after what came before", out, want)
				}
				rest = rest[i:]
			}
			if res.State != event.StateCompleted {
				t.Fatalf("state %s", res.State)
			}
			evs := sink.events(t)
			if last := evs[len(evs)-2]; last.Kind != event.KindActivity || last.Activity != "eof" || last.DetailsMap()["output"] != "pty" {
				t.Fatalf("the last activity is not the last line: %s %q", last.Kind, last.Activity)
			}
		})
	}
}

func TestPTYEventLinesOnARawTerminalStartAtTheMargin(t *testing.T) {
	o := startOuter(t, ptyConfig{Argv: helperArgv("tty"), EmitOut: true, Heartbeat: 5 * time.Millisecond}, nil)
	o.expect("pid ")
	// While the outer terminal is raw, a heartbeat line ends with "\r\n":
	// the line after it starts at the left margin.
	if l := o.expectRaw(`"kind":"heartbeat"`); !strings.HasSuffix(l, "}\r") {
		t.Fatalf("event line on a raw terminal ends %q", l[max(0, len(l)-10):])
	}
	o.write("done\r")
	code, _ := o.wait()
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestPTYCtrlZStopsTheJobWithItsTerminalRestored(t *testing.T) {
	o := startOuter(t, ptyConfig{Argv: helperArgv("suspendable")}, nil)
	before := o.before
	o.expect("ready")
	// ^Z is a byte for the child's terminal, which tells the child; it
	// stops itself. lcwrap then gives its own terminal back as it was and
	// stops itself, so that the shell sees the job stopped.
	o.write("\x1a")
	pid := o.cmd.Process.Pid
	testtool.Eventually(t, "the supervisor to stop itself", func() bool {
		info, err := event.System.Stat(pid)
		return err == nil && info.State == 'T'
	})
	if stopped := o.termios(); stopped != before {
		t.Fatalf("terminal settings while stopped:\nbefore %+v\nnow    %+v", before, stopped)
	}
	syscall.Kill(pid, syscall.SIGCONT) // the shell's fg
	o.expect("continued")
	if during := o.termios(); during.Lflag&unix.ICANON != 0 {
		t.Fatal("the terminal is not raw again after SIGCONT")
	}
	o.write("done\r")
	if code, evs := o.wait(); code != 0 || evs[len(evs)-1].State != event.StateCompleted {
		t.Fatalf("exit %d, %s", code, states(evs))
	}
	if after := o.termios(); after != before {
		t.Fatalf("terminal settings changed:\nbefore %+v\nafter  %+v", before, after)
	}
}
