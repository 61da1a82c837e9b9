package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// nobody is the uid (and gid) that plays another user.
const nobody = 65534

// needRoot skips a test that must create files owned by another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it chowns files to another user (uid 65534) to play one")
	}
}

// plant writes a file owned by another user with mode perm.
func plant(t *testing.T, name string, content []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, content, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, perm); err != nil {
		t.Fatal(err)
	}
}

// sharedDir is a directory like /tmp: everyone may create files in it.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777|os.ModeSticky)
	os.Chmod(filepath.Dir(dir), 0o755)
	return dir
}

// Writers through two names of one file (hard links) would each take a
// lock of their own; so a journal with another name is refused for
// writing, by every writer, whichever name it uses; nothing is written.
func TestHardLinkedNamesRefused(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	appendN(t, a, 1, 2)
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(a)
	// A writer through b in the middle of its append (it holds b's lock).
	l := &locker{dir: b + ".lock", stale: time.Minute, table: event.System}
	tok, err := l.acquire(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	j := openT(t, a, Options{LockTimeout: time.Second})
	if _, err := j.Append([][]byte{testEvent("a", 1)}, false); !errors.Is(err, ErrHardLinked) || !strings.Contains(err.Error(), "2 names") {
		t.Fatalf("append through a while a writer through b holds its lock: %v", err)
	}
	l.release(tok)
	l.close()

	// Processes through both names at once: both refuse, nothing doubles.
	ha := startHelper(t, "append", a, "300", "a", "30s")
	hb := startHelper(t, "append", b, "300", "b", "30s")
	for _, h := range []*helperProc{ha, hb} {
		if err := h.wait(t); err == nil || !strings.Contains(h.stderrText(), ErrHardLinked.Error()) {
			t.Fatalf("a writer through a hard-linked name appended (%v): %s", err, h.stderrText())
		}
	}
	if after, _ := os.ReadFile(a); !bytes.Equal(after, before) {
		t.Fatal("the journal changed")
	}
	mustVerify(t, a)
	// Repair, a person's one-off act, still works on it (nothing moves).
	if _, err := Repair(a, Options{}); err != nil {
		t.Fatal(err)
	}
}

// After a rotation through one name, another name of the sealed file
// would append into it, and verify would call it clean: refused. A
// rotation killed between its two steps (the live file is also its
// sealed name) is no such second name.
func TestRotationThenAppendThroughTheOtherName(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	appendN(t, a, 1, 3)
	// Killed between its two steps: the live file under its sealed name.
	if err := os.Link(a, sealedName(a, 1)); err != nil {
		t.Fatal(err)
	}
	j := openT(t, a, Options{MaxBytes: 1 << 10})
	for i := 4; i <= 12; i++ {
		if _, err := j.Append([][]byte{testEvent("c", int64(i))}, false); err != nil {
			t.Fatalf("append %d after a killed rotation: %v", i, err)
		}
	}
	sealed, _ := Sealed(a)
	if len(sealed) == 0 {
		t.Fatal("no rotation happened")
	}
	// Another name for the (now sealed) first file.
	if err := os.Link(sealed[0], b); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(sealed[0])
	jb := openT(t, b, Options{})
	if _, err := jb.Append([][]byte{testEvent("b", 1)}, false); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("append through another name of a sealed file: %v", err)
	}
	if after, _ := os.ReadFile(sealed[0]); !bytes.Equal(after, before) {
		t.Fatal("a sealed file changed")
	}
	mustVerify(t, a)
}

