package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestValidateReadsAFIFOAsAStream: validate reads a FIFO to its end, as
// its help says (issue 23 item 12).
func TestValidateReadsAFIFOAsAStream(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "j.jsonl")
	lcwrapRun(t, j, "--child-id", "v1", "--", "true")
	b, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(b)
			f.Close()
		}
	}()
	out, _ := lcwrapRun(t, j, "validate", fifo)
	if !strings.Contains(out, "valid") {
		t.Fatalf("validate %s: %q", fifo, out)
	}
	help, _ := lcwrapRun(t, j, "validate", "--help")
	if !strings.Contains(help, "is read as a stream") {
		t.Fatalf("validate --help does not say a FIFO or device is read as a stream:\n%s", help)
	}
}
