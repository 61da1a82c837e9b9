package journal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// Eight processes append 1000 events each, one per Append: every line is
// whole, journalSequence runs 1..8000 without a gap, every eventId appears
// once, and each process's own events keep their order. Two of them take
// the lock with mkdir, as reference writers do.
func TestConcurrentProcesses(t *testing.T) {
	path := tempJournal(t)
	const procs, each = 8, 1000
	var hs []*helperProc
	for i := 0; i < procs; i++ {
		mode := "rename"
		if i < 2 {
			mode = "mkdir"
		}
		hs = append(hs, startHelper(t, "append", path, strconv.Itoa(each), fmt.Sprintf("w%d", i), "30s", mode))
	}
	committed := map[string]int64{}
	for i, h := range hs {
		if err := h.wait(t); err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
		for _, l := range h.waitLines(t, each) {
			id, js, _ := strings.Cut(l, " ")
			n, _ := strconv.ParseInt(js, 10, 64)
			committed[id] = n
		}
	}
	r := mustVerify(t, path)
	if r.Valid != procs*each {
		t.Fatalf("%d lines, want %d", r.Valid, procs*each)
	}
	seen := map[string]int64{}
	last := map[string]int64{}
	err := Scan(path, 0, func(rec event.Record, raw []byte) error {
		id := rec.Event.EventID
		if _, dup := seen[id]; dup {
			return fmt.Errorf("eventId %s twice", id)
		}
		seen[id] = rec.JournalSequence
		seq, _ := rec.Event.Seq()
		if seq <= last[rec.Event.ChildID] {
			return fmt.Errorf("%s out of order", id)
		}
		last[rec.Event.ChildID] = seq
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range committed {
		if seen[id] != n {
			t.Fatalf("%s committed at %d, found at %d", id, n, seen[id])
		}
	}
	if len(committed) != procs*each {
		t.Fatalf("%d appends reported committed", len(committed))
	}
	assertNoLock(t, path)
}

// Writers SIGKILLed at random: no committed line is lost or torn; the
// journal verifies, or only a torn final write blocks it and repair moves
// exactly that aside; the lock a killed writer held is reclaimed.
func TestKilledWriters(t *testing.T) {
	path := tempJournal(t)
	const writers = 4
	var hs []*helperProc
	for i := 0; i < writers; i++ {
		hs = append(hs, startHelper(t, "append", path, "1000000", fmt.Sprintf("k%d", i), "200ms"))
	}
	for _, h := range hs {
		h.waitLines(t, 20+rand.IntN(300))
		h.cmd.Process.Kill()
	}
	committed := map[string]int64{}
	for _, h := range hs {
		h.wait(t)
		for _, l := range h.waitLines(t, 0) {
			id, js, _ := strings.Cut(l, " ")
			n, _ := strconv.ParseInt(js, 10, 64)
			committed[id] = n
		}
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{StaleAfter: 200 * time.Millisecond, LockTimeout: 10 * time.Second}
	if !r.Clean() {
		// Only a torn final write is acceptable.
		if r.Blocked.Class != event.ClassTruncated || r.Lines != r.Valid+1 {
			t.Fatalf("killed writers left more than a torn final write: %v %v", r.Blocked, r.ByClass)
		}
		rep, err := Repair(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := os.ReadFile(rep.Quarantine)
		now, _ := os.ReadFile(path)
		if !bytes.Equal(append(now, q...), before) {
			t.Fatal("journal + quarantine differ from the journal before repair")
		}
	}
	seen := map[string]int64{}
	Scan(path, 0, func(rec event.Record, raw []byte) error {
		seen[rec.Event.EventID] = rec.JournalSequence
		return nil
	})
	for id, n := range committed {
		if seen[id] != n {
			t.Fatalf("committed %s at %d, found at %d", id, n, seen[id])
		}
	}
	// A new writer gets past whatever lock a killed writer left.
	j := openT(t, path, opts)
	first, err := j.Append([][]byte{testEvent("after", 1)}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(seen)) + 1; first != want {
		t.Fatalf("appended at %d, want %d", first, want)
	}
	mustVerify(t, path)
}

// A lock whose owner is alive but stopped is never stolen, however old.
func TestStoppedOwnerIsNeverRobbed(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	h := startHelper(t, "hold", path)
	h.waitLines(t, 1)
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	backdate(t, path+".lock")
	ownerBefore, _ := os.ReadFile(filepath.Join(path+".lock", ownerFile))
	j := openT(t, path, Options{StaleAfter: time.Millisecond, LockTimeout: 300 * time.Millisecond})
	_, err := j.Append([][]byte{testEvent("c", 1)}, false)
	var lte *LockTimeoutError
	if !errors.As(err, &lte) || !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("want a lock timeout, got %v", err)
	}
	if !strings.Contains(lte.Why, "alive") || !strings.Contains(lte.Owner, strconv.Itoa(h.cmd.Process.Pid)) {
		t.Fatalf("timeout does not say who holds it and why: %v", err)
	}
	ownerAfter, _ := os.ReadFile(filepath.Join(path+".lock", ownerFile))
	if !bytes.Equal(ownerBefore, ownerAfter) || len(ownerAfter) == 0 {
		t.Fatal("the stopped owner's lock was touched")
	}
	h.cmd.Process.Signal(syscall.SIGCONT)
	h.stdin.Close()
	if err := h.wait(t); err != nil {
		t.Fatalf("owner could not release its own lock: %v", err)
	}
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
}

// A lock left by a SIGKILLed owner is kept while younger than the stale age
// and reclaimed after it.
func TestKilledForeignOwnerReclaimedAfterStaleAge(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	h := startHelper(t, "hold-foreign", path)
	h.waitLines(t, 1)
	h.cmd.Process.Kill()
	h.wait(t)

	j, _ := Open(path, Options{StaleAfter: time.Hour, LockTimeout: 200 * time.Millisecond})
	_, err := j.Append([][]byte{testEvent("c", 1)}, false)
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "younger than the stale age") {
		t.Fatalf("a young lock of a dead owner was not kept: %v", err)
	}
	j.Close()

	backdate(t, path+".lock")
	j, _ = Open(path, Options{StaleAfter: time.Minute, LockTimeout: 5 * time.Second})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
	j.Close()
	assertNoLock(t, path)
}

// backdate makes a lock look older: both the directory's mtime and the
// owner's createdAt.
func backdate(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	name := filepath.Join(dir, ownerFile)
	if o, err := readOwner(dir); err == nil {
		o.CreatedAt = old.UnixMilli()
		writeOwnerFile(t, dir, o)
	}
	os.Chtimes(name, old, old)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
}

func writeOwnerFile(t *testing.T, dir string, o owner) {
	t.Helper()
	b := fmt.Sprintf(`{"pid":%d,"token":%q,"createdAt":%d`, o.PID, o.Token, o.CreatedAt)
	if o.StartTime != 0 {
		b += fmt.Sprintf(`,"startTime":%d`, o.StartTime)
	}
	if o.Host != "" {
		b += fmt.Sprintf(`,"host":%q`, o.Host)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(b+"}"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// assertNoLock checks that no lock directory (or one moved aside) is
// left; the kernel lock's file and the foreign-writer note stay.
func assertNoLock(t *testing.T, path string) {
	t.Helper()
	all, _ := filepath.Glob(path + ".lock*")
	var left []string
	for _, p := range all {
		if p == path+".lock.kernel" || p == path+".lock.foreign" {
			continue
		}
		if strings.HasPrefix(p, path+".lock.idle-") {
			if f := freeSpare(p); f != nil {
				f.Close() // a free spare, kept for reuse
				continue
			}
		}
		left = append(left, p)
	}
	if len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	h := startHelper(t, "no-such-helper")
	h.wait(t)
	return h.cmd.Process.Pid
}

// Who may be robbed, judged on owner records planted in an old lock.
func TestReclaimJudgement(t *testing.T) {
	me, err := event.SelfIdentity()
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	cases := []struct {
		name    string
		owner   *owner // nil: no owner.json
		reclaim bool
	}{
		{"live pid, same start time", &owner{PID: me.PID, Token: "a", StartTime: me.StartTime}, false},
		{"live pid, different start time (pid reused)", &owner{PID: me.PID, Token: "a", StartTime: me.StartTime + 1}, true},
		{"reference owner, live pid", &owner{PID: me.PID, Token: "a"}, false},
		{"reference owner, dead pid", &owner{PID: dead, Token: "a"}, true},
		{"dead pid with start time", &owner{PID: dead, Token: "a", StartTime: 42}, true},
		{"dead pid on another host", &owner{PID: dead, Token: "a", Host: "elsewhere.invalid"}, false},
		{"no owner record", nil, true},
	}
	for _, mkdir := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/mkdir=%v", c.name, mkdir), func(t *testing.T) {
				path := tempJournal(t)
				lock := path + ".lock"
				if err := os.MkdirAll(lock, 0o700); err != nil {
					t.Fatal(err)
				}
				if c.owner != nil {
					writeOwnerFile(t, lock, *c.owner)
				}
				backdate(t, lock)
				l := &locker{dir: lock, stale: time.Minute, table: event.System, noRename: mkdir}
				defer l.close()
				tok, err := l.acquire(150 * time.Millisecond)
				if c.reclaim {
					if err != nil {
						t.Fatalf("not reclaimed: %v", err)
					}
					if err := l.release(tok); err != nil {
						t.Fatal(err)
					}
					l.close()
					assertNoLock(t, path)
					return
				}
				if !errors.Is(err, ErrLockTimeout) {
					t.Fatalf("reclaimed (or failed otherwise): %v", err)
				}
				if o, err := readOwner(lock); c.owner != nil && (err != nil || o.Token != "a") {
					t.Fatal("the owner record was touched")
				}
			})
		}
	}
}

// A young lock without an owner record (its owner may be between mkdir and
// writing it) is left alone.
func TestYoungLockWithoutOwnerIsKept(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(path+".lock", 0o700)
	l := &locker{dir: path + ".lock", stale: time.Minute, table: event.System}
	if _, err := l.acquire(100 * time.Millisecond); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Fatal("young lock removed")
	}
}

