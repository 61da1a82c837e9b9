package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/event"
)

// FuzzOwnerRecord: the owner-record reader never panics, accepts only a
// record with a positive pid and a token, and reads back what lcwrap
// writes.
func FuzzOwnerRecord(f *testing.F) {
	f.Add([]byte(`{"pid":31337,"token":"0b6c1f7e-3f0a-4c55-9a51-7f6f2a2d9c11","createdAt":1787562930000}`))
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reference", "lock-owner-reference-format.json")); err == nil {
		f.Add(b)
	}
	l := &locker{}
	_, rec := l.newRecord()
	f.Add(rec)
	f.Add([]byte(`{"pid":-1,"token":"x"}`))
	f.Add([]byte(`{"pid":1,"token":"","protocol":"lcwrap-kernel-lock/1"}`))
	f.Add([]byte(`{"pid":1e3,"token":"t","createdAt":"soon","pidNs":7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseOwner(b)
		if err != nil {
			if !errors.Is(err, errNoOwner) {
				t.Fatalf("error not typed: %v", err)
			}
			return
		}
		if o.PID <= 0 || o.Token == "" {
			t.Fatalf("accepted %+v", o)
		}
		_ = o.String()
		again, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		// The same record as encoding/json writes (HTML escaping aside).
		if hand, err := parseOwner(o.appendJSON(nil)); err != nil || hand != o {
			t.Fatalf("appendJSON %s reads back as %+v (%v), want %+v", o.appendJSON(nil), hand, err, o)
		}
		o2, err := parseOwner(again)
		if err != nil || o2 != o {
			t.Fatalf("round trip: %+v -> %+v (%v)", o, o2, err)
		}
	})
}

// FuzzQuarantineReader writes arbitrary bytes as the live file of a
// journal whose first part is a sealed file, and reads it: no panic, no
// hang; journalSequence strictly increases; a quarantine record is only
// honoured for the exact range it names; Repair then leaves every byte in
// place and the journal clean and appendable.
func FuzzQuarantineReader(f *testing.F) {
	for _, name := range []string{"valid.jsonl", "malformed.jsonl", "truncated.jsonl", "non-monotonic-gap.jsonl"} {
		f.Add(fixture(f, filepath.Join("journal", name)), false)
	}
	// A healed journal and a rotated one, as lcwrap writes them.
	dir := f.TempDir()
	healed := filepath.Join(dir, "healed.jsonl")
	os.WriteFile(healed, append(journalLine("a", 1, 1), []byte(`{"torn`)...), 0o600)
	if j, err := Open(healed, Options{}); err == nil {
		j.Append([][]byte{testEvent("a", 2)}, false)
		j.Close()
	}
	if b, err := os.ReadFile(healed); err == nil {
		f.Add(b, false)
		f.Add(bytes.Replace(b, []byte(`"from":`), []byte(`"from":1`), 1), false) // a forged range
	}
	var d controlDetails
	d.Journal.Segment = &SegmentStart{Sealed: "x", FirstSequence: 2}
	seg := append(controlLine(d)[:0:0], controlLine(d)...)
	seg = append(seg[:len(seg)-1], []byte(`,"journalSequence":2}`+"\n")...)
	f.Add(append(seg, journalLine("b", 1, 3)...), true)
	n := 0
	f.Fuzz(func(t *testing.T, content []byte, rotated bool) {
		n++

		path := filepath.Join(dir, fmt.Sprintf("j%d", n), "journal.jsonl")
		os.MkdirAll(filepath.Dir(path), 0o700)
		defer os.RemoveAll(filepath.Dir(path))
		if rotated {
			os.WriteFile(sealedName(path, 1), journalLine("s", 1, 1), 0o600)
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		var last int64
		// A live file that does not continue the sealed ones was replaced:
		// it is read from its start, and numbering starts again.
		replaced := func(n Notice) {
			if n.Kind == NoticeReplaced {
				last = 0
			}
		}
		err := Read(path, ReadOptions{Control: true, OnNotice: replaced}, func(rec event.Record, raw []byte) error {
			if rec.JournalSequence <= last {
				return fmt.Errorf("journalSequence %d after %d", rec.JournalSequence, last)
			}
			last = rec.JournalSequence
			return nil
		})
		var be *BlockedError
		if err != nil && !errors.As(err, &be) {
			t.Fatal(err)
		}
		r, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Clean() != (be == nil) {
			t.Fatalf("Read blocked %v, Verify clean %v", be, r.Clean())
		}
		for _, q := range r.Quarantined {
			if q.From < 0 || q.To <= q.From || q.To > int64(len(content)) {
				t.Fatalf("honoured a range outside the file: %+v", q)
			}
		}
		rep, err := Repair(path, Options{})
		if err != nil {
			if strings.Contains(err.Error(), "moved while the lock was held") {
				return
			}
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if !bytes.HasPrefix(got, content) {
			t.Fatal("repair changed or moved a byte")
		}
		r2, err := Verify(path)
		if err != nil || !r2.Clean() {
			t.Fatalf("after repair %+v: %+v %v", rep, r2, err)
		}
	})
}

// The checkpoint is encoded as encoding/json would and read back.
func TestCheckpointEncoding(t *testing.T) {
	c := checkpoint{Version: 1, Size: 123456, Lines: 789, LastOffset: 123000, LastSHA256: "ab12"}
	want, _ := json.Marshal(c)
	got := c.appendJSON(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s, want %s", got, want)
	}
	if back, ok := parseCheckpoint(append(got, '\n')); !ok || back != c {
		t.Fatalf("read back %+v %v", back, ok)
	}
	for _, bad := range []string{"", "{}", `{"version":1}`, `{"version":1,"size":1,"lines":1,"lastOffset":0,"lastSha256":3}`, `[1]`, `{"version":"1","size":1,"lines":1,"lastOffset":0,"lastSha256":"x"}`} {
		if _, ok := parseCheckpoint([]byte(bad)); ok {
			t.Errorf("accepted %q", bad)
		}
	}
}
