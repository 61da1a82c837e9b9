package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/projection"
	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/view"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// model is the live model of a scene, synced at now.
var model = viewtest.Model

func TestReportSelfContained(t *testing.T) {
	s := viewtest.Standard(t0)
	m := model(t, s, s.At)
	var b bytes.Buffer
	sum, err := report.Write(&b, m, report.Options{Input: "j.jsonl", Now: s.At.Add(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if regexp.MustCompile(`(?i)https?:|src=|<script|<link|url\([^#]`).MatchString(h) {
		t.Fatal("the report refers to something outside itself")
	}
	for _, want := range []string{`Content-Security-Policy" content="default-src 'none'`, `data-child="sub-tests" data-state="waiting"`, `data-child="fetch-2"`, "rect class=stale", "?5", "observed from outside"} {
		if !strings.Contains(h, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(h, "sk-ant") {
		t.Fatal("a secret reached the report")
	}
	if sum.Drawn != 10 || len(sum.Aggregated) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	// Past the limit, ended children are counted, not drawn.
	b.Reset()
	sum, _ = report.Write(&b, m, report.Options{Now: s.At, Limit: 6})
	if sum.Aggregated["failed"]+sum.Aggregated["completed"] != 3 || !strings.Contains(b.String(), "3 ended children are not drawn") {
		t.Fatalf("aggregate %+v", sum)
	}
	// --child keeps a subtree; --since leaves out what ended before.
	b.Reset()
	sum, _ = report.Write(&b, m, report.Options{Now: s.At, Children: []string{"session-1", "nope"}})
	if sum.Matched != 3 || len(sum.Unmatched) != 1 || strings.Contains(b.String(), `data-child="build-7"`) {
		t.Fatalf("--child: %+v", sum)
	}
	b.Reset()
	sum, _ = report.Write(&b, m, report.Options{Now: s.At, Since: s.At.Add(-time.Second).UnixMilli()})
	if strings.Contains(b.String(), `data-child="build-7"`) || !strings.Contains(b.String(), `data-child="agent-1"`) {
		t.Fatalf("--since: %+v", sum)
	}
	b.Reset()
	report.Write(&b, view.NewModel(), report.Options{Now: s.At})
	if !strings.Contains(b.String(), projection.NoEvidence) {
		t.Fatal("no evidence message missing")
	}
}