// Release checks the token and removes nothing that is not ours.
func TestReleaseWithAnotherTokenRemovesNothing(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	for _, mkdir := range []bool{false, true} {
		l := &locker{dir: path + ".lock", stale: time.Minute, table: event.System, noRename: mkdir}
		tok, err := l.acquire(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := readOwner(l.dir)
		o.Token = "someone-else"
		writeOwnerFile(t, l.dir, o)
		if err := l.release(tok); !errors.Is(err, ErrLockLost) {
			t.Fatalf("release with a foreign token: %v", err)
		}
		if o2, err := readOwner(l.dir); err != nil || o2.Token != "someone-else" {
			t.Fatalf("foreign lock touched: %v %v", o2, err)
		}
		l.close()
		os.RemoveAll(l.dir)
	}
}

// The lock protocol matches the reference owner record: pid, token and
// createdAt in unix milliseconds, plus lcwrap's identity fields.
func TestOwnerRecordFormat(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	l := &locker{dir: path + ".lock", stale: time.Minute, table: event.System}
	tok, err := l.acquire(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	defer l.release(tok)
	for _, p := range []string{l.dir, filepath.Join(l.dir, ownerFile)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s mode %v", p, fi.Mode())
		}
	}
	o, err := readOwner(l.dir)
	if err != nil {
		t.Fatal(err)
	}
	me, _ := event.SelfIdentity()
	if o.PID != os.Getpid() || o.Token != tok || o.StartTime != me.StartTime || o.Host != event.Host() {
		t.Fatalf("owner %+v", o)
	}
	if d := time.Since(time.UnixMilli(o.CreatedAt)); d < 0 || d > time.Minute {
		t.Fatalf("createdAt %d is not unix milliseconds of now", o.CreatedAt)
	}
}

// Many processes reserving sequences for one child get 1..N without a gap.
func TestAppendNextAcrossProcesses(t *testing.T) {
	path := tempJournal(t)
	var hs []*helperProc
	for i := 0; i < 4; i++ {
		hs = append(hs, startHelper(t, "next", path, "150", "shared"))
	}
	for _, h := range hs {
		if err := h.wait(t); err != nil {
			t.Fatal(err)
		}
	}
	var want int64 = 1
	err := Scan(path, 0, func(rec event.Record, raw []byte) error {
		if seq, _ := rec.Event.Seq(); seq != want {
			return fmt.Errorf("sequence %d at line %d, want %d", seq, rec.JournalSequence, want)
		}
		want++
		return nil
	})
	if err != nil || want != 601 {
		t.Fatalf("%v (next %d)", err, want)
	}
}

// Prepared lock directories left by dead writers are removed by the next
// writer; a live writer's is kept.
func TestSpareDirectoriesOfDeadWritersSwept(t *testing.T) {
	me, err := event.SelfIdentity()
	if err != nil {
		t.Fatal(err)
	}
	path := tempJournal(t)
	dead, live := path+".lock.idle-dead", path+".lock.idle-live"
	for dir, o := range map[string]owner{
		dead: {PID: deadPID(t), Token: "d"},
		live: {PID: me.PID, Token: "l", StartTime: me.StartTime},
	} {
		os.MkdirAll(dir, 0o700)
		writeOwnerFile(t, dir, o)
		backdate(t, dir)
	}
	j, _ := Open(path, Options{StaleAfter: time.Minute})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := os.Stat(dead); err == nil {
		t.Fatal("a dead writer's spare was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatal("a live writer's spare was removed")
	}
}
