//go:build linux

package supervise

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// These tests run Run in a helper process (an lcwrap stand-in, see
// helperSupervise) and send it real signals, or drive it through a real
// pty: the test runner itself never receives a signal.

type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	events string
	in     io.WriteCloser
	lines  chan string
	exit   chan int
	code   *int
}

// startProc starts the "supervise" helper (through helper, usually
// "supervise") on pipes, or with a pty as its controlling terminal.
func startProc(t *testing.T, helper string, pc procConfig, withPty bool) *proc {
	t.Helper()
	pc.Events = filepath.Join(t.TempDir(), "events.jsonl")
	if pc.KillAfter == 0 {
		pc.KillAfter = time.Minute
	}
	cfg, _ := json.Marshal(pc)
	p := &proc{t: t, cmd: helperCommand(helper, string(cfg)), events: pc.Events, lines: make(chan string, 256), exit: make(chan int, 1)}
	var out io.Reader
	if withPty {
		master, err := pty.Start(p.cmd)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { master.Close() })
		p.in, out = master, master
	} else {
		var err error
		if p.in, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		p.cmd.Stderr = os.Stderr
		// Not StdoutPipe: Wait would close it under the reader.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		p.cmd.Stdout, out = w, r
		err = p.cmd.Start()
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- strings.TrimRight(s.Text(), "\r")
		}
		close(p.lines)
	}()
	go func() {
		p.cmd.Wait()
		p.exit <- p.cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		p.in.Close()
		if p.code == nil {
			p.cmd.Process.Kill()
			<-p.exit
		}
	})
	return p
}

// expect waits for a line holding prefix and returns it from there (a
// pty echoes ^C and ^Z in front of the child's output).
func (p *proc) expect(prefix string) string {
	p.t.Helper()
	return expectLine(p.t, p.lines, prefix, from(prefix))
}

func (p *proc) write(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, s); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the helper to exit and returns its code and events.
func (p *proc) wait() (int, []event.Event) {
	p.t.Helper()
	select {
	case code := <-p.exit:
		p.code = &code
	case <-time.After(waitLimit):
		p.t.Fatal("the supervisor did not exit")
	}
	b, err := os.ReadFile(p.events)
	if err != nil {
		p.t.Fatal(err)
	}
	return *p.code, parseLines(p.t, strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n"))
}

func TestRealSignalsAreForwardedOnce(t *testing.T) {
	p := startProc(t, "supervise", procConfig{Argv: helperArgv("signals", "SIGUSR1", "SIGTERM")}, false)
	p.expect("ready")
	for i := 1; i <= 3; i++ {
		p.signal(syscall.SIGUSR1)
		p.expect(fmt.Sprintf("got SIGUSR1 %d", i))
	}
	p.signal(syscall.SIGTERM)
	p.expect("got SIGTERM 1")
	p.write("done\n")
	p.expect("total SIGUSR1 3")
	p.expect("total SIGTERM 1")
	code, evs := p.wait()
	d := terminalDetails(t, evs)
	if code != 0 || evs[len(evs)-1].State != event.StateCancelled || d["cancel"].(map[string]any)["signal"] != "SIGTERM" {
		t.Fatalf("exit %d, %s", code, states(evs))
	}
}

func TestCtrlCReachesTheChildOnce(t *testing.T) {
	p := startProc(t, "supervise", procConfig{Argv: helperArgv("signals", "SIGINT")}, true)
	p.expect("ready")
	p.write("\x03")
	p.expect("got SIGINT 1")
	p.write("done\n")
	if got := p.expect("total"); got != "total SIGINT 1" {
		t.Fatalf("%q", got)
	}
	// lcwrap never saw the ^C: it delivered no cancel request.
	code, evs := p.wait()
	if d := terminalDetails(t, evs); code != 0 || evs[len(evs)-1].State != event.StateCompleted || d["cancel"] != nil {
		t.Fatalf("exit %d, %s, %v", code, states(evs), d)
	}
}

func TestCtrlCDeathIsReportedHonestly(t *testing.T) {
	p := startProc(t, "supervise", procConfig{Argv: helperArgv("wait-eof")}, true)
	p.expect("ready")
	p.write("\x03")
	code, evs := p.wait()
	d := terminalDetails(t, evs)
	if code != 130 || evs[len(evs)-1].State != event.StateFailed || d["cancel"] != nil || d["exit"].(map[string]any)["signal"] != "SIGINT" {
		t.Fatalf("exit %d, %s, %v", code, states(evs), d)
	}
}

func TestCtrlZStopsTheJobAndContinues(t *testing.T) {
	p := startProc(t, "supervise", procConfig{Argv: helperArgv("stoppable")}, true)
	p.expect("ready")
	p.write("\x1a")
	pid := p.cmd.Process.Pid
	testtool.Eventually(t, "the supervisor to stop itself", func() bool {
		info, err := event.System.Stat(pid)
		return err == nil && info.State == 'T'
	})
	// It took the terminal back before stopping (it leads its session).
	master := p.in.(*os.File)
	if fg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP); err != nil || fg != pid {
		t.Fatalf("foreground group %d (%v), want the supervisor's %d", fg, err, pid)
	}
	p.signal(syscall.SIGCONT) // what the shell's fg does (after giving it the terminal)
	p.expect("continued")
	// The child reads the terminal again: it is in the foreground.
	p.write("done\n")
	code, evs := p.wait()
	if code != 0 || evs[len(evs)-1].State != event.StateCompleted {
		t.Fatalf("exit %d, %s", code, states(evs))
	}
}

