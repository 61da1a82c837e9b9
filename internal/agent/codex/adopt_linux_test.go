package codex

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/mockresponses"
)

// TestRealAdoptInteractive: `lcwrap adopt PID` of a running interactive
// codex that lcwrap did not start follows its session once the rollout is
// proven to be that process's, under the adopted child (external), and
// ends it lost when the process goes.
func TestRealAdoptInteractive(t *testing.T) {
	bin := requireCodex(t)
	lc := buildLcwrap(t)
	env, _, _ := codexEnv(t, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo adopt-marker")}})
	u := startTUI(t, bin, env)
	u.ready()

	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	adopted := startAdopt(t, lc, env, u.cmd.Process.Pid, journal)
	waitFor(t, "the adoption", 10*time.Second, func() bool { return len(journalEvents(t, journal)) >= 2 }, u.scr.text)
	for _, ev := range journalEvents(t, journal) {
		if ev.Source == Source {
			t.Fatalf("a session was attached before codex opened a rollout: %s", ev.Details)
		}
	}

	u.submit("run the marker")
	waitFor(t, "the session's wait in the journal", 180*time.Second, func() bool {
		for _, ev := range journalEvents(t, journal) {
			if ev.Source == Source && ev.State == event.StateWaiting {
				return true
			}
		}
		return false
	}, u.scr.text)
	u.quit()
	awaitAdopt(t, adopted)

	evs := journalEvents(t, journal)
	var adoptedID string
	proven := false
	var session []string
	for _, ev := range evs {
		switch {
		case ev.Source == "lcwrap" && ev.Kind == event.KindCreated:
			adoptedID = ev.ChildID
		case ev.Source == "lcwrap" && ev.Kind == event.KindDiagnostic && strings.Contains(string(ev.Details), `"agent":"codex"`):
			proven = true
		case ev.Source == Source:
			if ev.Lineage.ParentChildID != adoptedID || !ev.Lineage.External {
				t.Errorf("session lineage %+v, want external under %s", ev.Lineage, adoptedID)
			}
			session = append(session, string(ev.Kind)+" "+string(ev.State)+" "+ev.Activity)
		}
	}
	all := strings.Join(session, "\n")
	if !proven {
		t.Errorf("no diagnostic with the rollout proof on the adopted child")
	}
	for _, want := range []string{"created created", "activity  prompt submitted", "exec_command: echo adopt-marker", "state_changed waiting", "terminal lost"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the session's events:\n%s", want, all)
		}
	}
}

// TestRealAdoptExec: `lcwrap adopt PID` of a running `codex exec` (its
// rollout is written in-process): the rollout it holds proves its session,
// which is followed from its first line, while its command still runs.
func TestRealAdoptExec(t *testing.T) {
	bin := requireCodex(t)
	lc := buildLcwrap(t)
	env, _, _ := codexEnv(t, mockresponses.Step{Calls: []mockresponses.Call{mockresponses.Exec("echo adopt-exec-marker; exec sleep 60")}})
	cmd := exec.Command(bin, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "run it")
	cmd.Env, cmd.Dir = env, t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exited })
	lines := make(chan string, 64)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		cmd.Wait()
	}()
	// codex has started the command: its session and rollout exist.
	for deadline := time.After(30 * time.Second); ; {
		select {
		case l := <-lines:
			if !strings.Contains(l, `"item.started"`) {
				continue
			}
		case <-deadline:
			t.Fatalf("codex exec did not start its command")
		}
		break
	}
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	adopted := startAdopt(t, lc, env, cmd.Process.Pid, journal)
	waitFor(t, "the session's tool call in the journal", 180*time.Second, func() bool {
		for _, ev := range journalEvents(t, journal) {
			if ev.Source == Source && strings.Contains(ev.Activity, "adopt-exec-marker") {
				return true
			}
		}
		return false
	}, func() string { b, _ := os.ReadFile(journal); return string(b) })
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // the test's own codex, and its sleep
	awaitAdopt(t, adopted)
	var created, lost bool
	for _, ev := range journalEvents(t, journal) {
		if ev.Source == Source {
			created = created || ev.Kind == event.KindCreated && ev.Capabilities.History == "known"
			lost = lost || ev.Kind == event.KindTerminal && ev.State == event.StateLost
		}
	}
	if !created || !lost {
		b, _ := os.ReadFile(journal)
		t.Errorf("session created with history known: %v, ended lost: %v\n%s", created, lost, b)
	}
}

// startAdopt runs `lcwrap adopt PID` into journal; the channel gets its
// exit.
func startAdopt(t *testing.T, lc string, env []string, pid int, journal string) <-chan error {
	t.Helper()
	adopter := exec.Command(lc, "adopt", "--journal", journal, strconv.Itoa(pid))
	adopter.Env = append(env, "GORACE=atexit_sleep_ms=0")
	if err := adopter.Start(); err != nil {
		t.Fatal(err)
	}
	adopted := make(chan error, 1)
	go func() { adopted <- adopter.Wait() }()
	t.Cleanup(func() { adopter.Process.Kill() })
	return adopted
}

// awaitAdopt waits for lcwrap adopt to end (as the adopted codex has) and
// exit 0.
func awaitAdopt(t *testing.T, adopted <-chan error) {
	t.Helper()
	select {
	case err := <-adopted:
		if err != nil {
			t.Fatalf("lcwrap adopt: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("lcwrap adopt did not end with codex")
	}
}
