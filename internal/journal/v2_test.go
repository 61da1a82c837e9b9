package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// v2Helpers are the helper processes of the journal v2 tests.
var v2Helpers = map[string]func(args []string) int{
	// tear PATH: take the lock, write half a line, say "torn" and wait to
	// be killed inside the lock, as a writer killed inside write(2) is.
	"tear": func(args []string) int {
		j, err := Open(args[0], Options{LockTimeout: 10 * time.Second, Fsync: FsyncNever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := j.lock.acquire(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		f.Write(journalLine("torn", 1, 999)[:40])
		fmt.Println("torn")
		io.Copy(io.Discard, os.Stdin) // until killed
		return 0
	},
	// idle PATH: append once (which prepares a spare lock directory), say
	// "ready" and wait to be killed.
	"idle": func(args []string) int {
		j, err := Open(args[0], Options{LockTimeout: 10 * time.Second, Fsync: FsyncNever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if _, err := j.Append([][]byte{testEvent("idle", 1)}, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin) // until killed
		return 0
	},
	// repair-fsize PATH LIMIT: repair with files capped at LIMIT bytes
	// (RLIMIT_FSIZE), so that the quarantine copy fails as on a full disk.
	"repair-fsize": func(args []string) int {
		var limit uint64
		fmt.Sscan(args[1], &limit)
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		rep, err := Repair(args[0], Options{LockTimeout: 10 * time.Second})
		fmt.Printf("copy=%q err=%v\n", rep.Quarantine, err)
		return 0
	},
}

func init() {
	for k, v := range v2Helpers {
		helpers[k] = v
	}
}

// A writer killed while holding the lock costs the others nothing like the
// stale age: the kernel released its lock, so its directory is reclaimed
// at once. (Before the kernel lock, every append for 30 s timed out.)
//
// With LCWRAP_CHAOS_FULL set it repeats 50 times and logs the stall (kill
// to the waiting writer's append returning) as a benchmark figure.
func TestKilledOwnerReclaimedAtOnce(t *testing.T) {
	rounds := 1
	if os.Getenv(chaosEnv) != "" {
		rounds = 50
	}
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	var stalls []time.Duration
	for i := 0; i < rounds; i++ {
		h := startHelper(t, "hold", path)
		h.waitLines(t, 1)
		// A writer already waiting for the lock when its holder dies.
		j := openT(t, path, Options{LockTimeout: 5 * time.Second}) // default stale age: 30 s
		done := make(chan error, 1)
		var at time.Time
		go func() {
			_, err := j.Append([][]byte{testEvent("c", int64(i+1))}, false)
			at = time.Now()
			done <- err
		}()
		// Let it start waiting (it has the kernel lock's file open); the
		// result does not depend on it.
		testtool.Eventually(t, "the writer waiting for the lock", func() bool { return kernelLockOpen(path) })
		killed := time.Now()
		h.cmd.Process.Kill()
		if err := <-done; err != nil {
			t.Fatalf("a dead lcwrap holder blocked the journal: %v", err)
		}
		stalls = append(stalls, at.Sub(killed))
		h.wait(t)
		j.Close()
	}
	assertNoLock(t, path)
	sortDurations(stalls)
	r := 10 * time.Microsecond
	t.Logf("stall after the holder was killed: p50 %v max %v (%d rounds)", stalls[len(stalls)/2].Round(r), stalls[len(stalls)-1].Round(r), len(stalls))
}

// kernelLockOpen reports whether this process has path's kernel lock file
// open: a writer here has begun to take the lock.
func kernelLockOpen(path string) bool {
	want, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return false
	}
	want = filepath.Join(want, filepath.Base(path)+".lock.kernel")
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == want {
			return true
		}
	}
	return false
}

func sortDurations(d []time.Duration) {
	for i := 1; i < len(d); i++ {
		for k := i; k > 0 && d[k] < d[k-1]; k-- {
			d[k], d[k-1] = d[k-1], d[k]
		}
	}
}

// A writer killed inside write(2), holding the lock, leaves a torn line:
// the next holder quarantines it in place by itself (terminated, a record
// after it, a copy beside the journal) and appends after it; readers skip
// it and nothing before it moved.
func TestTornTailHealedByNextHolder(t *testing.T) {
	path := tempJournal(t)
	appendN(t, path, 1, 3)
	before, _ := os.ReadFile(path)
	h := startHelper(t, "tear", path)
	h.waitLines(t, 1)
	h.cmd.Process.Kill()
	h.wait(t)
	torn, _ := os.ReadFile(path)
	if len(torn) <= len(before) || torn[len(torn)-1] == '\n' {
		t.Fatal("the helper left no torn line")
	}
	j := openT(t, path, Options{LockTimeout: 5 * time.Second})
	first, err := j.Append([][]byte{testEvent("after", 1)}, false)
	if err != nil {
		t.Fatalf("the torn tail blocked the next writer: %v", err)
	}
	if first != 6 { // 1-3 events, 4 the torn line, 5 the record
		t.Fatalf("appended at %d, want 6", first)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, torn) {
		t.Fatal("healing changed or moved bytes")
	}
	r := mustVerify(t, path)
	if len(r.Quarantined) != 1 {
		t.Fatalf("report %+v", r)
	}
	q := r.Quarantined[0]
	if q.By != "heal" || q.From != int64(len(before)) || q.To != int64(len(torn))+2 || !q.Terminated || q.Lines != 1 || q.FirstSequence != 4 {
		t.Fatalf("quarantined %+v", q)
	}
	cp, err := os.ReadFile(filepath.Join(filepath.Dir(path), q.Copy))
	if err != nil || !bytes.Equal(cp, after[q.From:q.To]) {
		t.Fatalf("copy %q, %v", cp, err)
	}
	var seqs []int64
	Scan(path, 0, func(rec event.Record, raw []byte) error { seqs = append(seqs, rec.JournalSequence); return nil })
	if fmt.Sprint(seqs) != "[1 2 3 6]" {
		t.Fatalf("readers saw %v", seqs)
	}
}

// A follower that holds a descriptor and an (inode, offset) never sees a
// byte it has read change or move — through a heal, a repair and a
// rotation — and lcwrap's own follower sees every event once, in order.
func TestFollowerSeesNoByteMoved(t *testing.T) {
	path := tempJournal(t)
	opts := Options{LockTimeout: 5 * time.Second, MaxBytes: 6 << 10}
	appendN(t, path, 1, 3)
	shipper, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer shipper.Close()
	ino := inode(t, path)
	var read []byte // what the shipper has read, by offset, from the inode
	catchUp := func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := shipper.ReadAt(buf, int64(len(read)))
			read = append(read, buf[:n]...)
			if n == 0 || err != nil {
				return
			}
		}
	}
	check := func(when string) {
		t.Helper()
		now := make([]byte, len(read))
		if _, err := shipper.ReadAt(now, 0); err != nil || !bytes.Equal(now, read) {
			t.Fatalf("%s: bytes the shipper read changed (%v)", when, err)
		}
		if fi, err := shipper.Stat(); err != nil || fi.Size() < int64(len(read)) {
			t.Fatalf("%s: the file shrank", when)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 1000)
	notices := make(chan Notice, 100)
	go FollowWith(ctx, path, ReadOptions{OnNotice: func(n Notice) { notices <- n }}, func(rec event.Record, raw []byte) error {
		got <- rec.Event.EventID
		return nil
	})
	want := []string{"c/1", "c/2", "c/3"}
	catchUp()

	// A torn tail, healed by the next append.
	h := startHelper(t, "tear", path)
	h.waitLines(t, 1)
	h.cmd.Process.Kill()
	h.wait(t)
	catchUp()
	j := openT(t, path, opts)
	if _, err := j.Append([][]byte{testEvent("h", 1)}, false); err != nil {
		t.Fatal(err)
	}
	want = append(want, "h/1")
	check("heal")
	catchUp()

	// Bad content, repaired.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("{not json\n"))
	f.Close()
	catchUp()
	if _, err := j.Append([][]byte{testEvent("blocked", 1)}, false); !errors.Is(err, ErrBlocked) {
		t.Fatalf("append after bad content: %v", err)
	}
	if _, err := Repair(path, opts); err != nil {
		t.Fatal(err)
	}
	check("repair")
	catchUp()

	// Enough appends to rotate.
	for i := 2; i <= 40; i++ {
		if _, err := j.Append([][]byte{testEvent("h", int64(i))}, false); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("h/%d", i))
	}
	check("rotation")
	sealed, _ := Sealed(path)
	if len(sealed) == 0 {
		t.Fatal("no rotation happened")
	}
	if inode(t, sealed[0]) != ino {
		t.Fatal("the sealed file is not the inode the shipper holds")
	}
	for i, w := range want {
		select {
		case id := <-got:
			if id != w {
				t.Fatalf("event %d: followed %s, want %s", i, id, w)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("event %d (%s) not followed", i, w)
		}
	}
	kinds := map[NoticeKind]int{}
	for len(notices) > 0 {
		kinds[(<-notices).Kind]++
	}
	if kinds[NoticeQuarantined] != 2 || kinds[NoticeRotated] == 0 || kinds[NoticeReplaced] != 0 {
		t.Fatalf("notices %v", kinds)
	}
	r := mustVerify(t, path)
	if len(r.Sealed) != len(sealed) || len(r.Quarantined) != 2 {
		t.Fatalf("verify %+v", r)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// Rotation seals files and starts new ones; journalSequence runs on over
// the whole journal without a gap or a repeat (counting the segment-start
// records), readers see every event once from any cursor, and a child's
// sequence goes on across a rotation.
func TestRotation(t *testing.T) {
	path := tempJournal(t)
	j := openT(t, path, Options{MaxBytes: 4 << 10, LockTimeout: 5 * time.Second})
	key := Key{Source: "test", SourceEpoch: "e", ChildID: "r"}
	for i := 0; i < 100; i++ {
		if _, err := j.AppendNext(key, func(seq int64) ([]byte, error) { return testEvent("r", seq), nil }, false); err != nil {
			t.Fatal(err)
		}
	}
	sealed, _ := Sealed(path)
	if len(sealed) < 5 {
		t.Fatalf("%d sealed files", len(sealed))
	}
	for _, s := range append(sealed, path) {
		if fi, _ := os.Stat(s); fi.Size() > 4<<10+1024 {
			t.Fatalf("%s is %d bytes", s, fi.Size())
		}
	}
	var all []int64
	var seqs []int64
	ctl := map[int64]bool{}
	err := Read(path, ReadOptions{Control: true}, func(rec event.Record, raw []byte) error {
		all = append(all, rec.JournalSequence)
		ctl[rec.JournalSequence] = IsControl(&rec)
		if !IsControl(&rec) {
			s, _ := rec.Event.Seq()
			seqs = append(seqs, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, js := range all {
		if js != int64(i+1) {
			t.Fatalf("journalSequence %d at index %d", js, i)
		}
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("sequence %d at index %d: the key restarted after a rotation", s, i)
		}
	}
	if len(seqs) != 100 || len(all) != 100+len(sealed) {
		t.Fatalf("%d events, %d lines", len(seqs), len(all))
	}
	// From a cursor inside a sealed file.
	cur := all[len(all)/3]
	var n int
	Scan(path, cur, func(rec event.Record, raw []byte) error {
		if rec.JournalSequence <= cur {
			t.Fatalf("line %d before the cursor %d", rec.JournalSequence, cur)
		}
		n++
		return nil
	})
	var wantN int
	for _, js := range all {
		if js > cur && !ctl[js] {
			wantN++
		}
	}
	if n != wantN {
		t.Fatalf("%d lines after cursor %d, want %d", n, cur, wantN)
	}
	r := mustVerify(t, path)
	if r.Lines != int64(len(all)) || r.Valid != int64(len(all)) {
		t.Fatalf("verify %+v", r)
	}
	// A fresh writer continues where the live file ends.
	j.Close()
	j2 := openT(t, path, Options{MaxBytes: 4 << 10})
	first, err := j2.Append([][]byte{testEvent("x", 1)}, false)
	if err != nil || first != int64(len(all))+1 && first != int64(len(all))+2 {
		t.Fatalf("fresh writer appended at %d (%v), journal has %d lines", first, err, len(all))
	}
}

// A journal where a writer without the kernel lock was seen is never
// rotated: reference writers know only the live file.
func TestNoRotationWithForeignWriters(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	h := startHelper(t, "hold-foreign", path)
	h.waitLines(t, 1)
	// The foreign holder lets go once the writer saw it (and recorded it):
	// not after a fixed time, which a loaded machine can outlast before the
	// writer's first look.
	go func() {
		testtool.Poll(testtool.WaitLimit, func() bool { _, err := os.Lstat(path + ".lock.foreign"); return err == nil })
		h.stdin.Close()
	}()
	j := openT(t, path, Options{MaxBytes: 1 << 10, LockTimeout: 10 * time.Second})
	for i := 1; i <= 30; i++ {
		if _, err := j.Append([][]byte{testEvent("f", int64(i))}, false); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := Sealed(path); len(s) != 0 {
		t.Fatalf("rotated a journal shared with a foreign writer: %v", s)
	}
	if _, err := os.Stat(path + ".lock.foreign"); err != nil {
		t.Fatal("the foreign writer was not recorded")
	}
}

// A pid recorded in another PID namespace is never judged dead, however
// old its lock: here the pid names this very process with another start
// time, which in this namespace would mean "reused".
func TestOtherPIDNamespaceOwnerKept(t *testing.T) {
	me, _ := selfIdentity()
	path := tempJournal(t)
	lock := path + ".lock"
	os.MkdirAll(lock, 0o700)
	o := owner{PID: me.PID, Token: "other-ns", CreatedAt: time.Now().Add(-time.Hour).UnixMilli(), StartTime: me.StartTime + 12345, Host: me.Host, BootID: me.BootID, PIDNS: "pid:[1]"}
	writeOwnerRecord(t, lock, o)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	j := openT(t, path, Options{StaleAfter: time.Millisecond, LockTimeout: 200 * time.Millisecond})
	_, err := j.Append([][]byte{testEvent("c", 1)}, false)
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "another PID namespace") {
		t.Fatalf("an owner in another PID namespace was robbed or misreported: %v", err)
	}
	if got, _ := readOwner(lock); got.Token != "other-ns" {
		t.Fatal("its lock was touched")
	}
}

// A foreign lock whose createdAt lies in the future and whose owner is
// dead is reclaimed once its directory is old: a future time is no
// evidence of youth.
func TestFutureCreatedAtDeadOwnerReclaimed(t *testing.T) {
	path := tempJournal(t)
	lock := path + ".lock"
	os.MkdirAll(lock, 0o700)
	writeOwnerRecord(t, lock, owner{PID: deadPID(t), Token: "future", CreatedAt: time.Now().Add(24 * time.Hour).UnixMilli()})
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	j := openT(t, path, Options{StaleAfter: time.Minute, LockTimeout: 2 * time.Second})
	if _, err := j.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatalf("a dead owner's lock with a future createdAt was kept: %v", err)
	}
}

// A live owner without the kernel lock that is stopped is never robbed,
// and the timeout says so plainly.
func TestStoppedForeignOwnerMessage(t *testing.T) {
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	h := startHelper(t, "hold-foreign", path)
	h.waitLines(t, 1)
	h.cmd.Process.Signal(syscall.SIGSTOP)
	defer h.cmd.Process.Signal(syscall.SIGCONT)
	backdate(t, path+".lock")
	j := openT(t, path, Options{StaleAfter: time.Millisecond, LockTimeout: 200 * time.Millisecond})
	_, err := j.Append([][]byte{testEvent("c", 1)}, false)
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "never reclaimed") || strings.Contains(err.Error(), "younger") {
		t.Fatalf("message: %v", err)
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Fatalf("the path is named %d times: %v", n, err)
	}
}

func writeOwnerRecord(t *testing.T, dir string, o owner) {
	t.Helper()
	b := fmt.Sprintf(`{"pid":%d,"token":%q,"createdAt":%d,"startTime":%d,"host":%q,"bootId":%q,"pidNs":%q}`, o.PID, o.Token, o.CreatedAt, o.StartTime, o.Host, o.BootID, o.PIDNS)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Readers refuse a path that is not a regular file at once instead of
// hanging on it (a FIFO with no writer, /dev/zero).
func TestReadersRefuseNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", t.TempDir()} {
		done := make(chan error, 3)
		go func() { done <- Scan(p, 0, func(event.Record, []byte) error { return nil }) }()
		go func() { _, err := Verify(p); done <- err }()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done <- Follow(ctx, p, 0, func(event.Record, []byte) error { return nil }, nil)
		}()
		for i := 0; i < 3; i++ {
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) && !errors.Is(err, syscall.EISDIR) {
					t.Fatalf("%s: %v", p, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: a reader hung", p)
			}
		}
	}
}

// Repair of a journal with a second hard link leaves both names holding
// every byte (nothing is truncated, so no name loses anything).
func TestRepairHardLinkedJournal(t *testing.T) {
	content, _, _ := badContent(t, "journal/malformed.jsonl")
	path := writeJournal(t, content)
	other := path + ".link"
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(path, Options{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(other)
	if !bytes.HasPrefix(a, content) || !bytes.Equal(a, b) {
		t.Fatal("a name lost content")
	}
}

// Litter: a killed writer's spare lock directory is swept by the next
// process at once (not after the stale age); temporary checkpoints of
// killed writers are removed; a quarantine copy that fails (a full disk)
// leaves no empty file behind, and the range is still quarantined.
func TestLitterSwept(t *testing.T) {
	path := tempJournal(t)
	h := startHelper(t, "idle", path)
	h.waitLines(t, 1)
	spares, _ := filepath.Glob(path + ".lock.idle-*")
	if len(spares) != 1 {
		t.Fatalf("spares %v", spares)
	}
	h.cmd.Process.Kill()
	h.wait(t)
	os.WriteFile(path+".checkpoint.tmp-deadbeef", []byte("{"), 0o600) // an older lcwrap's name
	os.WriteFile(path+".checkpoint.tmp", []byte("{"), 0o600)
	j, _ := Open(path, Options{StaleAfter: time.Hour})
	for i := 1; i <= int(checkpointOnClose)+1; i++ {
		j.Append([][]byte{testEvent("c", int64(i))}, false)
	}
	j.Close()
	// The killed writer's spare was adopted and reused (or removed): one
	// spare at most stays, free, for the next writer.
	left, _ := filepath.Glob(path + ".lock.idle-*")
	if len(left) > 1 {
		t.Fatalf("spares left: %v", left)
	}
	for _, p := range left {
		f := freeSpare(p)
		if f == nil {
			t.Fatalf("spare %s is held by nobody alive, yet not free", p)
		}
		f.Close()
	}
	// Several writers at once leave several spares; the next one adopts
	// one and removes the rest.
	var hs []*helperProc
	for i := 0; i < 3; i++ {
		hs = append(hs, startHelper(t, "idle", path))
	}
	for _, h := range hs {
		h.waitLines(t, 1)
	}
	for _, h := range hs {
		h.cmd.Process.Kill()
		h.wait(t)
	}
	if n, _ := filepath.Glob(path + ".lock.idle-*"); len(n) < 3 {
		t.Fatalf("want a spare per killed writer, got %v", n)
	}
	j, _ = Open(path, Options{StaleAfter: time.Hour})
	j.Append([][]byte{testEvent("c", 99)}, false)
	j.Close()
	if n, _ := filepath.Glob(path + ".lock.idle-*"); len(n) != 1 {
		t.Fatalf("spares after the next writer: %v", n)
	}
	if _, err := os.Stat(path + ".checkpoint.tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a killed writer's temporary checkpoint is still there")
	}

	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(strings.Repeat("x", 8<<10) + "\n"))
	f.Close()
	before, _ := os.ReadFile(path)
	rh := startHelper(t, "repair-fsize", path, "4096")
	out := rh.waitLines(t, 1)
	rh.wait(t)
	if len(out) != 1 || !strings.Contains(out[0], `copy=""`) || strings.Contains(out[0], "err=<nil>") {
		t.Fatalf("repair on a full disk: %v", out)
	}
	if q, _ := filepath.Glob(path + ".quarantine-*"); len(q) != 0 {
		t.Fatalf("a failed quarantine copy was left: %v", q)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, before) {
		t.Fatal("a failed repair changed the journal")
	}
	if _, err := Repair(path, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".checkpoint.tmp-deadbeef"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("an older writer's temporary checkpoint is still there after repair")
	}
	r := mustVerify(t, path)
	if len(r.Quarantined) != 1 || r.Quarantined[0].Copy == "" {
		t.Fatalf("verify %+v", r)
	}
}
