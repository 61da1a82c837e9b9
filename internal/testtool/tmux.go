package testtool

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Tmux is one test's private tmux server: its own socket in the test's
// temporary directory, no configuration file, killed when the test ends.
type Tmux struct {
	t    *testing.T
	sock string
}

// NewTmux starts nothing yet: the first Do("new-session", ...) starts the
// server. A missing tmux skips the test (fails it under CI).
func NewTmux(t *testing.T) *Tmux {
	t.Helper()
	Need(t, "tmux", "apt-get install tmux")
	x := &Tmux{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", x.sock, "kill-server").Run() })
	return x
}

// Do runs tmux with args on this server and returns its output; a tmux
// that fails fails the test.
func (x *Tmux) Do(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Screen is the text of target's pane ("" once it has ended).
func (x *Tmux) Screen(target string) string {
	out, _ := exec.Command("tmux", "-S", x.sock, "capture-pane", "-p", "-t", target).CombinedOutput()
	return string(out)
}

// Try runs tmux with args on this server and returns its error, for a
// step that may find the session gone (a key sent as a program ends).
func (x *Tmux) Try(args ...string) error {
	return exec.Command("tmux", append([]string{"-S", x.sock, "-f", "/dev/null"}, args...)...).Run()
}
