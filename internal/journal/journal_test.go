package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeJournal puts content at a fresh journal path.
func writeJournal(t *testing.T, content []byte) string {
	t.Helper()
	path := tempJournal(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A journal written by the reference writer is continued at the next
// position, in exactly its line format.
func TestContinuesReferenceJournal(t *testing.T) {
	ref := fixture(t, "reference/journal-reference-format.jsonl")
	path := writeJournal(t, ref)
	j := openT(t, path, Options{})
	first, err := j.Append([][]byte{testEvent("c", 1), testEvent("c", 2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if first != 5 {
		t.Fatalf("continued at %d, want 5", first)
	}
	got, _ := os.ReadFile(path)
	want := append(append(append([]byte(nil), ref...), journalLine("c", 1, 5)...), journalLine("c", 2, 6)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("journal:\n%s\nwant:\n%s", got, want)
	}
	mustVerify(t, path)
}

func TestNewJournalModes(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, true); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// badFixtures are journals whose third line is bad, by class.
var badFixtures = []struct {
	file  string
	class event.Class
}{
	{"journal/malformed.jsonl", event.ClassMalformed},
	{"journal/schema.jsonl", event.ClassSchema},
	{"journal/invalid-utf8.jsonl", event.ClassInvalidUTF8},
	{"journal/non-monotonic-gap.jsonl", ClassNonMonotonic},
	{"journal/non-monotonic-missing.jsonl", ClassNonMonotonic},
	{"journal/non-monotonic-repeat.jsonl", ClassNonMonotonic},
	{"journal/oversized", event.ClassOversized},
	{"journal/truncated.jsonl", event.ClassTruncated}, // its fourth line
}

func badContent(t *testing.T, file string) (content []byte, line int64, offset int64) {
	t.Helper()
	if file == "journal/oversized" {
		valid := fixture(t, "journal/valid.jsonl")
		lines := bytes.SplitAfter(valid, []byte("\n"))
		big := bytes.Replace(lines[2], []byte(`"state":"running"`), []byte(`"state":"running","pad":"`+strings.Repeat("x", 70<<10)+`"`), 1)
		content = append(append(append([]byte(nil), lines[0]...), lines[1]...), big...)
		return append(content, lines[3]...), 3, int64(len(lines[0]) + len(lines[1]))
	}
	content = fixture(t, file)
	lines := bytes.SplitAfter(content, []byte("\n"))
	line = 3
	if strings.Contains(file, "truncated") {
		line = 4
	}
	for _, l := range lines[:line-1] {
		offset += int64(len(l))
	}
	return content, line, offset
}

// Each class of bad content blocks appends with a typed error naming line
// and offset (a torn final line is healed by the next writer instead),
// leaves the file byte for byte unchanged, and still lets readers see the
// valid prefix. Repair then quarantines exactly the bad range in place —
// every original byte stays where it was, a copy goes to the quarantine
// file — and the journal verifies and continues after the record.
func TestBadContentBlocksAndRepairs(t *testing.T) {
	for _, c := range badFixtures {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			content, line, offset := badContent(t, c.file)
			path := writeJournal(t, content)
			var seen int64
			err := Scan(path, 0, func(rec event.Record, raw []byte) error { seen++; return nil })
			var be *BlockedError
			if !errors.As(err, &be) || be.Line != line || seen != line-1 {
				t.Fatalf("scan: %v after %d lines", err, seen)
			}
			r, err := Verify(path)
			if err != nil || r.Blocked == nil || r.Blocked.Line != line || r.Valid != line-1 || r.Prefix != offset || r.Size != int64(len(content)) {
				t.Fatalf("verify: %+v %v", r, err)
			}
			j := openT(t, path, Options{LockTimeout: time.Second})
			if c.class != event.ClassTruncated {
				for i := 0; i < 2; i++ { // the second time from the writer's memory
					_, err := j.Append([][]byte{testEvent("c", 1)}, false)
					var be *BlockedError
					if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
						t.Fatalf("append after %s content: %v", c.class, err)
					}
					if be.Line != line || be.Offset != offset || be.Class != c.class || be.Path == "" {
						t.Fatalf("blocked at line %d byte %d (%s), want line %d byte %d (%s)", be.Line, be.Offset, be.Class, line, offset, c.class)
					}
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
					t.Fatal("a blocked journal was changed")
				}
			}
			var q *Quarantined
			var copyName string
			if c.class == event.ClassTruncated {
				first, err := j.Append([][]byte{testEvent("c", 1)}, false)
				// The torn line keeps position line, the record line+1.
				if err != nil || first != line+2 {
					t.Fatalf("append after a torn tail: at %d, %v (want the tail healed)", first, err)
				}
				r := mustVerify(t, path)
				if len(r.Quarantined) != 1 || r.Quarantined[0].By != "heal" {
					t.Fatalf("healed: %+v", r.Quarantined)
				}
				q = &r.Quarantined[0]
				copyName = filepath.Join(filepath.Dir(path), q.Copy)
			} else {
				rep, err := Repair(path, Options{LockTimeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				q, copyName = rep.Range, rep.Quarantine
				if rep.KeptBytes != offset || rep.KeptLines != line-1 || rep.QuarantinedBytes != int64(len(content))-offset {
					t.Fatalf("report %+v", rep)
				}
				mustVerify(t, path)
				first, err := j.Append([][]byte{testEvent("c", 1)}, false)
				if want := rep.NextSequence; err != nil || first != want {
					t.Fatalf("after repair: appended at %d, want %d, %v", first, want, err)
				}
			}
			after, _ := os.ReadFile(path)
			if !bytes.HasPrefix(after, content) {
				t.Fatal("a byte of the journal was changed or moved")
			}
			cp, err := os.ReadFile(copyName)
			if err != nil {
				t.Fatal(err)
			}
			if q.From != offset || q.To != int64(len(content))+map[bool]int64{true: 2}[q.Terminated] ||
				!bytes.Equal(cp, after[q.From:q.To]) || q.FirstSequence != line || q.Lines != int64(bytes.Count(after[q.From:q.To], []byte("\n"))) {
				t.Fatalf("quarantined %+v; copy %q", q, cp)
			}
			if fi, _ := os.Stat(copyName); fi.Mode().Perm() != 0o600 || !strings.HasPrefix(filepath.Base(copyName), "journal.jsonl.quarantine-") {
				t.Fatalf("quarantine %s mode %v", copyName, fi.Mode())
			}
			mustVerify(t, path)
			again, err := Repair(path, Options{})
			if err != nil || again.Quarantine != "" || again.Blocked != nil {
				t.Fatalf("repairing a clean journal: %+v %v", again, err)
			}
		})
	}
}

func TestAppendRefusesBadLines(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{MaxLineBytes: 1000})
	good := testEvent("c", 1)
	withJS := append(good[:len(good)-1:len(good)-1], []byte(`,"journalSequence":1}`)...)
	long := bytes.Replace(good, []byte(`"activity":"step 1"`), []byte(`"activity":"step 1","pad":"`+strings.Repeat("y", 1000)+`"`), 1)
	// 1000 bytes exactly once journalSequence is added: allowed; one more: refused.
	base := len(good) + len(`,"journalSequence":1`)
	fits := bytes.Replace(good, []byte(`"activity":"step 1"`), []byte(`"activity":"step 1","pad":"`+strings.Repeat("z", 1000-base-len(`,"pad":""`))+`"`), 1)
	over := bytes.Replace(fits, []byte(`"pad":"z`), []byte(`"pad":"zz`), 1)
	for name, c := range map[string]struct {
		line []byte
		want error
	}{
		"not json":                  {[]byte("hello"), ErrInvalidLine},
		"not an event":              {[]byte(`{"a":1}`), ErrInvalidLine},
		"two lines":                 {append(append([]byte(nil), good...), append([]byte("\n"), good...)...), ErrInvalidLine},
		"carries a journalSequence": {withJS, ErrInvalidLine},
		"over the cap":              {long, ErrLineTooLong},
		"one byte over the cap":     {over, ErrLineTooLong},
	} {
		if _, err := j.Append([][]byte{good, c.line}, false); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatal("a refused batch wrote something")
	}
	if _, err := j.Append([][]byte{append(fits, '\n')}, false); err != nil {
		t.Fatalf("a line of exactly the cap: %v", err)
	}
	if _, err := Open(path+"2", Options{MaxLineBytes: linereader.DefaultMaxBytes + 1}); err == nil {
		t.Fatal("a cap above the readers' cap was accepted")
	}
}

// Symlinks at the journal, lock or checkpoint path are refused and their
// targets left alone.
func TestSymlinksRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious\n"), 0o600)
	targetDir := filepath.Join(dir, "targetdir")
	os.Mkdir(targetDir, 0o700)

	path := filepath.Join(dir, "journal.jsonl")
	os.Symlink(target, path)
	if _, err := Open(path, Options{}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("journal symlink: %v", err)
	}
	if err := Scan(path, 0, nil); !errors.Is(err, ErrSymlink) {
		t.Fatalf("scan through a symlink: %v", err)
	}
	os.Remove(path)

	os.Symlink(targetDir, path+".lock")
	j, err := Open(path, Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); !errors.Is(err, ErrSymlink) {
		t.Fatalf("lock symlink: %v", err)
	}
	j.Close()
	os.Remove(path + ".lock")

	os.Symlink(target, path+".checkpoint")
	j, _ = Open(path, Options{})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); !errors.Is(err, ErrSymlink) {
		t.Fatalf("checkpoint symlink: %v", err)
	}
	j.Close()

	os.Remove(path + ".checkpoint")

	// Planted after the writer opened the journal.
	j, _ = Open(path, Options{})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
	os.Rename(path, path+".moved")
	os.Symlink(target, path)
	if _, err := j.Append([][]byte{testEvent("c", 2)}, false); !errors.Is(err, ErrSymlink) {
		t.Fatalf("symlink planted after open: %v", err)
	}
	j.Close()

	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Fatalf("symlink target changed: %q", b)
	}
	if entries, _ := os.ReadDir(targetDir); len(entries) != 0 {
		t.Fatalf("lock created through a symlink: %v", entries)
	}
}

