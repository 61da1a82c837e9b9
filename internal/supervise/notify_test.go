//go:build linux

package supervise

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/notify"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func init() {
	// notify: a child speaking sd_notify, driven line by line on stdin
	// (see notifyCommand); "ready" first, then one answer per line.
	helpers["notify"] = helperNotify
	// notify-now MSG: send MSG at once and exit 0.
	helpers["notify-now"] = func(args []string) int {
		if err := sdNotify(args[0]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	}
	// send-wait MSG: send MSG, print "sent", exit when stdin closes.
	helpers["send-wait"] = func(args []string) int {
		if err := sdNotify(args[0]); err != nil {
			fmt.Println("error", err)
			return 2
		}
		fmt.Println("sent")
		waitEOF()
		return 0
	}
}

// sdNotify is shaped like go-systemd's daemon.SdNotify: one write on a
// unixgram socket dialled to $NOTIFY_SOCKET.
func sdNotify(state string) error {
	conn, err := dialNotify()
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}

func dialNotify() (*net.UnixConn, error) {
	addr := &net.UnixAddr{Name: os.Getenv(EnvNotifySocket), Net: "unixgram"}
	if addr.Name == "" {
		return nil, errors.New("NOTIFY_SOCKET is not set")
	}
	return net.DialUnix(addr.Net, nil, addr)
}

// helperNotify answers each stdin line:
//
//	send TEXT       send TEXT (\n for newlines), answer "sent"
//	big N           send a datagram of N bytes, answer "sent"
//	fd TEXT         send TEXT with a pipe's write end; answer "released"
//	                once lcwrap has closed its copy
//	spawn TEXT      start a grandchild (send-wait TEXT), answer "sent pid"
//	                once it has sent; it lives until this helper ends
//	env             answer NOTIFY_SOCKET=..., WATCHDOG_USEC=..., WATCHDOG_PID=...
//	exit N          exit with code N
func helperNotify([]string) int {
	var grandchildren []*exec.Cmd
	defer func() {
		for _, c := range grandchildren {
			c.Stdin.(*os.File).Close()
			c.Wait()
		}
	}()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		arg = strings.ReplaceAll(arg, `\n`, "\n")
		var err error
		switch cmd {
		case "send":
			if err = sdNotify(arg); err == nil {
				fmt.Println("sent")
			}
		case "big":
			n, _ := strconv.Atoi(arg)
			if err = sendBig(n); err == nil {
				fmt.Println("sent")
			}
		case "fd":
			if err = sendWithFD(arg); err == nil {
				fmt.Println("released")
			}
		case "spawn":
			c := helperCommand("send-wait", arg)
			r, w, _ := os.Pipe()
			c.Stdin = r
			out, _ := c.StdoutPipe()
			if err = c.Start(); err == nil {
				r.Close()
				c.Stdin = w
				grandchildren = append(grandchildren, c)
				line, _ := bufio.NewReader(out).ReadString('\n')
				fmt.Println(strings.TrimSpace(line), c.Process.Pid)
			}
		case "env":
			for _, k := range []string{EnvNotifySocket, EnvWatchdogUsec, EnvWatchdogPID} {
				v, ok := os.LookupEnv(k)
				fmt.Printf("%s=%s %v\n", k, v, ok)
			}
		case "exit":
			n, _ := strconv.Atoi(arg)
			return n
		}
		if err != nil {
			fmt.Println("error", err)
		}
	}
	return 0
}

// sendBig sends one datagram of n bytes (STATUS=xxx...), with a send
// buffer large enough for it.
func sendBig(n int) error {
	conn, err := dialNotify()
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetWriteBuffer(2*n + 4096); err != nil {
		return err
	}
	b := []byte(strings.Repeat("x", n))
	copy(b, "STATUS=")
	_, err = conn.Write(b)
	return err
}

// sendWithFD sends text with the write end of a pipe, as systemd-notify
// sends BARRIER=1, and waits until lcwrap has closed it.
func sendWithFD(text string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	err = syscall.Sendmsg(fd, []byte(text), syscall.UnixRights(int(w.Fd())), &syscall.SockaddrUnix{Name: os.Getenv(EnvNotifySocket)}, 0)
	w.Close()
	if err != nil {
		return err
	}
	_, err = r.Read(make([]byte, 1)) // EOF once the last write end is closed
	if err != nil && err.Error() == "EOF" {
		return nil
	}
	return fmt.Errorf("read on the barrier pipe: %v", err)
}

