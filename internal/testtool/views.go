package testtool

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TopScreen runs `LCWRAP top` (NO_COLOR) in dir with env in a private
// tmux pane of 150×rows, sends keys (if any) once its first screen is up,
// waits until the pane shows every one of want (90 s at most), quits it
// and returns the pane's text without its trailing blank lines: what a
// documentation capture of top holds.
func TopScreen(t *testing.T, lcwrap, dir string, env []string, rows int, keys string, want ...string) string {
	t.Helper()
	x := NewTmux(t)
	script := filepath.Join(t.TempDir(), "top.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + dir + "' || exit 1\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") || k == "TERM" {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	fmt.Fprintf(&b, "export NO_COLOR=1\nexec %s top\n", lcwrap)
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	x.Do("new-session", "-d", "-s", "t", "-x", "150", "-y", fmt.Sprint(rows), script)
	var screen string
	shows := func(want ...string) bool {
		screen = x.Screen("t")
		for _, s := range want {
			if !strings.Contains(screen, s) {
				return false
			}
		}
		return true
	}
	if keys != "" {
		if !Poll(90*time.Second, func() bool { return shows("CHILD") }) {
			t.Fatalf("waited 90s for top's first screen\n%s", screen)
		}
		x.Do("send-keys", "-t", "t", keys)
	}
	if !Poll(90*time.Second, func() bool { return shows(want...) }) {
		t.Fatalf("waited 90s for top showing %s\n%s", strings.Join(want, ", "), screen)
	}
	x.Do("send-keys", "-t", "t", "q")
	return strings.TrimRight(screen, "\n ") + "\n"
}

// ShotOnUpdate, when the test runs with -update, writes a headless
// Chromium's screenshot of the local page html (window "W,H") to dst (a
// documentation image); otherwise it does nothing.
func ShotOnUpdate(t *testing.T, html, dst, window string) {
	t.Helper()
	if f := flag.Lookup("update"); f == nil || f.Value.String() != "true" {
		return
	}
	png := filepath.Join(t.TempDir(), "shot.png")
	Chromium(t, html, "--window-size="+window, "--hide-scrollbars", "--screenshot="+png)
	img, err := os.ReadFile(png)
	if err == nil {
		err = os.WriteFile(dst, img, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