func readCheckpoint(t *testing.T, path string) checkpoint {
	t.Helper()
	b, err := os.ReadFile(path + ".checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func appendN(t *testing.T, path string, from, n int) {
	t.Helper()
	j, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		if _, err := j.Append([][]byte{testEvent("c", int64(i))}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// The checkpoint is written on Close, rebuilt when missing, and used only
// when it matches the file. Each forgery below would hide the damaged line
// 3 if it were trusted; rejected, the prefix is read again and the damage
// blocks the append.
func TestCheckpoint(t *testing.T) {
	path := tempJournal(t)
	appendN(t, path, 1, 10)
	good := readCheckpoint(t, path)
	fi, _ := os.Stat(path)
	if good.Size != fi.Size() || good.Lines != 10 {
		t.Fatalf("checkpoint %+v for a 10-line journal of %d bytes", good, fi.Size())
	}
	if fi, _ := os.Stat(path + ".checkpoint"); fi.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint mode %v", fi.Mode())
	}
	os.Remove(path + ".checkpoint")
	appendN(t, path, 11, 1)
	if c := readCheckpoint(t, path); c.Lines != 11 {
		t.Fatalf("deleted checkpoint not rebuilt: %+v", c)
	}
	good = readCheckpoint(t, path)

	content, _ := os.ReadFile(path)
	i := bytes.Index(content, []byte(`"step 3"`))
	content[i-2] = '{' // line 3 malformed, same length
	os.WriteFile(path, content, 0o600)
	writeCkpt := func(c checkpoint) {
		b, _ := json.Marshal(c)
		os.WriteFile(path+".checkpoint", b, 0o600)
	}
	for name, forge := range map[string]func(*checkpoint){
		"more lines than the last line's journalSequence": func(c *checkpoint) { c.Lines += 5 },
		"wrong hash":                 func(c *checkpoint) { c.LastSHA256 = strings.Repeat("0", 64) },
		"beyond the end of the file": func(c *checkpoint) { c.Size += 100 },
		"offset inside a line":       func(c *checkpoint) { c.LastOffset += 10 },
		"another version":            func(c *checkpoint) { c.Version = 2 },
	} {
		c := good
		forge(&c)
		writeCkpt(c)
		j, _ := Open(path, Options{})
		_, err := j.Append([][]byte{testEvent("c", 12)}, false)
		j.Close()
		var be *BlockedError
		if !errors.As(err, &be) || be.Line != 3 {
			t.Fatalf("%s: the forged checkpoint was trusted: %v", name, err)
		}
	}
	os.WriteFile(path+".checkpoint", []byte("{garbage"), 0o600)
	j, _ := Open(path, Options{})
	if _, err := j.Append([][]byte{testEvent("c", 12)}, false); !errors.Is(err, ErrBlocked) {
		t.Fatalf("garbage checkpoint: %v", err)
	}
	j.Close()

	// Stale: the journal was cut (by a repair elsewhere) after the
	// checkpoint was written; it is rebuilt and numbering follows the file.
	lines := bytes.SplitAfter(content, []byte("\n"))
	os.WriteFile(path, bytes.Join(lines[:2], nil), 0o600)
	writeCkpt(good)
	j, _ = Open(path, Options{})
	if first, err := j.Append([][]byte{testEvent("c", 3)}, false); err != nil || first != 3 {
		t.Fatalf("stale checkpoint: appended at %d: %v", first, err)
	}
	j.Close()
	mustVerify(t, path)
}

// Short runs do not each rewrite the checkpoint: a Close refreshes it only
// once checkpointOnClose lines have been verified since it was written,
// so the next process never has more than about that many to read.
func TestShortRunsShareACheckpoint(t *testing.T) {
	defer func(n int64) { checkpointOnClose = n }(checkpointOnClose)
	checkpointOnClose = 8
	path := tempJournal(t)
	appendN(t, path, 1, 10)
	if c := readCheckpoint(t, path); c.Lines != 10 {
		t.Fatalf("checkpoint %+v after 10 lines", c)
	}
	appendN(t, path, 11, 4) // 4 new lines: the checkpoint stays
	if c := readCheckpoint(t, path); c.Lines != 10 {
		t.Fatalf("checkpoint rewritten after 4 lines: %+v", c)
	}
	appendN(t, path, 15, 4) // 8 lines since it: refreshed
	if c := readCheckpoint(t, path); c.Lines != 18 {
		t.Fatalf("checkpoint not refreshed after 8 lines: %+v", c)
	}
	mustVerify(t, path)
}

// A valid checkpoint saves reading the prefix: damage inside it is not
// seen by a writer that trusts the checkpoint (its size and last line still
// match) but is found by Verify. This is the trust boundary, documented.
func TestCheckpointSavesReadingThePrefix(t *testing.T) {
	path := tempJournal(t)
	appendN(t, path, 1, 5)
	content, _ := os.ReadFile(path)
	i := bytes.Index(content, []byte(`"step 2"`))
	content[i+1] = 'S'
	os.WriteFile(path, content, 0o600)
	appendN(t, path, 6, 1) // not blocked: the prefix was not read again
	r, _ := Verify(path)
	if r.Blocked != nil {
		t.Fatalf("damage with the same bytes count is not a schema error: %v", r.Blocked)
	}
	content, _ = os.ReadFile(path)
	content[i-2] = '{' // now malformed, same length
	os.WriteFile(path, content, 0o600)
	appendN(t, path, 7, 1)
	if r, _ := Verify(path); r.Blocked == nil || r.Blocked.Line != 2 {
		t.Fatalf("verify missed damage inside the checkpointed prefix: %+v", r)
	}
}

// A writer notices when the file it verified was cut and regrown with other
// lines (by a repair elsewhere), and numbers its next line from the file.
func TestTruncateAndRegrowDetected(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{})
	for i := 1; i <= 5; i++ {
		j.Append([][]byte{testEvent("a", int64(i))}, false)
	}
	content, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(content, []byte("\n"))
	var regrown []byte
	for _, l := range lines[:3] {
		regrown = append(regrown, l...)
	}
	for n := int64(4); n <= 7; n++ {
		regrown = append(regrown, journalLine("other", n, n)...)
	}
	os.WriteFile(path, regrown, 0o600)
	first, err := j.Append([][]byte{testEvent("a", 6)}, false)
	if err != nil || first != 8 {
		t.Fatalf("appended at %d (%v), want 8", first, err)
	}
	mustVerify(t, path)
}

// A journal replaced by another file (moved away, recreated) is reopened.
func TestReplacedJournalReopened(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{})
	j.Append([][]byte{testEvent("a", 1), testEvent("a", 2)}, false)
	os.Rename(path, path+".old")
	first, err := j.Append([][]byte{testEvent("a", 3)}, false)
	if err != nil || first != 1 {
		t.Fatalf("appended at %d (%v), want 1 in the new file", first, err)
	}
	if b, _ := os.ReadFile(path + ".old"); bytes.Count(b, []byte("\n")) != 2 {
		t.Fatal("the moved journal was written to")
	}
}

