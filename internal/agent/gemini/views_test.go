package gemini_test

import (
	"os"
	"path/filepath"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

// top is `lcwrap top` on the world's journal as a capture holds it
// (testtool.TopScreen: 150×rows, keys sent, every one of want shown).
func (w *world) top(lc string, rows int, keys string, want ...string) string {
	w.t.Helper()
	return testtool.TopScreen(w.t, lc, w.project, w.env, rows, keys, want...)
}

// report writes `lcwrap report` of the world's journal and returns it;
// with -update, a headless Chromium's screenshot of it becomes
// docs/img/SHOT (the one docs/agents-gemini.md shows).
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
	testtool.ShotOnUpdate(w.t, path, filepath.Join("..", "..", "..", "docs", "img", shot), "1280,620")
	return string(b)
}
