package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// TestHugeCommandLineIsCutNotDropped: a command line over the journal's
// line cap (one long argument; many short ones) is recorded cut, with a
// marker, created and terminal alike, --journal-required too (issue 23
// item 2).
func TestHugeCommandLineIsCutNotDropped(t *testing.T) {
	many := make([]string, 12000)
	for i := range many {
		many[i] = fmt.Sprintf("arg%05d", i)
	}
	for name, args := range map[string][]string{
		"long":  {strings.Repeat("a", 100<<10)},
		"many":  many,
		"mixed": append([]string{strings.Repeat("b", 60<<10)}, many[:3000]...),
	} {
		t.Run(name, func(t *testing.T) {
			j := filepath.Join(t.TempDir(), "j.jsonl")
			_, stderr, code := lcwrapExit(t, j, "", append([]string{"--journal-required", "--child-id", "big", "--", "true"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var kinds []string
			var cut bool
			err := journal.Scan(j, 0, func(rec event.Record, raw []byte) error {
				kinds = append(kinds, string(rec.Event.Kind))
				if rec.Event.Kind == event.KindCreated {
					cut = strings.Contains(string(raw), `"cut":`)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(kinds) == 0 || kinds[0] != "created" || kinds[len(kinds)-1] != "terminal" || !cut {
				b, _ := os.ReadFile(j)
				t.Fatalf("kinds %v, cut marker %v; journal %d bytes: %.300s", kinds, cut, len(b), b)
			}
		})
	}
}