// A journal another user created (for instance with mode 0666 in /tmp)
// would let that user read every recorded command line and forge
// records: writers refuse it, naming the file and why; so do they one of
// their own that others may write. Readers read either, and CheckTrust
// says why they should not trust it.
func TestJournalOfAnotherUserRefused(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	valid := fixture(t, "journal/valid.jsonl")
	cases := []struct {
		name  string
		owner int
		perm  os.FileMode
		why   string
	}{
		{"another user's, 0666", nobody, 0o666, "owned by uid 65534"},
		{"another user's, 0600", nobody, 0o600, "owned by uid 65534"},
		{"ours, 0666", 0, 0o666, "writable by group and others (mode 0666)"},
		{"ours, 0620", 0, 0o620, "writable by its group (mode 0620)"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("j%d.jsonl", i))
			os.WriteFile(path, valid, c.perm)
			os.Chown(path, c.owner, c.owner)
			os.Chmod(path, c.perm)
			_, err := Open(path, Options{})
			var ue *UnsafeError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("writer: %v", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, valid) {
				t.Fatal("the journal changed")
			}
			if _, err := Repair(path, Options{}); !errors.Is(err, ErrUnsafe) {
				t.Fatalf("repair: %v", err)
			}
			n := 0
			if err := Scan(path, 0, func(event.Record, []byte) error { n++; return nil }); err != nil || n != 4 {
				t.Fatalf("reader: %d lines, %v", n, err)
			}
			if err := CheckTrust(path); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("CheckTrust: %v", err)
			}
		})
	}
	ours := filepath.Join(dir, "ours.jsonl")
	appendN(t, ours, 1, 1)
	if err := CheckTrust(ours); err != nil {
		t.Fatal(err)
	}
}

// Files planted beside a journal of ours in a shared directory — a
// symlink or another user's file at the checkpoint or the kernel lock,
// another user's lock directory holding a live pid, anything at the next
// sealed name — are refused at once with a message naming them, never
// followed, never waited on until a timeout.
func TestPlantedSideFilesRefused(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	target := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	symlink := func(t *testing.T, name string) {
		os.Remove(name)
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
		os.Lchown(name, nobody, nobody)
	}
	cases := []struct {
		name   string
		plant  func(t *testing.T, path string) string // returns the planted path
		opts   Options
		want   string
		unsafe bool
	}{
		{"checkpoint symlink", func(t *testing.T, p string) string { symlink(t, p+".checkpoint"); return p + ".checkpoint" }, Options{}, "symlink", true},
		{"checkpoint of another user", func(t *testing.T, p string) string {
			plant(t, p+".checkpoint", []byte(`{"version":1}`), 0o666)
			return p + ".checkpoint"
		}, Options{}, "owned by uid 65534", true},
		{"kernel lock symlink", func(t *testing.T, p string) string { symlink(t, p+".lock.kernel"); return p + ".lock.kernel" }, Options{}, "is a symlink", true},
		{"kernel lock of another user", func(t *testing.T, p string) string {
			os.Remove(p + ".lock.kernel")
			plant(t, p+".lock.kernel", nil, 0o666)
			return p + ".lock.kernel"
		}, Options{}, "owned by uid 65534", true},
		{"lock directory of another user, live pid", func(t *testing.T, p string) string {
			os.Mkdir(p+".lock", 0o755)
			writeOwnerRecord(t, p+".lock", owner{PID: 1, Token: "theirs", CreatedAt: time.Now().UnixMilli()})
			os.Chown(p+".lock", nobody, nobody)
			os.Chown(filepath.Join(p+".lock", ownerFile), nobody, nobody)
			return p + ".lock"
		}, Options{LockTimeout: 500 * time.Millisecond}, "owned by uid 65534", true},
		{"next sealed name symlink", func(t *testing.T, p string) string {
			symlink(t, sealedName(p, 1))
			return sealedName(p, 1)
		}, Options{MaxBytes: 256}, "symlink", true},
		{"next sealed name taken", func(t *testing.T, p string) string {
			os.WriteFile(sealedName(p, 1), []byte("mine\n"), 0o600)
			return sealedName(p, 1)
		}, Options{MaxBytes: 256}, "already holds another file", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("j%d.jsonl", i))
			appendN(t, path, 1, 1)
			os.Remove(path + ".checkpoint")
			planted := c.plant(t, path)
			before, _ := os.ReadFile(path)
			j, err := Open(path, c.opts)
			if err == nil {
				_, err = j.Append([][]byte{testEvent("c", 2)}, false)
				j.Close()
			}
			if err == nil || !strings.Contains(err.Error(), planted) || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrUnsafe) != c.unsafe {
				t.Fatalf("%v", err)
			}
			if strings.Contains(err.Error(), "permission denied") || errors.Is(err, ErrLockTimeout) {
				t.Fatalf("not said plainly: %v", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Fatal("the journal changed")
			}
			if b, _ := os.ReadFile(target); string(b) != "precious\n" {
				t.Fatal("a symlink was followed")
			}
		})
	}
}

