package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusEscapesBidi: a command line with a bidi override reaches
// status escaped (issue 23 item 10).
func TestStatusEscapesBidi(t *testing.T) {
	j := filepath.Join(t.TempDir(), "j.jsonl")
	lcwrapRun(t, j, "--child-id", "b1", "--", "echo", "report\u202etxt.exe")
	out, _ := lcwrapRun(t, j, "status", "--all")
	if strings.ContainsRune(out, '\u202e') || !strings.Contains(out, `\u202e`) {
		t.Fatalf("status shows %q", out)
	}
}
