//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// waitLimit bounds every wait; none is a timing claim.
const waitLimit = 60 * time.Second

// build compiles pkg into dir/name.
func build(t *testing.T, dir, name, pkg string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, name)
	if b, err := exec.Command(goTool, "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, b)
	}
	return out
}

// TestAgentUnderLcwrap runs the example as its README does: the agent
// under lcwrap --notify --activity output (with --ready notify and a
// watchdog as well), answering its question once lcwrap status shows it
// waiting.
func TestAgentUnderLcwrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lcwrap := build(t, dir, "lcwrap", "../../cmd/lcwrap")
	agent := build(t, dir, "agent", ".")
	journal := filepath.Join(dir, "journal.jsonl")
	env := append(os.Environ(), "LCWRAP_JOURNAL="+journal, "TMPDIR="+dir)
	for _, k := range []string{"LCWRAP_CHILD_ID", "LCWRAP_ROOT_CHILD_ID", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"} {
		env = append(env, k+"=")
	}

	c := exec.Command(lcwrap, "--notify", "--ready", "notify", "--watchdog", "400ms", "--activity", "output",
		"--child-id", "agent-1", "--", agent, "-step", "10ms")
	c.Env = env
	stdin, _ := c.StdinPipe()
	stdout, _ := c.StdoutPipe()
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(waitLimit):
			c.Process.Kill()
		}
	})
	lines := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
		done <- c.Wait()
	}()
	expect := func(want string) {
		t.Helper()
		deadline := time.After(waitLimit)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %q", want)
				}
				if l == want {
					return
				}
			case <-deadline:
				t.Fatalf("no line %q", want)
			}
		}
	}
	expect("agent: apply the change? [y/n]")

	// lcwrap status shows it waiting, with its status, and its own
	// watchdog pings keep it fresh while it waits.
	var row statusRow
	testtool.EventuallyWithin(t, waitLimit, "lcwrap status to show the agent waiting, and a ping", func() bool {
		row = status(t, lcwrap, env)
		return row.State == "waiting" && row.Activity != nil && row.Activity.Text == "waiting for approval" && count(t, journal, event.KindHeartbeat) > 0
	})
	if row.Stale || row.Heartbeat == nil || row.Heartbeat.IntervalMs != 400 {
		t.Fatalf("status row %+v", row)
	}

	io.WriteString(stdin, "y\n")
	expect("agent: done")
	if err := <-done; err != nil {
		t.Fatalf("lcwrap: %v", err)
	}
	done <- nil

	evs := events(t, journal)
	var states, activities []string
	for _, e := range evs {
		switch {
		case e.State != "":
			states = append(states, string(e.State))
		case e.Kind == event.KindActivity:
			activities = append(activities, e.Activity)
		case e.Kind == event.KindHeartbeat && e.DetailsMap()["notify"] != "WATCHDOG=1":
			t.Fatalf("a heartbeat not from the agent: %s", e.Details)
		}
	}
	if got := strings.Join(states, " "); got != "created starting running waiting running completed" {
		t.Fatalf("states %s", got)
	}
	for _, want := range []string{"reading the task", "waiting for approval", `got "y"`, "stopping", "agent: done"} {
		if !contains(activities, want) {
			t.Fatalf("no activity %q in %q", want, activities)
		}
	}
	if d := evs[len(evs)-1].DetailsMap(); d["claim"] != "process-exit-status-only" {
		t.Fatalf("terminal details %v", d)
	}
}

type statusRow struct {
	ChildID  string `json:"childId"`
	State    string `json:"state"`
	Activity *struct {
		Text string `json:"text"`
	} `json:"activity"`
	Stale     bool `json:"stale"`
	Heartbeat *struct {
		IntervalMs int64 `json:"intervalMs"`
	} `json:"heartbeat"`
}