// Another user's prepared lock directory beside the journal is neither
// adopted (its owner could swap its record under us) nor removed.
func TestSpareOfAnotherUserLeftAlone(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	path := filepath.Join(dir, "j.jsonl")
	spare := path + ".lock.idle-0123456789abcdef"
	os.Mkdir(spare, 0o755)
	rec := fmt.Sprintf(`{"pid":%d,"token":"theirs","createdAt":1,"protocol":%q}`, deadPID(t), Protocol)
	plant(t, filepath.Join(spare, ownerFile), []byte(rec), 0o644)
	os.Chown(spare, nobody, nobody)
	appendN(t, path, 1, 2)
	b, err := os.ReadFile(filepath.Join(spare, ownerFile))
	if err != nil || string(b) != rec {
		t.Fatalf("another user's spare was used or removed: %q %v", b, err)
	}
}

// LCWRAP_JOURNAL_GROUP lets a log shipper of that group read the
// journal: the file gets the group and 0640, its directory 0750; a user
// outside the group still cannot read it, and nobody else can write
// either (writers accept their own journal so shared).
func TestReadGroup(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755)
	path := filepath.Join(base, "state", "journal.jsonl")
	t.Setenv(EnvGroup, fmt.Sprint(nobody))
	appendN(t, path, 1, 2)
	for p, want := range map[string]os.FileMode{path: 0o640, filepath.Dir(path): 0o750} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != want || st.Gid != nobody {
			t.Errorf("%s: mode %v gid %d, want %v gid %d", p, fi.Mode().Perm(), st.Gid, want, nobody)
		}
	}
	read := func(gid uint32) error {
		cmd := exec.Command("cat", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 12345, Gid: gid}}
		return cmd.Run()
	}
	if err := read(nobody); err != nil {
		t.Fatalf("a reader of the group cannot read the journal: %v", err)
	}
	if err := read(12345); err == nil {
		t.Fatal("a reader outside the group can read the journal")
	}
	appendN(t, path, 3, 1) // still the writer's own: accepted
	mustVerify(t, path)
	t.Setenv(EnvGroup, "no-such-group-lcwrap")
	if _, err := Open(filepath.Join(base, "other.jsonl"), Options{}); err == nil || !strings.Contains(err.Error(), EnvGroup) {
		t.Fatalf("an unknown group was ignored: %v", err)
	}
}

// A line written while the lock was taken from under the writer (a
// writer without the kernel lock replaced it: here, during the append)
// is in the journal, and the append says so: unknown whether it stands,
// never "not written", which a caller would retry.
func TestWrittenButLockLostIsUncertain(t *testing.T) {
	path := tempJournal(t)
	appendN(t, path, 1, 1)
	j := openT(t, path, Options{})
	key := Key{Source: "test", SourceEpoch: "e", ChildID: "c"}
	first, err := j.AppendNext(key, func(seq int64) ([]byte, error) {
		// Under our lock: another writer's record replaces ours.
		o, _ := readOwner(path + ".lock")
		o.Token = "someone-else"
		b := o.appendJSON(nil)
		os.WriteFile(filepath.Join(path+".lock", ownerFile), b, 0o600)
		return testEvent("c", seq), nil
	}, false)
	if !errors.Is(err, ErrUncertain) || !errors.Is(err, ErrLockLost) || first != 2 {
		t.Fatalf("append that wrote its line, then found the lock lost: first %d, %v", first, err)
	}
	found := false
	Scan(path, 0, func(rec event.Record, raw []byte) error {
		found = found || rec.JournalSequence == 2 && rec.Event.EventID == "c/2"
		return nil
	})
	if !found {
		t.Fatal("the line is not in the journal")
	}
}
