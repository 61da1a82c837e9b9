package emit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// TestEmitCutsAnEventOverTheLineCap: an event too large for one line is
// written cut to fit, with details.cut saying what went and how much,
// never dropped (issue 23 item 2).
func TestEmitCutsAnEventOverTheLineCap(t *testing.T) {
	many := make([]any, 20000)
	for i := range many {
		many[i] = "argument"
	}
	for name, d := range map[string]event.FreeDetails{
		"string": {"command": []any{"echo", strings.Repeat("é", 60<<10)}, "note": "kept"},
		"array":  {"command": many, "note": "kept"},
	} {
		t.Run(name, func(t *testing.T) {
			w := &countingWriter{}
			e := New(Options{}, NewWriterSink("test", w))
			c := e.Child("c", event.Lineage{}, event.Launched(false))
			if _, err := c.Emit(Spec{Kind: event.KindActivity, Activity: "a", Details: d}); err != nil {
				t.Fatal(err)
			}
			if len(w.writes) != 1 || len(w.writes[0]) > MaxLine {
				t.Fatalf("%d writes, %d bytes", len(w.writes), len(w.writes[0]))
			}
			ev, _, err := event.Parse([]byte(strings.TrimSpace(string(w.writes[0]))))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Command []string
				Note    string
				Cut     struct {
					Bytes  int
					Fields []string
				}
			}
			if err := json.Unmarshal(ev.Details, &got); err != nil {
				t.Fatal(err)
			}
			if got.Note != "kept" || got.Cut.Bytes < 1000 || len(got.Cut.Fields) != 1 || got.Cut.Fields[0] != "command" || !strings.Contains(got.Command[len(got.Command)-1], "…[cut ") {
				t.Fatalf("details %.300s", ev.Details)
			}
		})
	}
}