// status is the agent's row of lcwrap status --json.
func status(t *testing.T, lcwrap string, env []string) statusRow {
	t.Helper()
	c := exec.Command(lcwrap, "status", "--json")
	c.Env = env
	out, err := c.Output()
	if err != nil {
		t.Fatalf("lcwrap status: %v", err)
	}
	var s struct {
		Children []statusRow `json:"children"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("lcwrap status --json: %v\n%s", err, out)
	}
	for _, r := range s.Children {
		if r.ChildID == "agent-1" {
			return r
		}
	}
	return statusRow{}
}

func events(t *testing.T, journal string) []event.Event {
	t.Helper()
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		e, _, err := event.Parse([]byte(l))
		if err != nil {
			t.Fatalf("journal line %q: %v", l, err)
		}
		evs = append(evs, e)
	}
	return evs
}

func count(t *testing.T, journal string, k event.Kind) int {
	t.Helper()
	n := 0
	for _, e := range events(t, journal) {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// TestNotifyAddresses: the client sends to a path and to the abstract
// namespace ('@'), and refuses anything else.
func TestNotifyAddresses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify.sock")
	abstract := "@lcwrap-agent-test-" + strconv.Itoa(os.Getpid())
	for _, name := range []string{path, abstract} {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: name}); err != nil {
			t.Fatalf("bind %s: %v", name, err)
		}
		if err := notify(name, "READY=1\nSTATUS=hi"); err != nil {
			t.Fatalf("notify %s: %v", name, err)
		}
		buf := make([]byte, 64)
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil || string(buf[:n]) != "READY=1\nSTATUS=hi" {
			t.Fatalf("%s received %q, %v", name, buf[:n], err)
		}
	}
	for _, bad := range []string{"relative/path", "@", "x"} {
		if err := notify(bad, "READY=1"); err == nil {
			t.Errorf("notify(%q) did not fail", bad)
		}
	}
}

// TestREADMERun makes the run README.md shows, with its very command line
// (the status tables show it), and holds its status tables to what
// lcwrap status prints: while the agent waits on its question, and after.
func TestREADMERun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lcwrap := build(t, dir, "lcwrap", "../../cmd/lcwrap")
	build(t, dir, "agent", ".")
	journal := filepath.Join(dir, "journal.jsonl")
	env := append(os.Environ(), "LCWRAP_JOURNAL="+journal, "TMPDIR="+dir)
	for _, k := range []string{"LCWRAP_CHILD_ID", "LCWRAP_ROOT_CHILD_ID", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"} {
		env = append(env, k+"=")
	}
	c := exec.Command("./lcwrap", "--notify", "--ready", "notify", "--watchdog", "2s", "--activity", "output", "--child-id", "agent-1", "--", "./agent")
	c.Dir, c.Env = dir, env
	stdin, _ := c.StdinPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(waitLimit):
			c.Process.Kill()
		}
	})
	// The activity is the newer of the question's output line and the
	// STATUS sent with it: two channels, either may come last (the README
	// says so and shows the output line).
	asked := regexp.MustCompile(`(?m)^agent-1 +◆ waiting .* (agent: apply the change\? \[y/n\]|waiting for approval) `)
	var table string
	testtool.EventuallyWithin(t, waitLimit, "lcwrap status to show the agent waiting on its question", func() bool {
		table = statusTable(t, lcwrap, env)
		return asked.MatchString(table)
	})
	table = strings.Replace(table, "waiting for approval", "agent: apply the change? [y/n]", 1)
	doccapture.Check(t, "README.md", "agent-waiting", "$ ./lcwrap status\n"+table)
	io.WriteString(stdin, "y\n")
	if err := <-done; err != nil {
		t.Fatalf("lcwrap: %v", err)
	}
	done <- nil
	// The same two channels at the end: STATUS=done or "agent: done".
	ended := regexp.MustCompile(`(?m)^(agent-1 +■ completed +\?1 +)done `).ReplaceAllString(statusTable(t, lcwrap, env, "--all"), "${1}agent: done ")
	doccapture.Check(t, "README.md", "agent-ended", "$ ./lcwrap status --all\n"+ended)
}

// statusTable is lcwrap status's table (exit 1, before the journal
// exists, is a table too).
func statusTable(t *testing.T, lcwrap string, env []string, args ...string) string {
	t.Helper()
	c := exec.Command(lcwrap, append([]string{"status"}, args...)...)
	c.Env = env
	out, err := c.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("lcwrap status: %v", err)
	}
	return string(out)
}
