package report_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

func TestReportInChromium(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At.Add(10*time.Second))
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if _, err := report.Write(&b, m, report.Options{Input: "journal.jsonl", Now: s.At.Add(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// No network: nothing in the file names a place to fetch from, and the
	// policy forbids every fetch anyway.
	if regexp.MustCompile(`(?i)(https?|wss?|ftp)://`).Match(b.Bytes()) {
		t.Fatal("the report names a URL")
	}
	dom := string(testtool.Chromium(t, file, "--dump-dom"))
	for _, c := range []struct{ id, state string }{
		{"agent-1", "running"}, {"session-1", "running"}, {"sub-tests", "waiting"}, {"sub-explore", "running"},
		{"build-7", "failed"}, {"build-7-a1", "completed"}, {"test-3", "failed"}, {"server-9", "observed"}, {"fetch-2", "running"},
	} {
		want := `<tr data-child="` + c.id + `" data-state="` + c.state + `">`
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %s", want)
		}
	}
	if !strings.Contains(dom, `class="stale"`) || !strings.Contains(dom, "observed from outside") {
		t.Error("the DOM lacks the stale span or the capability reasons")
	}
	shot := filepath.Join(dir, "shot.png")
	testtool.Chromium(t, file, "--screenshot="+shot, "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours := map[uint32]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			colours[(cr>>11)<<10|(cg>>11)<<5|cb>>11]++
		}
	}
	if len(colours) < 8 {
		t.Fatalf("the screenshot is blank: %d colours", len(colours))
	}
	// The state colours are drawn: waiting's amber, running's green.
	for name, want := range map[string][3]uint32{"waiting": {0xf0, 0xb4, 0x00}, "running": {0x2e, 0x9d, 0x4a}} {
		k := (want[0]>>3)<<10 | (want[1]>>3)<<5 | want[2]>>3
		if colours[k] == 0 {
			t.Errorf("no %s colour in the screenshot", name)
		}
	}
	if p := os.Getenv("LCWRAP_REPORT_SHOT"); p != "" {
		os.WriteFile(p, mustRead(t, shot), 0o644)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
