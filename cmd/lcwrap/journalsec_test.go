package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/agent/claudecode"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
)

// A hook handler given a journal another user planted (mode 0666 in a
// shared directory) records nothing there, yet never fails its agent:
// exit 0, nothing on stdout, one line on stderr naming the file and why,
// and the events kept (counted) for a later call.
func TestHookWithAnotherUsersJournal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it chowns the journal to another user (uid 65534)")
	}
	dir := filepath.Join(t.TempDir(), "tmp")
	os.Mkdir(dir, 0o777)
	os.Chmod(dir, 0o777|os.ModeSticky)
	path := filepath.Join(dir, "journal.jsonl")
	os.WriteFile(path, nil, 0o666)
	os.Chown(path, 65534, 65534)
	os.Chmod(path, 0o666)
	payload, err := os.ReadFile("../../internal/agent/claudecode/testdata/hooks/01-SessionStart.json")
	if err != nil {
		t.Fatal(err)
	}
	for call := 1; call <= 2; call++ {
		cmd := adapterCmd(t, path, "hook", "claude-code")
		cmd.Env = append(cmd.Env, claudecode.EnvHookURL+"=")
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(payload), &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("the hook failed its agent: %v\n%s", err, errb.String())
		}
		if out.Len() != 0 {
			t.Fatalf("the hook printed on stdout: %q", out.String())
		}
		msg := errb.String()
		for _, want := range []string{path, "owned by uid 65534", fmt.Sprintf("%d events kept for the next hook call", call+1)} {
			if !strings.Contains(msg, want) {
				t.Errorf("call %d: stderr does not say %q: %s", call, want, msg)
			}
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatal("the hook wrote into another user's journal")
	}
	// A reader reads it, with a warning.
	os.WriteFile(path, []byte(`{"schemaVersion":1,"eventId":"e-1","source":"s","sourceEpoch":"e","childId":"c","lineage":{"rootChildId":"c","attempt":0,"external":false},"kind":"heartbeat","observedAt":"2026-11-30T12:00:00.000Z","capabilities":{"history":"unknown","heartbeat":"unknown","snapshot":"unknown","cancel":"unknown","terminalCause":"unknown"},"journalSequence":1}`+"\n"), 0o666)
	stdout, stderr, code := lcwrapExit(t, path, "", "tail")
	if code != 0 || !strings.Contains(stdout, `"eventId":"e-1"`) || !strings.Contains(stderr, "warning: journal "+path+" is owned by uid 65534") {
		t.Fatalf("tail of another user's journal: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// An emit whose line went into the journal but whose lock was taken from
// it meanwhile (a writer without the kernel lock replaced the owner
// record) says "unknown whether written" and exits 121, never "not
// written" (exit 1), which a retrying caller would act on. The journal is
// large and the child new, so the emit holds the lock long enough (it
// reads the journal backwards for the child's last sequence) for the
// test to take it meanwhile.
func TestEmitUnknownWhetherWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	var big bytes.Buffer
	for i := int64(1); i <= 20000; i++ {
		ev := event.Event{SchemaVersion: 1, EventID: fmt.Sprintf("e/%d", i), Source: "s", SourceEpoch: "e", ChildID: "old",
			Lineage: event.Lineage{RootChildID: "old"}, Kind: event.KindHeartbeat, ObservedAt: "2026-11-30T12:00:00.000Z",
			Sequence: event.Int64(i), Capabilities: event.AllUnknown()}
		b, _ := ev.Marshal()
		big.Write(b[:len(b)-1])
		fmt.Fprintf(&big, `,"journalSequence":%d}`+"\n", i)
	}
	if err := os.WriteFile(path, big.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The foreign writer: whenever the lock holds a record that is not
	// its own, it writes its own token into it.
	var robbed atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec := filepath.Join(path+".lock", "owner.json")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(rec); err == nil && !bytes.Contains(b, []byte(`"robbed"`)) && bytes.Contains(b, []byte(`"token":"`)) {
				i := bytes.Index(b, []byte(`"token":"`)) + len(`"token":"`)
				j := i + bytes.IndexByte(b[i:], '"')
				nb := append(append(append([]byte(nil), b[:i]...), "robbed"...), b[j:]...)
				if os.WriteFile(rec, nb, 0o600) == nil {
					robbed.Add(1)
				}
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	start := time.Now()
	stdout, stderr, code := lcwrapExit(t, path, "", "emit", "--child-id", "fresh", "--kind", "heartbeat")
	t.Logf("emit took %v; the lock was taken %d times", time.Since(start), robbed.Load())
	close(stop)
	<-done
	if robbed.Load() == 0 {
		t.Skipf("the emit released the lock before it could be taken (exit %d)", code)
	}
	written := false
	journal.Scan(path, 0, func(rec event.Record, _ []byte) error {
		written = written || rec.Event.ChildID == "fresh"
		return nil
	})
	if !written {
		t.Fatalf("the line is not in the journal (exit %d): %s", code, stderr)
	}
	if code != exitUncertain || !strings.Contains(stderr, "unknown whether the event was written") || strings.Contains(stderr, "not written") {
		t.Fatalf("emit wrote its line, then lost the lock: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// The documented step that breaks a lock lcwrap cannot judge: the
// timeout names it with the token; with another token it removes
// nothing; with the token it frees the journal.
func TestJournalUnlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if _, _, code := lcwrapExit(t, path, "", "emit", "--child-id", "a", "--kind", "heartbeat"); code != 0 {
		t.Fatal("first emit failed")
	}
	lock := path + ".lock"
	os.Mkdir(lock, 0o700)
	rec := `{"pid":1,"token":"other-ns-4242","createdAt":1,"pidNs":"pid:[1]"}`
	os.WriteFile(filepath.Join(lock, "owner.json"), []byte(rec), 0o600)
	_, stderr, code := lcwrapExit(t, path, "", "emit", "--child-id", "a", "--kind", "heartbeat", "--lock-timeout", "300ms", "--lock-stale-after", "1ms")
	if code != 1 || !strings.Contains(stderr, "another PID namespace") || !strings.Contains(stderr, "lcwrap journal unlock --journal "+path+" --token other-ns-4242") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, stderr, code = lcwrapExit(t, path, "", "journal", "unlock", "--journal", path, "--token", "wrong")
	if code != 1 || !strings.Contains(stderr, "not wrong; nothing removed") {
		t.Fatalf("unlock with another token: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(lock, "owner.json")); string(b) != rec {
		t.Fatal("the lock was touched")
	}
	stdout, stderr, code := lcwrapExit(t, path, "", "journal", "unlock", "--journal", path, "--token", "other-ns-4242")
	if code != 0 || !strings.Contains(stdout, "broke the lock of pid 1 of another PID namespace") {
		t.Fatalf("unlock: exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock is still there: %v", err)
	}
	if _, stderr, code := lcwrapExit(t, path, "", "emit", "--child-id", "a", "--kind", "heartbeat"); code != 0 {
		t.Fatalf("emit after unlock: %s", stderr)
	}
	// An owner that is alive is never broken.
	os.Mkdir(lock, 0o700)
	me, _ := event.SelfIdentity()
	os.WriteFile(filepath.Join(lock, "owner.json"), []byte(fmt.Sprintf(`{"pid":%d,"token":"alive","createdAt":1,"startTime":%d}`, me.PID, me.StartTime)), 0o600)
	if _, stderr, code := lcwrapExit(t, path, "", "journal", "unlock", "--journal", path, "--token", "alive"); code != 1 || !strings.Contains(stderr, "alive") {
		t.Fatalf("unlock of a live owner: exit %d: %s", code, stderr)
	}
}
