package copilot_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// top runs `lcwrap top` on the world's journal in a tmux pane of its own
// (150×rows), sends keys (if any), waits until the pane shows every one of
// want, and returns the pane's text without its trailing blank lines.
func (w *world) top(lc string, rows int, keys string, want ...string) string {
	w.t.Helper()
	x := testtool.NewTmux(w.t)
	script := filepath.Join(w.t.TempDir(), "top.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd '" + w.project + "' || exit 1\n")
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, " '\"$") || k == "TERM" {
			continue
		}
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	fmt.Fprintf(&b, "export NO_COLOR=1\nexec %s top\n", lc)
	os.WriteFile(script, []byte(b.String()), 0o755)
	x.Do("new-session", "-d", "-s", "t", "-x", "150", "-y", fmt.Sprint(rows), script)
	if keys != "" {
		waitFor(w.t, "top's first screen", func() bool { return strings.Contains(x.Screen("t"), "CHILD") }, func() string { return x.Screen("t") })
		x.Do("send-keys", "-t", "t", keys)
	}
	var screen string
	waitFor(w.t, "top showing "+strings.Join(want, ", "), func() bool {
		screen = x.Screen("t")
		for _, s := range want {
			if !strings.Contains(screen, s) {
				return false
			}
		}
		return true
	}, func() string { return screen })
	x.Do("send-keys", "-t", "t", "q")
	return strings.TrimRight(screen, "\n ") + "\n"
}

// report writes `lcwrap report` of the world's journal and returns it;
// with -update, a headless Chromium's screenshot of it becomes
// docs/img/SHOT (the one docs/agents-copilot.md shows).
func (w *world) report(lc, shot string) string {
	w.t.Helper()
	path := filepath.Join(w.t.TempDir(), "report.html")
	if _, errs, code := w.run(lc, "report", "--html", path); code != 0 {
		w.t.Fatalf("report: %d %s", code, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		png := filepath.Join(w.t.TempDir(), "shot.png")
		testtool.Chromium(w.t, path, "--window-size=1280,620", "--hide-scrollbars", "--screenshot="+png)
		img, err := os.ReadFile(png)
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "..", "docs", "img", shot), img, 0o644)
		}
		if err != nil {
			w.t.Fatal(err)
		}
	}
	return string(b)
}
