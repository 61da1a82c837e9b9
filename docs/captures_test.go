package docs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/doccapture"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

// waitLimit bounds every wait of a capture; none is a timing claim.
const waitLimit = 60 * time.Second

// captured lists every capture in README.md, docs/ and examples/ with the
// test that makes its run: a capture nobody runs could go stale.
var captured = map[string]string{
	"troubleshooting-stale":     "TestCaptureStale",
	"troubleshooting-reconcile": "TestCaptureStale",
	"interactive-status":        "TestCaptureInteractive",
	"notify-status":             "TestCaptureNotify",
	"notify-restart":            "TestCaptureRestart",
	"adopt-run":                 "examples TestAdoptExample",
	"agent-waiting":             "examples/agent TestREADMERun",
	"agent-ended":               "examples/agent TestREADMERun",
	"agent-interrupted":         "internal/agent/claudecode TestInteractiveInterrupt",
	"gemini-subagent-status":    "internal/agent/gemini TestHeadlessSubagent",
	"gemini-subagent-top":       "internal/agent/gemini TestHeadlessSubagent",
	"gemini-wait-status":        "internal/agent/gemini TestTUIPermissionUnderPTY",
	"gemini-wait-top":           "internal/agent/gemini TestTUIPermissionUnderPTY",
	"copilot-subagent-status":   "internal/agent/copilot TestHeadlessSubagent",
	"copilot-subagent-top":      "internal/agent/copilot TestHeadlessSubagent",
	"copilot-wait-status":       "internal/agent/copilot TestTUIPermissionUnderPTY",
	"copilot-wait-top":          "internal/agent/copilot TestTUIPermissionUnderPTY",
	"opencode-status":           "internal/agent/opencode TestTUIPermission",
	"opencode-top":              "internal/agent/opencode TestTUIPermission",
	"agent-interrupted-top":     "internal/agent/claudecode TestInteractiveInterrupt",
	"agent-interrupted-report":  "internal/agent/claudecode TestInteractiveInterrupt",
}

func TestEveryCaptureIsRun(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range markdownFiles(t) {
		names, err := doccapture.Names(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if captured[n] == "" {
				t.Errorf("%s: capture %s: no test makes its run (add it to captured)", f, n)
			}
			if seen[n] {
				t.Errorf("%s: capture %s: the name is used twice", f, n)
			}
			seen[n] = true
		}
	}
	for n := range captured {
		if !seen[n] {
			t.Errorf("capture %s is in captured but in no Markdown file", n)
		}
	}
}

// session is a terminal session of a capture: lcwrap on PATH, a journal
// and a directory of its own, and the transcript of the commands shown.
type session struct {
	t    *testing.T
	dir  string
	env  []string
	out  strings.Builder
	code int // exit status of the last command shown
}

func newSession(t *testing.T) *session {
	t.Helper()
	s := &session{t: t, dir: t.TempDir()}
	bin := filepath.Dir(testtool.Lcwrap(t))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LCWRAP_") || k == "PATH" || k == "NOTIFY_SOCKET" || strings.HasPrefix(k, "WATCHDOG_") || k == "NO_COLOR" {
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LCWRAP_JOURNAL="+filepath.Join(s.dir, "journal.jsonl"), "GORACE=atexit_sleep_ms=0")
	return s
}

// write writes a file of the session's directory.
func (s *session) write(name, content string, mode os.FileMode) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(content), mode); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) command(ctx context.Context, line string) *exec.Cmd {
	c := exec.CommandContext(ctx, "sh", "-c", line)
	c.Dir, c.Env = s.dir, s.env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 10 * time.Second
	return c
}

// run runs line with sh and returns its output (stdout and stderr as one
// stream, in the order written) and exit status.
func (s *session) run(line string) (string, int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c := s.command(ctx, line)
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return b.String(), ee.ExitCode()
	case err != nil:
		s.t.Fatalf("%s: %v\n%s", line, err, b.String())
	}
	return b.String(), 0
}

// show runs line and adds it and its output to the transcript.
func (s *session) show(line string) {
	s.t.Helper()
	out, code := s.run(line)
	s.out.WriteString("$ " + line + "\n" + out)
	s.code = code
}

// showExit adds "echo $?" for the last command shown.
func (s *session) showExit() {
	s.out.WriteString("$ echo $?\n" + strconv.Itoa(s.code) + "\n")
}

// take returns the transcript so far and starts a new one.
func (s *session) take() string {
	t := s.out.String()
	s.out.Reset()
	return t
}

// background is a command started in the background.
type background struct {
	pid  int
	done chan struct{} // closed once it has ended and been reaped
}

// start runs line in the background (its own process group, killed at
// the end of the test if still there).
func (s *session) start(line string) *background {
	s.t.Helper()
	c := s.command(context.Background(), "exec "+line)
	if err := c.Start(); err != nil {
		s.t.Fatal(err)
	}
	b := &background{pid: c.Process.Pid, done: make(chan struct{})}
	go func() { c.Wait(); close(b.done) }()
	s.t.Cleanup(func() {
		syscall.Kill(-b.pid, syscall.SIGKILL)
		<-b.done
	})
	return b
}

// waitFor runs line until its output matches re, and returns it.
func (s *session) waitFor(line, re string) string {
	s.t.Helper()
	m := regexp.MustCompile(re)
	var out string
	if !testtool.Poll(waitLimit, func() bool { out, _ = s.run(line); return m.MatchString(out) }) {
		s.t.Fatalf("after %v, %q still prints no match for %s:\n%s", waitLimit, line, re, out)
	}
	return out
}

