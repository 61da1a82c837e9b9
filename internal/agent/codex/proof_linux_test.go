package codex

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// TestMain lets the test binary be a helper process: LCWRAP_CODEX_HELPER
// names what it does.
func TestMain(m *testing.M) {
	switch os.Getenv("LCWRAP_CODEX_HELPER") {
	case "serve":
		// Hold the rollout open (fd 3) and serve a unix socket.
		ln, err := net.Listen("unix", os.Getenv("LCWRAP_CODEX_SOCKET"))
		if err != nil {
			os.Exit(3)
		}
		var conns []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(0)
			}
			conns = append(conns, c)
		}
	}
	code := m.Run()
	testtool.Cleanup()
	os.Exit(code)
}

const threadA = "01a23100-aaaa-7bbb-8ccc-000000000001"
const threadB = "01a23100-aaaa-7bbb-8ccc-000000000002"

// rolloutFile writes a rollout named for thread whose session_meta names
// meta, under a sessions/YYYY/MM/DD directory of dir.
func rolloutFile(t *testing.T, dir, thread, meta string) string {
	t.Helper()
	d := filepath.Join(dir, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "rollout-2026-12-01T09-00-00-"+thread+".jsonl")
	line := fmt.Sprintf(`{"timestamp":"2026-12-01T09:00:00.000Z","type":"session_meta","payload":{"id":%q,"timestamp":"2026-12-01T09:00:00.000Z"}}`+"\n", meta)
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs a shell script that the test ends at cleanup, with files as
// its descriptors 3, 4, ...
func start(t *testing.T, script string, files ...string) event.Identity {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL); cmd.Wait() })
	id, _, err := event.IdentityOf(event.System, pid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// proveEventually retries Prove until it returns something other than
// ErrNotYet or the deadline passes (a shell needs a moment to fork).
func proveEventually(t *testing.T, root event.Identity, until func(Proof, error) bool) (Proof, error) {
	t.Helper()
	var p Proof
	var err error
	testtool.Poll(10*time.Second, func() bool { p, err = Prove(root); return until(p, err) })
	return p, err
}

func proven(p Proof, err error) bool { return err == nil }

func TestProveHeldByRoot(t *testing.T) {
	path := rolloutFile(t, t.TempDir(), threadA, threadA)
	root := start(t, "exec sleep 30", path)
	p, err := proveEventually(t, root, proven)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != path || p.ThreadID != threadA || p.Holder.PID != root.PID || len(p.Chain) != 1 {
		t.Errorf("proof %+v", p)
	}
}

func TestProveHeldByDescendant(t *testing.T) {
	path := rolloutFile(t, t.TempDir(), threadA, threadA)
	// The grandchild opens the file itself; root holds nothing.
	root := start(t, fmt.Sprintf(`sh -c 'exec 3<%s; exec sleep 30' & wait`, path))
	p, err := proveEventually(t, root, proven)
	if err != nil {
		t.Fatal(err)
	}
	if p.Holder.PID == root.PID || len(p.Chain) < 2 || p.Chain[0] != root.PID || p.Chain[len(p.Chain)-1] != p.Holder.PID {
		t.Errorf("proof %+v", p)
	}
}

// TestProveDecoy: a rollout of another session, held open by a process
// outside the tree, or by nobody, is never this tree's.
func TestProveDecoy(t *testing.T) {
	dir := t.TempDir()
	decoy := rolloutFile(t, dir, threadB, threadB)
	rolloutFile(t, dir, threadA, threadA) // not held by anyone
	start(t, "exec sleep 30", decoy)      // a sibling, not a descendant: it holds the file from its fork on
	root := start(t, "exec sleep 30")
	if _, err := Prove(root); !errors.Is(err, ErrNotYet) {
		t.Fatalf("Prove = %v, want ErrNotYet", err)
	}
}

func TestProveAmbiguous(t *testing.T) {
	dir := t.TempDir()
	a := rolloutFile(t, dir, threadA, threadA)
	b := rolloutFile(t, dir, threadB, threadB)
	root := start(t, "exec sleep 30", a, b)
	if _, err := proveEventually(t, root, func(_ Proof, err error) bool { return !errors.Is(err, ErrNotYet) }); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("Prove = %v, want ErrAmbiguous", err)
	}
}

func TestProveMismatch(t *testing.T) {
	path := rolloutFile(t, t.TempDir(), threadA, threadB) // named A, says B
	root := start(t, "exec sleep 30", path)
	if _, err := proveEventually(t, root, func(_ Proof, err error) bool { return !errors.Is(err, ErrNotYet) }); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Prove = %v, want ErrMismatch", err)
	}
}

// TestProveShared: a holder that serves a client outside the tree (a
// daemon another codex connected to) proves nothing.
func TestProveShared(t *testing.T) {
	dir := t.TempDir()
	path := rolloutFile(t, dir, threadA, threadA)
	sock := filepath.Join(dir, "daemon.sock")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LCWRAP_CODEX_HELPER=serve", "LCWRAP_CODEX_SOCKET="+sock)
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	root, _, err := event.IdentityOf(event.System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Not yet connected: the helper serves no one, and holds the file.
	if _, err := proveEventually(t, root, proven); err != nil {
		t.Fatalf("unshared: %v", err)
	}
	var c net.Conn
	testtool.Poll(10*time.Second, func() bool { c, err = net.Dial("unix", sock); return err == nil })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := proveEventually(t, root, func(_ Proof, err error) bool { return errors.Is(err, ErrShared) }); !errors.Is(err, ErrShared) {
		t.Fatalf("shared: Prove = %v, want ErrShared", err)
	}
}

func TestProveRootGone(t *testing.T) {
	if _, err := Prove(event.Identity{PID: os.Getpid(), StartTime: 1}); !errors.Is(err, ErrRootGone) {
		t.Fatalf("Prove = %v, want ErrRootGone", err)
	}
}