func TestSubreaperReapsOrphansAndKeepsTheStatus(t *testing.T) {
	p := startProc(t, "supervise", procConfig{Subreaper: true, Argv: []string{"/bin/sh", "-c",
		`i=0; while [ $i -lt 100 ]; do ( : & ); i=$((i+1)); done; echo spawned; read x; exit 7`}}, false)
	p.expect("spawned")
	pid := p.cmd.Process.Pid
	// 100 orphans were handed to the supervisor: none may stay a zombie.
	testtool.Eventually(t, "no zombie children", func() bool {
		zombies, _ := children(pid)
		return zombies == 0
	})
	p.write("go\n")
	code, evs := p.wait()
	if code != 7 || evs[len(evs)-1].State != event.StateFailed {
		t.Fatalf("exit %d, %s", code, states(evs))
	}
}

// children counts the zombie children of pid.
func children(pid int) (zombies int, err error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscan(e.Name(), &n); err != nil {
			continue
		}
		if info, err := event.System.Stat(n); err == nil && info.PPID == pid && info.Zombie() {
			zombies++
		}
	}
	return zombies, nil
}

func TestChildStartsWithCleanSignalState(t *testing.T) {
	// The stand-in inherits blocked and ignored signals (blocked-exec);
	// its child must see none of either.
	grep := []string{"/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}
	p := startProc(t, "blocked-exec", procConfig{Argv: grep}, false)
	blk, ign := p.expect("SigBlk:"), p.expect("SigIgn:")
	if code, _ := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, l := range []string{blk, ign} {
		if f := strings.Fields(l); len(f) != 2 || maskOutsideRuntime(t, f[1]) != 0 {
			t.Errorf("child: %q", l)
		}
	}
	// The control: exec'd straight from blocked-exec, grep does see them.
	out, err := helperCommand(append([]string{"blocked-exec", "--direct"}, grep...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) != 2 || strings.Trim(f[1], "0") == "" {
			t.Errorf("control: %q: nothing was blocked or ignored", l)
		}
	}
}

// maskOutsideRuntime parses a /proc status signal mask and drops signals
// 32–34: the Go runtime keeps an inherited ignore of those (GNU make, for
// one, starts its recipes with 32 and 33 ignored), as documented.
func maskOutsideRuntime(t *testing.T, hex string) uint64 {
	t.Helper()
	m, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		t.Fatalf("bad mask %q", hex)
	}
	return m &^ (7 << 31)
}
