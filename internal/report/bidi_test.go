package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/report"
	"github.com/lcwrap/lcwrap/internal/view/viewtest"
)

// bidiRunes are the bidirectional controls that reorder what is shown.
const bidiRunes = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

// TestReportEscapesBidi: bidi controls in a command line, an activity and
// details never reach the page as themselves (issue 23 item 10).
func TestReportEscapesBidi(t *testing.T) {
	s := viewtest.New(t0)
	c := viewtest.Child{ID: "evil-1", Command: []string{"cat", "report\u202etxt.exe"}}
	s.Created(c)
	s.States(c, event.StateStarting, event.StateRunning)
	s.Event(c, event.KindActivity, "", "open exe.\u2067txt\u2069 \u200f\u061c", nil)
	s.Event(c, event.KindDiagnostic, "", "", map[string]any{"message": "file \u202dgpj.exe"})
	m := model(t, s, s.At)
	var b bytes.Buffer
	if _, err := report.Write(&b, m, report.Options{Input: "j.jsonl", Now: s.At}); err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexAny(b.String(), bidiRunes); i >= 0 {
		t.Fatalf("a bidi control reached the page: %q", b.String()[max(0, i-40):min(b.Len(), i+40)])
	}
	if !strings.Contains(b.String(), "U+202E") && !strings.Contains(b.String(), `\u202e`) {
		t.Error("the escaped control is not shown")
	}
}
