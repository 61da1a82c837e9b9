package report_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/testtool"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// fleetReport writes the report of a gateway's output with three hosts
// running the same child ids: fleet-a heard 5 s ago, fleet-b silent for
// 90 s, fleet-c heard 5 s ago with a clock ten minutes behind.
func fleetReport(t *testing.T, now time.Time) string {
	t.Helper()
	dir := t.TempDir()
	gw := filepath.Join(dir, "gateway.jsonl")
	build := viewtest.Child{ID: "build", Caps: event.Launched(true).Set, HeartbeatMs: 10_000, Command: []string{"make", "build"}}
	test := viewtest.Child{ID: "test", Caps: event.Launched(true).Set, Command: []string{"go", "test", "./..."}}
	for _, h := range []struct {
		name string
		skew time.Duration
		last time.Duration
	}{{"fleet-a", 0, 5500 * time.Millisecond}, {"fleet-b", 0, 90 * time.Second}, {"fleet-c", 10 * time.Minute, 5500 * time.Millisecond}} {
		s := viewtest.New(now.Add(-h.skew - h.last - 2*time.Minute))
		s.Created(test)
		s.States(test, event.StateStarting, event.StateRunning)
		s.At = s.At.Add(40 * time.Second)
		s.End(test, event.StateFailed, 1)
		s.Created(build)
		s.States(build, event.StateStarting, event.StateRunning)
		s.At = now.Add(-h.skew - h.last)
		s.Event(build, event.KindHeartbeat, "", "", nil)
		if err := viewtest.AppendGateway(gw, viewtest.GatewayLine(h.name, 0, h.skew+20*time.Millisecond, s.Out...)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fleet.NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := fleet.New(fleet.Options{Now: func() time.Time { return now }, SilentAfter: 30 * time.Second})
	m := f.NewModel()
	if err := r.Pass(func(it *fleet.Item) error { f.ApplyTo(m, it); return nil }); err != nil {
		t.Fatal(err)
	}
	m.Sync(now)
	var b bytes.Buffer
	sum, err := report.Write(&b, m, report.Options{Input: dir, Now: now, Fleet: &report.Fleet{Hosts: f.HostViews(), Totals: f.Totals()}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Drawn != 6 {
		t.Fatalf("drawn %d, want 6 (two children on each of three hosts)", sum.Drawn)
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestFleetReportInChromium(t *testing.T) {
	now := time.Now().UTC()
	file := fleetReport(t, now)
	dom := string(testtool.Chromium(t, file, "--dump-dom"))
	// Hosts as lanes, in order, each followed by its own children.
	lanes := []string{`<div class="lane" data-host="fleet-a">fleet-a · last heard 5s ago`,
		`<div class="lane" data-host="fleet-b">fleet-b · SILENT since`, `<div class="lane" data-host="fleet-c">fleet-c · last heard 5s ago · skew +600020ms`}
	last := -1
	for _, l := range lanes {
		i := strings.Index(dom, l)
		if i < 0 || i < last {
			t.Fatalf("the DOM lacks lane %q (or out of order):\n%s", l, dom[:min(len(dom), 4000)])
		}
		last = i
	}
	for _, h := range []string{"fleet-a", "fleet-b", "fleet-c"} {
		for _, c := range []struct{ id, state string }{{"build", "running"}, {"test", "failed"}} {
			for _, want := range []string{
				`<tr data-host="` + h + `" data-child="` + c.id + `" data-state="` + c.state + `"><td class="host">` + h + `</td>`,
				`<a class="tl" href="#`, `data-host="` + h + `" data-child="` + c.id + `"`,
			} {
				if !strings.Contains(dom, want) {
					t.Errorf("the DOM lacks %s", want)
				}
			}
		}
	}
	if !strings.Contains(dom, "<th>HOST</th><th>CHILD</th>") || !strings.Contains(dom, `<tr class="silent" data-host="fleet-b">`) {
		t.Error("the DOM lacks the HOST column or the silent host's row")
	}
	// The silent host's open child is stale for its silence, hatched; the
	// host whose clock is behind is not stale.
	if !strings.Contains(dom, "host silent since") || !strings.Contains(dom, "stale (host silent)") {
		t.Error("the DOM does not say fleet-b's build is stale for its host's silence")
	}
	rowOf := func(host string) string {
		i := strings.Index(dom, `<tr data-host="`+host+`" data-child="build"`)
		j := strings.Index(dom[i:], "</tr>")
		return dom[i : i+j]
	}
	if r := rowOf("fleet-c"); strings.Contains(r, "stale") || !strings.Contains(r, "5s ago") {
		t.Errorf("fleet-c's build is judged off its own clock: %s", r)
	}
	if r := rowOf("fleet-b"); !strings.Contains(r, "stale (host silent)") {
		t.Errorf("fleet-b's build is not stale: %s", r)
	}
	shot := filepath.Join(filepath.Dir(file), "shot.png")
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
	// running's green, failed's red, the silent host's amber row.
	for name, want := range map[string][3]uint32{"running": {0x2e, 0x9d, 0x4a}, "failed": {0xd4, 0x3c, 0x3c}, "silent": {0xff, 0xf4, 0xd6}} {
		k := (want[0]>>3)<<10 | (want[1]>>3)<<5 | want[2]>>3
		if colours[k] == 0 {
			t.Errorf("no %s colour in the screenshot", name)
		}
	}
	if p := os.Getenv("LCWRAP_REPORT_SHOT"); p != "" {
		os.WriteFile(p, mustRead(t, shot), 0o644)
	}
}
