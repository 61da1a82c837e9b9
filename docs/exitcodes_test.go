package docs

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/exitcode"
)

// updating reports whether -update was given: the one flag, defined by
// internal/doccapture, that rewrites the generated parts of the docs (go
// generate ./docs rewrites the exit-status table with it).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const (
	exitCodesBegin = "<!-- exit-codes: generated from internal/exitcode; rewrite with 'go generate ./docs'; do not edit by hand -->\n"
	exitCodesEnd   = "<!-- end exit-codes -->\n"
)

// docs/run.md shows the one exit-status table as internal/exitcode holds
// it; 'go generate ./docs' rewrites it.
func TestExitCodeTable(t *testing.T) {
	const file = "run.md"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	head, rest, ok := strings.Cut(text, exitCodesBegin)
	if !ok {
		t.Fatalf("%s has no line %q", file, exitCodesBegin)
	}
	table, tail, ok := strings.Cut(rest, exitCodesEnd)
	if !ok {
		t.Fatalf("%s has no line %q after the table", file, exitCodesEnd)
	}
	want := exitcode.Markdown()
	if table == want {
		return
	}
	if updating() {
		if err := os.WriteFile(file, []byte(head+exitCodesBegin+want+exitCodesEnd+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's exit-status table differs from internal/exitcode: run 'go generate ./docs'\nwant:\n%s\nhave:\n%s", file, want, table)
}