// AppendNext continues each (source, sourceEpoch, childId) sequence space
// from its most recent event, however far back it is.
func TestAppendNext(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{})
	key := func(id string) Key { return Key{Source: "test", SourceEpoch: "e", ChildID: id} }
	build := func(id string) func(int64) ([]byte, error) {
		return func(seq int64) ([]byte, error) { return testEvent(id, seq), nil }
	}
	for i := 0; i < 3; i++ {
		if _, err := j.AppendNext(key("old"), build("old"), false); err != nil {
			t.Fatal(err)
		}
	}
	// Push "old" far back: more than one backward chunk of other lines.
	var batch [][]byte
	for i := int64(1); i <= 2000; i++ {
		batch = append(batch, testEvent("busy", i))
	}
	j.Append(batch, false)
	for _, c := range []struct {
		id   string
		want int64
	}{{"old", 4}, {"new", 1}, {"old", 5}, {"ol", 1}, {"new", 2}} {
		var got int64
		_, err := j.AppendNext(key(c.id), func(seq int64) ([]byte, error) { got = seq; return testEvent(c.id, seq), nil }, false)
		if err != nil || got != c.want {
			t.Fatalf("%s: sequence %d (%v), want %d", c.id, got, err, c.want)
		}
	}
	other := Key{Source: "test", SourceEpoch: "other-epoch", ChildID: "old"}
	var got int64
	j.AppendNext(other, func(seq int64) ([]byte, error) { got = seq; return testEvent("x", seq), nil }, false)
	if got != 1 {
		t.Fatalf("another epoch continued the sequence: %d", got)
	}
	boom := errors.New("boom")
	if _, err := j.AppendNext(key("old"), func(int64) ([]byte, error) { return nil, boom }, false); !errors.Is(err, boom) {
		t.Fatalf("build error: %v", err)
	}
	mustVerify(t, path)
}