// killOrphan kills the child process the journal recorded for childID
// (one left running when its wrapper was killed).
func (s *session) killOrphan(childID string) {
	s.t.Helper()
	out, _ := s.run("lcwrap tail --child " + childID)
	m := regexp.MustCompile(`"child":\{"pid":(\d+)`).FindStringSubmatch(out)
	if m == nil {
		s.t.Fatalf("no child pid for %s in:\n%s", childID, out)
	}
	pid, _ := strconv.Atoi(m[1])
	s.t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
}

// troubleshooting.md: a wrapper killed with SIGKILL leaves its child
// stale; --reconcile finds the wrapper gone and records the child lost.
func TestCaptureStale(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	w := s.start("lcwrap --heartbeat 1s --child-id build-9 -- sleep 60")
	s.waitFor("lcwrap status", `(?m)^build-9 .*running`)
	s.killOrphan("build-9")
	syscall.Kill(w.pid, syscall.SIGKILL)
	<-w.done
	s.waitFor("lcwrap status", `(?m)^build-9 .* stale `)
	s.show("lcwrap status")
	doccapture.Check(t, "troubleshooting.md", "troubleshooting-stale", s.take())
	s.show("lcwrap status --reconcile")
	s.show("lcwrap status --all")
	doccapture.Check(t, "troubleshooting.md", "troubleshooting-reconcile", s.take())
}

// agentScript is interactive.md's stand-in agent: a prompt, a "reading"
// line, a progress bar redrawn with \r (held at 50% until the file go
// exists), a result line that mentions an API key.
const agentScript = `#!/bin/sh
echo 'demo-agent ready. Type a task, or "exit".'
while printf '> ' && read -r task; do
	[ "$task" = exit ] && break
	echo "reading the code for \"$task\""
	for p in 10 50 100; do
		printf '\r\033[1;33mediting files … %s%%\033[0m' "$p"
		while [ "$p" = 50 ] && [ ! -e go ]; do sleep 0.05; done
	done
	printf '\n✓ %s: done (with OPENAI_API_KEY=sk-demo0123456789abcdefghijklmn)\n' "$task"
done
echo bye
`

// interactive.md: lcwrap status while the agent under --pty is editing.
func TestCaptureInteractive(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.write("agent.sh", agentScript, 0o755)
	s.write("input", "", 0o644)
	// The agent's keyboard: a file it reads as it grows.
	s.start("tail -f input | lcwrap --pty --activity output --child-id agent-1 -- ./agent.sh")
	// Typed once the prompt is there, as at a terminal.
	s.waitFor("lcwrap status", `(?m)^agent-1 .*demo-agent ready`)
	s.run("echo 'fix the failing test' >> input")
	s.waitFor("lcwrap status", `(?m)^agent-1 .*reading the code for`)
	s.show("lcwrap status")
	doccapture.Check(t, "interactive.md", "interactive-status", s.take())
	s.run("touch go; echo exit >> input")
	s.waitFor("lcwrap status --all", `(?m)^agent-1 .*completed`)
}

// notify.md: a worker speaking sd_notify, fresh while it pings, and one
// that pinged and then hung, stale after three intervals.
func TestCaptureNotify(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "systemd-notify", "apt-get install systemd")
	s := newSession(t)
	// worker.sh as notify.md shows it, held at batch 1 (pinging) until
	// the file go exists.
	s.write("worker.sh", `#!/bin/sh
systemd-notify --status="loading the model"
systemd-notify --ready --status="serving"
systemd-notify WATCHDOG=1 STATUS="batch 1 of 3"
until [ -e go ]; do sleep 0.3; systemd-notify WATCHDOG=1; done
for i in 2 3; do
  systemd-notify WATCHDOG=1 STATUS="batch $i of 3"
done
systemd-notify STOPPING=1
`, 0o755)
	s.start("lcwrap --notify --ready notify --watchdog 2s --child-id worker-1 -- ./worker.sh")
	s.waitFor("lcwrap status", `(?m)^worker-1 .*batch 1 of 3`)
	// silent pings (until the file hang exists) and then hangs; its
	// command line, as status cuts it, is notify.md's.
	s.start(`lcwrap --notify --watchdog 1s --child-id silent -- sh -c 'systemd-notify WATCHDOG=1 STATUS="about to hang"; until [ -e hang ]; do sleep 0.3; systemd-notify WATCHDOG=1; done; sleep 600'`)
	s.waitFor("lcwrap status", `(?m)^silent .*about to hang .* ago `)
	s.show("lcwrap status")
	s.run("touch go hang")
	s.waitFor("lcwrap status", `(?ms)^silent .* stale .*^1 ended not shown`)
	out, _ := s.run("lcwrap status")
	s.out.WriteString("$ sleep 2; lcwrap status\n" + out)
	doccapture.Check(t, "notify.md", "notify-status", s.take())
}

// notify.md: a command that fails twice under --restart on-failure; the
// attempts are a tree under their root.
func TestCaptureRestart(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "jq", "apt-get install jq")
	s := newSession(t)
	s.write("flaky.sh", `#!/bin/sh
# Fails twice, then works.
n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count
echo "attempt $n as $LCWRAP_CHILD_ID"
[ "$n" -ge 2 ]
`, 0o755)
	s.show("cat flaky.sh")
	s.show("lcwrap --restart on-failure --backoff 500ms --child-id fetch -- ./flaky.sh")
	s.showExit()
	s.show(`lcwrap tail | jq -c 'select(.kind == "terminal" or .kind == "diagnostic") | {childId, attempt: .lineage.attempt, kind, state, details}'`)
	s.show("lcwrap status --all")
	doccapture.Check(t, "notify.md", "notify-restart", s.take())
}
