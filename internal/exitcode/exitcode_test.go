package exitcode

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The table is in increasing order of code, one row per code and per
// name, every constant has its row, and each command gives a code once.
func TestTable(t *testing.T) {
	constants := map[int]string{
		OK: "ok", Failed: "failed", Refused: "refused",
		CancelNoAuthority: "no-authority", CancelNoSuchChild: "no-such-child", CancelNotRunning: "not-running", CancelWrapperGone: "wrapper-gone",
		EmitUnknown: "write-unknown", Unmet: "unmet", EndUnknown: "end-unknown",
		Timeout: "timeout", Usage: "usage", NotExecutable: "not-executable", NotFound: "not-found",
		codeChild: "child", codeSignal: "signal",
	}
	names := map[string]bool{}
	prev := codeChild - 1
	for _, s := range Table {
		if s.Code <= prev {
			t.Errorf("%s (%d) is out of order", s.Name, s.Code)
		}
		prev = s.Code
		if want, ok := constants[s.Code]; !ok || want != s.Name {
			t.Errorf("row %d %q: the constant's name is %q", s.Code, s.Name, want)
		}
		delete(constants, s.Code)
		if names[s.Name] {
			t.Errorf("name %q twice", s.Name)
		}
		names[s.Name] = true
		if n, err := strconv.Atoi(s.Shown); err == nil && n != s.Code {
			t.Errorf("row %d is shown as %q", s.Code, s.Shown)
		}
		if s.Meaning == "" || len(s.Uses) == 0 {
			t.Errorf("row %d: no meaning or no command", s.Code)
		}
		seen := map[string]bool{}
		for _, u := range s.Uses {
			if !strings.HasPrefix(u.Command, "lcwrap ") || seen[u.Command] {
				t.Errorf("row %d: command %q (twice, or not a full name)", s.Code, u.Command)
			}
			seen[u.Command] = true
		}
	}
	for code, name := range constants {
		t.Errorf("constant %s (%d) has no row", name, code)
	}
}

// Codes 121 to 127 mean the same thing for every command that gives them:
// the small codes are each command's own, these are lcwrap's.
func TestSharedCodesAreLcwraps(t *testing.T) {
	for _, s := range Table {
		if s.Code >= EmitUnknown && s.Code <= NotFound && s.Code != Usage {
			for _, u := range s.Uses {
				if u.Command != Run && u.Command != "lcwrap wait" && u.Command != "lcwrap emit" {
					t.Errorf("%d is given by %s", s.Code, u.Command)
				}
			}
		}
	}
}

func TestFor(t *testing.T) {
	got := For("lcwrap")
	var codes []string
	for _, r := range got {
		codes = append(codes, r.Code)
	}
	if want := []string{"N", "123", "124", "125", "126", "127", "128+N"}; !slices.Equal(codes, want) {
		t.Fatalf("a run's codes %q, want %q", codes, want)
	}
	if !slices.Equal(For("lcwrap"), For(Run)) {
		t.Fatal("lcwrap and lcwrap run differ")
	}
	// wait's rows were reserved until the command came (issue 25).
	var waits []string
	for _, r := range For("lcwrap wait") {
		waits = append(waits, r.Code)
	}
	if want := []string{"N", "0", "1", "122", "123", "124", "125", "128+N"}; !slices.Equal(waits, want) {
		t.Fatalf("wait's codes %q, want %q", waits, want)
	}
	for _, r := range For("lcwrap adopt") {
		if r.Code == "128+N" {
			t.Fatalf("adopt's signal row is not its own: %v", r)
		}
	}
	if !strings.Contains(Markdown(), "| 122 | `unmet` |") || strings.Contains(Markdown(), "(reserved)") {
		t.Fatalf("Markdown:\n%s", Markdown())
	}
}
