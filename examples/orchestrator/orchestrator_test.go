// Package orchestrator runs orchestrate.sh as a user would: an lcwrap built
// from this checkout first on PATH, real processes, and a check that
// nothing the script started outlives it.
package orchestrator

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestOrchestrator(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lcwrap cancel signals through a pidfd: Linux only")
	}
	bin := t.TempDir()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if out, err := exec.Command(goTool, "build", "-o", filepath.Join(bin, "lcwrap"), "../../cmd/lcwrap").CombinedOutput(); err != nil {
		t.Fatalf("building lcwrap: %v\n%s", err, out)
	}

	// Every process the script starts inherits the marker.
	b := make([]byte, 8)
	rand.Read(b)
	marker := "LCWRAP_ORCHESTRATOR_RUN=" + hex.EncodeToString(b)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), marker}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "LCWRAP_") && k != "PATH" && k != "TMPDIR" && k != "XDG_STATE_HOME" {
			env = append(env, kv)
		}
	}
	t.Cleanup(func() { checkNoLeftovers(t, marker) })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "orchestrate.sh")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("orchestrate.sh: %v\n--- stdout:\n%s--- stderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()

	// The snapshot: complete, every child checked and as expected.
	_, after, _ := strings.Cut(out, "== getSnapshot: lcwrap snapshot --reason session_open\n")
	line, _, _ := strings.Cut(after, "\n")
	s, err := event.ParseSnapshot([]byte(line))
	if err != nil {
		t.Fatalf("snapshot %q: %v", line, err)
	}
	states := map[string]event.State{}
	for _, c := range s.Children {
		states[c.ChildID] = c.State
	}
	if !s.Complete || !s.Coverage.All || len(states) != 3 || states["agent"] != event.StateRunning ||
		states["build"] != event.StateRunning || states["worker"] != event.StateCreated {
		t.Fatalf("snapshot %s", line)
	}

	for _, want := range []string{
		"\nagent ended: cancelled (exit SIGTERM)\n",
		"\nrefused: exit 3\n",
		"\nworker exited 0 (its parent, this script, sees that; lcwrap cannot)\n",
		" lcwrap-cancel agent diagnostic \n",
		" lcwrap agent terminal cancelled\n",
		" lcwrap build terminal completed\n",
		" lcwrap worker terminal lost\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	// tail --follow subscribes before anything was recorded, and says so.
	e := stderr.String()
	e = regexp.MustCompile(`(?m)^lcwrap: no journal at \S+ yet: waiting for it to be created\n`).ReplaceAllString(e, "")
	if e != "lcwrap: cannot cancel worker: it is an adopted (external) child: lcwrap only observes it and has no authority to cancel it (cancel capability unknown); nothing was sent\n" {
		t.Errorf("stderr %q", e)
	}
}

// checkNoLeftovers fails the test if a process that inherited marker is
// still running (zombies have no environment and do not count); it gives
// processes that are ending 10 s, then kills what is left.
func checkNoLeftovers(t *testing.T, marker string) {
	t.Helper()
	var left []int
	testtool.Poll(10*time.Second, func() bool {
		left = left[:0]
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			if pid, err := strconv.Atoi(d.Name()); err == nil && pid != os.Getpid() && hasMarker(pid, marker) {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	})
	for _, pid := range left {
		// A pidfd first, then the marker again: the pid cannot be someone
		// else's by the time the signal goes out.
		if p, err := os.FindProcess(pid); err == nil {
			if hasMarker(pid, marker) {
				p.Kill()
			}
			p.Release()
		}
	}
	if len(left) > 0 {
		t.Errorf("processes the script started are still running: %v (killed)", left)
	}
}

func hasMarker(pid int, marker string) bool {
	environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	return err == nil && slices.Contains(strings.Split(string(environ), "\x00"), marker)
}
