package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// TestTopFleetInTmux runs `lcwrap top --fleet DIR` in a real terminal
// against a gateway's output: three hosts (one silent), the host key,
// then a new line on the live file and a new file after a rotation.
func TestTopFleetInTmux(t *testing.T) {
	bin := binaries(t)
	dir := t.TempDir()
	gw := filepath.Join(dir, "gw")
	if err := os.Mkdir(gw, 0o700); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(gw, "gateway.jsonl")
	now := time.Now()
	build := viewtest.Child{ID: "build", Caps: event.Launched(true).Set, HeartbeatMs: 3600_000, Command: []string{"make", "build"}}
	for _, h := range []struct {
		name string
		ago  time.Duration
	}{{"fleet-a", 2 * time.Second}, {"fleet-b", 2 * time.Minute}, {"fleet-c", 2 * time.Second}} {
		s := viewtest.New(now.Add(-h.ago - time.Second))
		s.Created(build)
		s.States(build, event.StateStarting, event.StateRunning)
		if err := viewtest.AppendGateway(live, viewtest.GatewayLine(h.name, 0, 20*time.Millisecond, s.Out...)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "TERM=xterm-256color"}
	script := fmt.Sprintf(`cd %q; lcwrap top --fleet gw 2>stderr; echo "exit $?" > status; echo TOP-ENDED; sleep 600`, dir)
	p := newPane(t, 120, 30, env, script)
	scr := p.waitFor("lcwrap top --fleet gw", "3 hosts (1 silent)", "SILENT 2m", "stale (host silent)", "H host")
	t.Logf("the first frame:\n%s", scr)
	for _, h := range []string{"fleet-a", "fleet-b", "fleet-c"} {
		if strings.Count(scr, h) != 2 { // its host line and its child's row
			t.Fatalf("%s is not on the screen twice:\n%s", h, scr)
		}
	}
	p.keys("H")
	scr = p.waitFor("host fleet-a (H: next host)")
	if strings.Contains(scr, "fleet-b") || strings.Contains(scr, "fleet-c") {
		t.Fatalf("H shows other hosts than fleet-a:\n%s", scr)
	}
	p.keys("H", "H", "H")
	p.waitFor("fleet-a", "fleet-b", "fleet-c")
	// A new line on the live file, then a rotation and a new file.
	s := viewtest.New(time.Now())
	s.Created(viewtest.Child{ID: "deploy-1", Caps: event.Launched(false).Set, Command: []string{"deploy"}})
	if err := viewtest.AppendGateway(live, viewtest.GatewayLine("fleet-a", 3, 20*time.Millisecond, s.Out...)); err != nil {
		t.Fatal(err)
	}
	p.waitFor("deploy-1")
	if err := os.Rename(live, filepath.Join(gw, "gateway-2026-11-30T14-00-00.000-size.jsonl")); err != nil {
		t.Fatal(err)
	}
	s = viewtest.New(time.Now())
	s.Created(viewtest.Child{ID: "lint-9", Caps: event.Launched(false).Set, Command: []string{"lint"}})
	if err := viewtest.AppendGateway(live, viewtest.GatewayLine("fleet-d", 0, 20*time.Millisecond, s.Out...)); err != nil {
		t.Fatal(err)
	}
	scr = p.waitFor("lint-9", "4 hosts (1 silent)")
	if n := strings.Count(scr, "make build"); n != 3 {
		t.Fatalf("after the rotation %d builds are shown, want 3 (nothing read twice):\n%s", n, scr)
	}
	p.keys("q")
	p.waitFor("TOP-ENDED")
	if st := readFile(t, filepath.Join(dir, "status")); st != "exit 0\n" {
		t.Fatalf("top --fleet ended with %q; stderr: %s", st, readFile(t, filepath.Join(dir, "stderr")))
	}
}