func TestCloseAndOpenSharing(t *testing.T) {
	path := tempJournal(t)
	a, _ := Open(path, Options{})
	b, _ := Open(filepath.Join(filepath.Dir(path), ".", "journal.jsonl"), Options{})
	if a != b {
		t.Fatal("two writers for one path in one process")
	}
	a.Close()
	if _, err := b.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := b.Append([][]byte{testEvent("c", 2)}, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after the last close: %v", err)
	}
	if err := b.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("close twice: %v", err)
	}
}

func TestMissingJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.jsonl")
	if err := Scan(path, 0, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if _, err := Verify(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if _, err := Repair(path, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("repair created a journal")
	}
}

// Scan hands over lines after the cursor, as stored.
func TestScanAfter(t *testing.T) {
	ref := fixture(t, "reference/journal-reference-format.jsonl")
	path := writeJournal(t, ref)
	var got []byte
	err := Scan(path, 2, func(rec event.Record, raw []byte) error {
		got = append(append(got, raw...), '\n')
		return nil
	})
	lines := bytes.SplitAfter(ref, []byte("\n"))
	if err != nil || !bytes.Equal(got, append(append([]byte(nil), lines[2]...), lines[3]...)) {
		t.Fatalf("%v %q", err, got)
	}
	stop := errors.New("stop")
	if err := Scan(path, 0, func(event.Record, []byte) error { return stop }); err != stop {
		t.Fatal(err)
	}
}

// A final line without newline is a write in progress while a writer holds
// the lock: readers wait for it (up to the grace period) instead of calling
// it torn.
func TestScanWaitsForAWriteInProgress(t *testing.T) {
	defer func(g time.Duration) { tornGrace = g }(tornGrace)
	tornGrace = time.Hour
	path := tempJournal(t)
	j := openT(t, path, Options{})
	j.Append([][]byte{testEvent("w", 1)}, false)
	os.Mkdir(path+".lock", 0o700) // a writer holds the lock
	defer os.Remove(path + ".lock")
	line := journalLine("w", 2, 2)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(line[:40])
	done := make(chan error, 1)
	var got []int64
	go func() {
		done <- Scan(path, 0, func(rec event.Record, raw []byte) error {
			got = append(got, rec.JournalSequence)
			if rec.JournalSequence == 1 {
				// The write completes later, after Scan has met the
				// unfinished line (had it not waited, it would have
				// returned a truncated error already).
				time.AfterFunc(50*time.Millisecond, func() { f.Write(line[40:]) })
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil || len(got) != 2 {
			t.Fatalf("scan: %v, lines %v", err, got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("scan did not finish")
	}
	f.Close()
}

// Follow keeps printing appended lines, reports a torn tail once, and goes
// on from the repaired end after a concurrent repair; polling, and woken
// by a watch of the directory (on Linux).
func TestFollowSurvivesRepair(t *testing.T) {
	t.Run("poll", func(t *testing.T) { testFollowSurvivesRepair(t, ReadOptions{}) })
	t.Run("watch", func(t *testing.T) {
		testFollowSurvivesRepair(t, ReadOptions{Watch: true, WatchPoll: time.Hour, MaxPoll: time.Hour})
	})
}

func testFollowSurvivesRepair(t *testing.T, o ReadOptions) {
	path := tempJournal(t)
	j := openT(t, path, Options{LockTimeout: 5 * time.Second})
	j.Append([][]byte{testEvent("f", 1), testEvent("f", 2)}, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recs := make(chan int64, 100)
	blocked := make(chan *BlockedError, 10)
	done := make(chan error, 1)
	go func() {
		o.After, o.OnBlocked = 1, func(be *BlockedError) { blocked <- be }
		done <- FollowWith(ctx, path, o, func(rec event.Record, raw []byte) error {
			recs <- rec.JournalSequence
			return nil
		})
	}()
	expect := func(want int64) {
		t.Helper()
		select {
		case got := <-recs:
			if got != want {
				t.Fatalf("followed %d, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d not followed", want)
		}
	}
	expect(2)
	j.Append([][]byte{testEvent("f", 3)}, false)
	expect(3)
	// A torn write, as a killed writer leaves it.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(journalLine("f", 4, 4)[:50])
	f.Close()
	select {
	case be := <-blocked:
		if be.Class != event.ClassTruncated || be.Line != 4 {
			t.Fatalf("blocked %v", be)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("torn tail not reported")
	}
	rep, err := Repair(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The torn line keeps position 4, the quarantine record is 5.
	if rep.NextSequence != 6 {
		t.Fatalf("repair: %+v", rep)
	}
	j.Append([][]byte{testEvent("f", 4), testEvent("f", 5)}, false)
	expect(6)
	expect(7)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	select {
	case be := <-blocked:
		t.Fatalf("reported again: %v", be)
	default:
	}
}

// Follow waits for a journal that does not exist yet (nor its directory:
// a watch is set up once there is one).
func TestFollowWaitsForJournal(t *testing.T) {
	t.Run("poll", func(t *testing.T) { testFollowWaitsForJournal(t, ReadOptions{}) })
	t.Run("watch", func(t *testing.T) { testFollowWaitsForJournal(t, ReadOptions{Watch: true, WatchPoll: time.Hour}) })
}

func testFollowWaitsForJournal(t *testing.T, o ReadOptions) {
	path := tempJournal(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recs := make(chan int64, 10)
	go FollowWith(ctx, path, o, func(rec event.Record, raw []byte) error { recs <- rec.JournalSequence; return nil })
	j := openT(t, path, Options{})
	j.Append([][]byte{testEvent("w", 1)}, false)
	select {
	case n := <-recs:
		if n != 1 {
			t.Fatal(n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not followed")
	}
}

// FuzzReplay writes arbitrary bytes as a journal and appends to it: no
// panic; a journal Verify calls clean is continued at the next position
// with every old byte kept; any other is refused and left unchanged.
func FuzzReplay(f *testing.F) {
	for _, dir := range []string{"journal", "reference"} {
		entries, _ := os.ReadDir(filepath.Join("..", "..", "testdata", dir))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".jsonl") {
				f.Add(fixture(f, filepath.Join(dir, e.Name())))
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte("\n"))
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, content []byte) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("j%d.jsonl", n))
		defer os.Remove(path)
		defer os.Remove(path + ".checkpoint")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		j, err := Open(path, Options{LockTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		line := testEvent("fuzz", 1)
		first, err := j.Append([][]byte{line}, false)
		got, _ := os.ReadFile(path)
		if !r.Clean() && r.Blocked.Class == event.ClassTruncated {
			// A torn final line is healed in place by the next writer.
			if err != nil || !bytes.HasPrefix(got, content) {
				t.Fatalf("torn tail not healed: %v", err)
			}
			if r2 := mustVerify(t, path); len(r2.Quarantined) != 1 || r2.Valid != first {
				t.Fatalf("after heal: %+v", r2)
			}
			return
		}
		if !r.Clean() {
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("appended after bad content (%v): %v", r.Blocked, err)
			}
			if !bytes.Equal(got, content) {
				t.Fatal("blocked journal changed")
			}
			return
		}
		if err != nil || first != r.Valid+1 {
			t.Fatalf("clean journal of %d lines: appended at %d: %v", r.Valid, first, err)
		}
		if !bytes.Equal(got[:len(content)], content) || !bytes.Equal(got[len(content):], journalLine("fuzz", 1, first)) {
			t.Fatal("old bytes changed or new line wrong")
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "j.jsonl")
	j, err := Open(path, Options{Fsync: FsyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	line := testEvent("bench", 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := j.Append([][]byte{line}, false); err != nil {
			b.Fatal(err)
		}
	}
}

// The lock protocol against flock(2) on the same file system: one
// uncontended acquire+release each.
func BenchmarkLock(b *testing.B) {
	for _, mode := range []struct {
		name  string
		mkdir bool
	}{{"dir-rename", false}, {"dir-mkdir", true}} {
		b.Run(mode.name, func(b *testing.B) {
			l := &locker{dir: filepath.Join(b.TempDir(), "j.lock"), stale: time.Minute, table: event.System, noRename: mode.mkdir}
			defer l.close()
			for i := 0; i < b.N; i++ {
				tok, err := l.acquire(time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.release(tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("flock", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "j.flock"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		for i := 0; i < b.N; i++ {
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				b.Fatal(err)
			}
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
	})
}

// TestAppendBuilt: lines an emitter built are appended without being
// parsed again; only their framing is checked.
func TestAppendBuilt(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{})
	good := testEvent("c", 1)
	for name, line := range map[string][]byte{
		"not an object": []byte("hello"),
		"two lines":     append(append([]byte(nil), good...), append([]byte("\n"), good...)...),
		"empty":         []byte("\n"),
	} {
		if _, err := j.AppendBuilt([][]byte{good, line}, false); !errors.Is(err, ErrInvalidLine) {
			t.Errorf("%s: %v, want ErrInvalidLine", name, err)
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatal("a refused batch wrote something")
	}
	if first, err := j.AppendBuilt([][]byte{append(good, '\n'), testEvent("c", 2)}, true); err != nil || first != 1 {
		t.Fatalf("AppendBuilt: %d %v", first, err)
	}
	var seqs []int64
	if err := Scan(path, 0, func(rec event.Record, _ []byte) error {
		seqs = append(seqs, rec.JournalSequence)
		return nil
	}); err != nil || len(seqs) != 2 || seqs[1] != 2 {
		t.Fatalf("read back %v: %v", seqs, err)
	}
}