// notifyRun starts the notify helper under Run with cfg (Notify on).
func notifyRun(t *testing.T, cfg Config) *inproc {
	t.Helper()
	cfg.Notify = true
	if cfg.Argv == nil {
		cfg.Argv = helperArgv("notify")
	}
	p := startRun(t, cfg)
	p.expect("ready")
	return p
}

// do sends one command line to the helper and returns its answer.
func (p *inproc) do(line, answer string) string {
	p.t.Helper()
	p.send(line)
	got := p.expect("")
	if !strings.HasPrefix(got, answer) {
		p.t.Fatalf("%q answered %q, want %q", line, got, answer)
	}
	return got
}

// waitEvent waits for an event that match accepts and returns it.
func (p *inproc) waitEvent(what string, match func(event.Event) bool) event.Event {
	p.t.Helper()
	var found event.Event
	testtool.Eventually(p.t, what, func() bool {
		for _, e := range p.sink.events(p.t) {
			if match(e) {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

func isKind(k event.Kind) func(event.Event) bool {
	return func(e event.Event) bool { return e.Kind == k }
}

func isState(s event.State) func(event.Event) bool {
	return func(e event.Event) bool { return e.State == s }
}

func notifyDetails(t *testing.T, e event.Event) map[string]any {
	t.Helper()
	d, ok := e.DetailsMap()["notify"].(map[string]any)
	if !ok {
		t.Fatalf("no notify details in %s event: %s", e.Kind, e.Details)
	}
	return d
}

func TestNotifyReadyHoldsStarting(t *testing.T) {
	p := notifyRun(t, Config{ReadyNotify: true})
	p.do("send STATUS=warming up", "sent")
	p.waitEvent("the status", isKind(event.KindActivity))
	if got := states(p.sink.events(t)); got != "created starting activity" {
		t.Fatalf("before READY=1: %s", got)
	}
	p.do("send READY=1", "sent")
	running := p.waitEvent("running", isState(event.StateRunning))
	d := running.DetailsMap()
	child := d["child"].(map[string]any)
	if d["notify"] != "READY=1" || d["senderPid"] != child["pid"] || child["startTime"] == float64(0) {
		t.Fatalf("running details %v", d)
	}
	p.do("send READY=1", "sent") // again: nothing changes
	p.stdin.Close()
	if res := p.result(); res.State != event.StateCompleted || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	if got := states(p.sink.events(t)); got != "created starting activity running completed" {
		t.Fatalf("events %s", got)
	}
}

func TestNotifyReadyAtOnceIsInOrder(t *testing.T) {
	// The child says READY=1 before lcwrap has even recorded starting.
	for i := 0; i < 10; i++ {
		res, evs := run(t, Config{Notify: true, ReadyNotify: true}, helperArgv("notify-now", "READY=1")...)
		if got := states(evs); res.State != event.StateCompleted || got != "created starting running completed" {
			t.Fatalf("run %d: %s: %s", i, res.State, got)
		}
	}
}

func TestNotifyReadyWithoutReadyNotify(t *testing.T) {
	p := notifyRun(t, Config{})
	p.do("send READY=1", "sent")
	p.do("send STATUS=after ready", "sent")
	p.waitEvent("the status", isKind(event.KindActivity))
	p.stdin.Close()
	p.result()
	if got := states(p.sink.events(t)); got != "created starting running activity completed" {
		t.Fatalf("events %s", got)
	}
}

func TestNotifyExitBeforeReady(t *testing.T) {
	res, evs := run(t, Config{Notify: true, ReadyNotify: true}, helperArgv("exit", "0")...)
	if res.State != event.StateFailed || res.ExitCode != 0 {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	if got := states(evs); got != "created starting failed" {
		t.Fatalf("events %s", got)
	}
	if d := terminalDetails(t, evs); d["ready"] != false || d["exit"].(map[string]any)["code"] != float64(0) {
		t.Fatalf("details %v", d)
	}
}

func TestNotifyReadyTimeout(t *testing.T) {
	// The timeout may well fire before the helper has even said "ready".
	p := startRun(t, Config{Argv: helperArgv("notify"), Notify: true, ReadyNotify: true, ReadyTimeout: 50 * time.Millisecond, KillAfter: time.Minute})
	res := p.result()
	if res.State != event.StateCancelled || res.ExitCode != ExitTimeout {
		t.Fatalf("%s, exit %d", res.State, res.ExitCode)
	}
	evs := p.sink.events(t)
	if got := states(evs); got != "created starting cancelled" {
		t.Fatalf("events %s", got)
	}
	d := terminalDetails(t, evs)
	if d["cancel"].(map[string]any)["by"] != "ready-timeout" || d["ready"] != false || d["exit"].(map[string]any)["signal"] != "SIGTERM" {
		t.Fatalf("details %v", d)
	}
}

func TestNotifyReadyInTimeIsNotCancelled(t *testing.T) {
	p := notifyRun(t, Config{ReadyNotify: true, ReadyTimeout: time.Hour})
	p.do("send READY=1", "sent")
	p.waitEvent("running", isState(event.StateRunning))
	p.stdin.Close()
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
}

func TestNotifyStatusIsActivity(t *testing.T) {
	p := notifyRun(t, Config{})
	p.do(`send STATUS=linking\nUNKNOWN_KEY=whatever`, "sent")
	e := p.waitEvent("the status", isKind(event.KindActivity))
	if d := e.DetailsMap(); e.Activity != "linking" || d["notify"] != "STATUS" || d["senderPid"] == nil {
		t.Fatalf("activity %q details %v", e.Activity, d)
	}
	// Redacted, one line, cut; the newest of a burst is never lost.
	secret := "sk-abcdefghijklmnopqrstuvwxyz0123"
	var burst []string
	for c := 'a'; c <= 'z'; c++ {
		burst = append(burst, "STATUS="+string(c))
	}
	p.do("send STATUS=using "+secret+"\tnow "+strings.Repeat("y", 600), "sent")
	p.waitEvent("the long status", func(e event.Event) bool { return strings.HasPrefix(e.Activity, "using") })
	p.do("send "+strings.Join(burst, `\n`), "sent")
	p.stdin.Close()
	p.result()
	var acts []event.Event
	for _, e := range p.sink.events(t) {
		if e.Kind == event.KindActivity {
			acts = append(acts, e)
		}
	}
	long := acts[1].Activity
	if strings.Contains(long, secret) || !strings.HasPrefix(long, "using [REDACTED] now yyy") || len([]rune(long)) != event.MaxActivity {
		t.Fatalf("activity %q", long)
	}
	if last := acts[len(acts)-1].Activity; last != "z" {
		t.Fatalf("the newest status is %q, want z", last)
	}
	if len(acts) >= 2+26 {
		t.Fatalf("%d activity events: a burst in one datagram was not coalesced", len(acts))
	}
}

func TestNotifyStopping(t *testing.T) {
	p := notifyRun(t, Config{})
	p.do("send STOPPING=1", "sent")
	e := p.waitEvent("stopping", isKind(event.KindActivity))
	if e.Activity != "stopping" || e.DetailsMap()["notify"] != "STOPPING=1" {
		t.Fatalf("%q %s", e.Activity, e.Details)
	}
}

func TestNotifyWatchdogIsTheHeartbeat(t *testing.T) {
	// lcwrap's own heartbeat would tick every millisecond; with a watchdog
	// it must not.
	p := notifyRun(t, Config{Watchdog: time.Hour, Heartbeat: time.Millisecond})
	if got := p.do("env", EnvNotifySocket+"="); !strings.HasSuffix(got, " true") || !strings.Contains(got, "lcwrap-notify-") {
		t.Fatalf("child sees %q", got)
	}
	if got := p.expect(EnvWatchdogUsec + "="); got != EnvWatchdogUsec+"=3600000000 true" {
		t.Fatalf("child sees %q", got)
	}
	if got := p.expect(EnvWatchdogPID + "="); got != EnvWatchdogPID+"= false" {
		t.Fatalf("child sees %q", got)
	}
	start := time.Now()
	p.do("send WATCHDOG=1", "sent")
	hb := p.waitEvent("the child's heartbeat", isKind(event.KindHeartbeat))
	if d := hb.DetailsMap(); d["notify"] != "WATCHDOG=1" || d["senderPid"] == nil {
		t.Fatalf("heartbeat details %v", d)
	}
	testtool.Eventually(t, "50 of lcwrap's heartbeat intervals", func() bool { return time.Since(start) > 50*time.Millisecond })
	p.do("send WATCHDOG=1", "sent")
	testtool.Eventually(t, "two heartbeats", func() bool {
		n := 0
		for _, e := range p.sink.events(t) {
			if e.Kind == event.KindHeartbeat {
				n++
			}
		}
		return n == 2
	})
	p.stdin.Close()
	p.result()
	evs := p.sink.events(t)
	for _, e := range evs {
		if e.Kind == event.KindHeartbeat && e.DetailsMap()["notify"] != "WATCHDOG=1" {
			t.Fatalf("a heartbeat of lcwrap's own: %s", states(evs))
		}
	}
	d := evs[0].DetailsMap()
	if d["heartbeatIntervalMs"] != float64(3600000) || d["profile"] != "launched-watchdog" || evs[0].Capabilities.Heartbeat != "known" {
		t.Fatalf("created %v %+v", d, evs[0].Capabilities)
	}
}

func TestNotifyEnvironmentWithoutWatchdog(t *testing.T) {
	t.Setenv(EnvWatchdogUsec, "5")
	t.Setenv(EnvWatchdogPID, strconv.Itoa(os.Getpid()))
	p := notifyRun(t, Config{})
	p.do("env", EnvNotifySocket+"=")
	for _, want := range []string{EnvWatchdogUsec + "= false", EnvWatchdogPID + "= false"} {
		if got := p.expect(""); got != want {
			t.Fatalf("child sees %q, want %q", got, want)
		}
	}
}

func TestNotifyWaitingAndRunning(t *testing.T) {
	p := notifyRun(t, Config{ReadyNotify: true})
	p.do("send LCWRAP_STATE=waiting", "sent") // still starting: refused
	d := notifyDetails(t, p.waitEvent("a diagnostic", isKind(event.KindDiagnostic)))
	if d["problem"] != "unexpected" || !strings.Contains(d["reason"].(string), "while the child is starting") {
		t.Fatalf("diagnostic %v", d)
	}
	p.do(`send READY=1\nLCWRAP_STATE=waiting`, "sent")
	w := p.waitEvent("waiting", isState(event.StateWaiting))
	if w.DetailsMap()["notify"] != "LCWRAP_STATE=waiting" {
		t.Fatalf("waiting details %s", w.Details)
	}
	p.do("send LCWRAP_STATE=waiting", "sent") // no change, no event
	p.do("send LCWRAP_STATE=running", "sent")
	testtool.Eventually(t, "running again", func() bool {
		return strings.HasSuffix(states(p.sink.events(t)), "waiting running")
	})
	p.do("send LCWRAP_STATE=waiting", "sent")
	first, _ := w.Seq()
	p.waitEvent("waiting again", func(e event.Event) bool { n, _ := e.Seq(); return n > first && e.State == event.StateWaiting })
	p.stdin.Close() // it ends while waiting
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
	if got := states(p.sink.events(t)); got != "created starting diagnostic running waiting running waiting completed" {
		t.Fatalf("events %s", got)
	}
}

func TestNotifyUnknownStateIsADiagnostic(t *testing.T) {
	p := notifyRun(t, Config{})
	p.do("send LCWRAP_STATE=completed", "sent")
	d := notifyDetails(t, p.waitEvent("a diagnostic", isKind(event.KindDiagnostic)))
	if d["problem"] != "unexpected" || !strings.Contains(d["reason"].(string), "LCWRAP_STATE=completed") {
		t.Fatalf("diagnostic %v", d)
	}
	p.stdin.Close()
	if res := p.result(); res.State != event.StateCompleted {
		t.Fatalf("state %s", res.State)
	}
}

func TestNotifyOnlyTheChildsTreeMaySpeak(t *testing.T) {
	p := notifyRun(t, Config{})
	got := p.do("env", EnvNotifySocket+"=")
	path := strings.Fields(strings.TrimPrefix(got, EnvNotifySocket+"="))[0]
	p.expect(EnvWatchdogUsec)
	p.expect(EnvWatchdogPID)

	// A descendant may.
	grandchild := strings.Fields(p.do("spawn STATUS=from the grandchild", "sent"))[1]
	e := p.waitEvent("the grandchild's status", isKind(event.KindActivity))
	if e.Activity != "from the grandchild" || fmt.Sprint(e.DetailsMap()["senderPid"]) != grandchild {
		t.Fatalf("activity %q %s (grandchild %s)", e.Activity, e.Details, grandchild)
	}

	// A process outside the child's tree may not.
	c := helperCommand("send-wait", "STATUS=from outside")
	c.Env = append(os.Environ(), EnvNotifySocket+"="+path)
	in, _ := c.StdinPipe()
	out, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer in.Close()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "sent\n" {
		t.Fatalf("outsider: %q", line)
	}
	d := notifyDetails(t, p.waitEvent("the rejection", isKind(event.KindDiagnostic)))
	if d["problem"] != "rejected" || d["senderPid"] != float64(c.Process.Pid) || d["excerpt"] != nil ||
		!strings.Contains(d["reason"].(string), "neither the child nor one of its descendants") {
		t.Fatalf("diagnostic %v", d)
	}
	p.stdin.Close()
	p.result()
	for _, e := range p.sink.events(t) {
		if e.Activity == "from outside" {
			t.Fatal("the outsider's status was recorded")
		}
	}
}

func TestNotifyOversizedDatagram(t *testing.T) {
	p := notifyRun(t, Config{})
	p.do("big 1048576", "sent")
	e := p.waitEvent("the diagnostic", isKind(event.KindDiagnostic))
	d := notifyDetails(t, e)
	if d["problem"] != "oversized" || d["bytes"] != float64(1<<20) || len([]rune(d["excerpt"].(string))) != notify.MaxExcerpt {
		t.Fatalf("diagnostic %v", d)
	}
	if line, _ := e.Marshal(); len(line) > 2048 {
		t.Fatalf("a %d-byte diagnostic", len(line))
	}
	p.do("send STATUS=still listening", "sent")
	p.waitEvent("the next status", isKind(event.KindActivity))
	p.stdin.Close()
	p.result()
	if got := states(p.sink.events(t)); got != "created starting running diagnostic activity completed" {
		t.Fatalf("events %s", got)
	}
}

func TestNotifyBadDatagramsAreCountedNotFlooded(t *testing.T) {
	p := notifyRun(t, Config{})
	const bad = 20
	for i := 0; i < bad; i++ {
		p.do(fmt.Sprintf("send no assignment, but sk-abcdefghijklmnopqrstuvwxyz0123 %d", i), "sent")
	}
	p.stdin.Close()
	p.result()
	written, counted := 0, 0
	for _, e := range p.sink.events(t) {
		if e.Kind != event.KindDiagnostic {
			continue
		}
		d := notifyDetails(t, e)
		if n, ok := d["suppressed"].(float64); ok {
			counted += int(n)
		}
		if d["problem"] == "malformed" {
			written++
			if strings.Contains(d["excerpt"].(string), "sk-abc") || !strings.Contains(d["reason"].(string), "not KEY=VALUE") {
				t.Fatalf("diagnostic %v", d)
			}
		}
	}
	if written+counted != bad || written == bad {
		t.Fatalf("%d diagnostics written and %d counted, for %d bad datagrams", written, counted, bad)
	}
}

func TestNotifyBarrierIsReleasedAfterEarlierMessages(t *testing.T) {
	p := notifyRun(t, Config{})
	// The second status comes within statusEvery of the first, so it is
	// held back: the barrier must still wait until it is written.
	p.do("send STATUS=first", "sent")
	p.do("send STATUS=second", "sent")
	p.do("fd BARRIER=1", "released")
	var acts []string
	for _, e := range p.sink.events(t) {
		if e.Kind == event.KindActivity {
			acts = append(acts, e.Activity)
		}
	}
	if strings.Join(acts, ",") != "first,second" {
		t.Fatalf("when the barrier was released: %q", acts)
	}
	// Any other descriptor is closed too, and BARRIER=1 needs exactly one.
	p.do("fd FDSTORE=1", "released")
	p.do("send BARRIER=1", "sent")
	d := notifyDetails(t, p.waitEvent("a diagnostic", isKind(event.KindDiagnostic)))
	if d["problem"] != "unexpected" || !strings.Contains(d["reason"].(string), "0 file descriptors") {
		t.Fatalf("diagnostic %v", d)
	}
}

func TestNotifySocketIsPrivateAndRemoved(t *testing.T) {
	for _, how := range []string{"exit", "start error", "SIGKILL", "cancel", "ready-timeout"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			cfg := Config{Notify: true, KillAfter: time.Minute, Argv: helperArgv("notify")}
			switch how {
			case "ready-timeout":
				cfg.ReadyNotify, cfg.ReadyTimeout = true, 20*time.Millisecond
			case "start error":
				cfg.Argv = []string{filepath.Join(tmp, "no-such-command")}
			}
			p := startRun(t, cfg)
			if how == "exit" || how == "SIGKILL" || how == "cancel" {
				p.expect("ready")
				got := p.do("env", EnvNotifySocket+"=")
				path := strings.Fields(strings.TrimPrefix(got, EnvNotifySocket+"="))[0]
				fi, err := os.Stat(filepath.Dir(path))
				if err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() || filepath.Dir(filepath.Dir(path)) != tmp {
					t.Fatalf("socket directory %s: %v %v", path, fi.Mode(), err)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
					t.Fatalf("socket: %v", err)
				}
			}
			switch how {
			case "exit":
				p.send("exit 3")
			case "SIGKILL":
				pid := int(p.sink.events(t)[1].DetailsMap()["child"].(map[string]any)["pid"].(float64))
				syscall.Kill(pid, syscall.SIGKILL)
			case "cancel":
				p.sigs <- syscall.SIGTERM
			}
			p.result()
			if left, _ := filepath.Glob(filepath.Join(tmp, "lcwrap-notify-*")); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}
