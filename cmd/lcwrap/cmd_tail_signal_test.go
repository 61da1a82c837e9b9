package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTailInterruptedInItsBacklog: ^C ends tail while it is still printing
// the lines already in the journal, not once it has read them all (issue
// 23 item 12). Its output is a pipe the test does not read until the
// signal is sent, so tail is held mid-backlog, blocked on the full pipe.
func TestTailInterruptedInItsBacklog(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "journal.jsonl")
	const lines = 20000
	var b bytes.Buffer
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, `{"schemaVersion":1,"eventId":"e/c/%d","source":"lcwrap","sourceEpoch":"e","childId":"c","lineage":{"rootChildId":"c","attempt":0,"external":false},"kind":"heartbeat","observedAt":"2026-12-01T09:00:00.000Z","sequence":%d,"capabilities":{"history":"known","heartbeat":"known","snapshot":"unknown","cancel":"known","terminalCause":"known"},"journalSequence":%d}`+"\n", i, i, i)
	}
	if err := os.WriteFile(j, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := lcwrapCmd(t, j, "tail", "--follow")
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Held on the full pipe: the first line has arrived, and the process
	// waits in a write (its state in /proc is S, sleeping, with the pipe
	// full). Reading one line proves it started printing.
	r := bufio.NewReader(pr)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("no first line: %v (%s)", err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	n := 1
	for {
		if _, err := r.ReadString('\n'); err != nil {
			break
		}
		n++
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("tail ended with %v (%s)", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("tail did not end on SIGINT (printed %d of %d lines)", n, lines)
	}
	if n >= lines {
		t.Fatalf("tail printed all %d lines of its backlog after SIGINT, want it to stop where it was", n)
	}
}
