package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

func init() {
	// try-append PATH STALE TIMEOUT: one append with that stale age and
	// lock timeout; prints "appended N" or "error: ...".
	helpers["try-append"] = func(args []string) int {
		stale, _ := time.ParseDuration(args[1])
		timeout, _ := time.ParseDuration(args[2])
		j, err := Open(args[0], Options{StaleAfter: stale, LockTimeout: timeout, Fsync: FsyncNever})
		if err == nil {
			var n int64
			if n, err = j.Append([][]byte{testEvent("ns", 1)}, false); err == nil {
				fmt.Println("appended", n)
			}
			j.Close()
		}
		if err != nil {
			fmt.Println("error:", err)
		}
		return 0
	}
}

// childPIDNamespace returns the command prefix that runs a helper in a
// new PID namespace with its own /proc, or skips the test where none can
// be made. With lastPID > 0 the helper gets pid lastPID+1 there.
func childPIDNamespace(t *testing.T, lastPID int) []string {
	t.Helper()
	testtool.Need(t, "unshare", "util-linux")
	prefix, err := childNSPrefix(lastPID)
	if err != nil {
		t.Skip(err)
	}
	return prefix
}

// childNSPrefix is childPIDNamespace's prefix, or why there is none.
func childNSPrefix(lastPID int) ([]string, error) {
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil, fmt.Errorf("unshare is not installed (util-linux): %w", err)
	}
	if out, err := exec.Command("unshare", "-p", "-f", "--kill-child", "--mount-proc", "true").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("no child PID namespace here (unshare -p -f --mount-proc needs root or CAP_SYS_ADMIN): %v: %s", err, out)
	}
	prefix := []string{"unshare", "-p", "-f", "--kill-child", "--mount-proc"}
	if lastPID > 0 {
		// sh is pid 1; the helper it starts gets the pid after ns_last_pid.
		prefix = append(prefix, "sh", "-c", `echo "$1" > /proc/sys/kernel/ns_last_pid && shift && "$@"; :`, "sh", strconv.Itoa(lastPID))
	}
	return prefix, nil
}

// A waiter in a child PID namespace cannot see a live owner of the
// parent namespace: its pid is missing there, which proves nothing. The
// reference writer records no namespace, so the waiter must not judge it
// dead, however old its lock; the message says why and names the step
// that breaks the lock by hand.
func TestWaiterInChildPIDNamespaceRobsNoOne(t *testing.T) {
	prefix := childPIDNamespace(t, 0)
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	owner := startHelper(t, "hold-reference", path)
	owner.waitLines(t, 1)
	backdate(t, path+".lock")
	before, _ := os.ReadFile(filepath.Join(path+".lock", ownerFile))

	w := startHelperVia(t, prefix, "try-append", path, "1ms", "300ms")
	out := strings.Join(w.waitLines(t, 1), "\n")
	w.wait(t)
	t.Log(out)
	if !strings.Contains(out, "timed out waiting for the journal lock") {
		t.Fatalf("the waiter in a child PID namespace took a live owner's lock: %s", out)
	}
	for _, want := range []string{"names no PID namespace", "child PID namespace", "lcwrap journal unlock", BreakLockDoc} {
		if !strings.Contains(out, want) {
			t.Errorf("the message does not say %q: %s", want, out)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(path+".lock", ownerFile)); string(after) != string(before) {
		t.Fatal("the live owner's lock was touched")
	}
	owner.stdin.Close()
	if err := owner.wait(t); err != nil {
		t.Fatalf("the owner lost its lock: %v: %s", err, owner.stderrText())
	}
}

// freePID returns a pid that no process of this namespace has, with room
// after it.
func freePID(t *testing.T) int {
	t.Helper()
	for pid := 20000; pid < 32000; pid += 97 {
		if !pidExists(pid) && !pidExists(pid+1) {
			return pid
		}
	}
	t.Skip("no free pid found")
	return 0
}

// An owner in a child PID namespace, whose pid no process of this
// namespace has: the pid is not visible here, so it is not dead. The
// waiter (here, in the initial namespace) finds it in the child namespace
// and keeps its lock; once it has exited, the lock is reclaimed.
func TestInvisibleForeignOwnerKept(t *testing.T) {
	last := freePID(t)
	prefix := childPIDNamespace(t, last)
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	owner := startHelperVia(t, prefix, "hold-reference", path)
	owner.waitLines(t, 1)
	o, err := readOwner(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if o.PID != last+1 || pidExists(o.PID) || o.PIDNS != "" {
		t.Skipf("the owner did not get an invisible pid (%+v)", o)
	}
	backdate(t, path+".lock")
	j := openT(t, path, Options{StaleAfter: time.Millisecond, LockTimeout: 300 * time.Millisecond})
	_, err = j.Append([][]byte{testEvent("c", 1)}, false)
	var lte *LockTimeoutError
	if !errors.As(err, &lte) {
		t.Fatalf("an owner whose pid is not visible here was robbed: %v", err)
	}
	if !strings.Contains(lte.Why, "child PID namespace") || !strings.Contains(lte.Why, "lcwrap journal unlock") {
		t.Errorf("the message does not say where the pid is: %v", err)
	}
	t.Log(err)
	if got, _ := readOwner(path + ".lock"); got.Token != o.Token {
		t.Fatal("its lock was touched")
	}

	// Dead, it is found nowhere: the lock is reclaimed.
	owner.cmd.Process.Kill()
	owner.wait(t)
	j2, err := Open(path+"", Options{StaleAfter: time.Millisecond, LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	j.Close()
	if _, err := j2.Append([][]byte{testEvent("c", 1)}, false); err != nil {
		t.Fatalf("a dead owner of a child PID namespace blocked the journal: %v", err)
	}
}

// An owner of a child PID namespace named by a pid that is a kernel
// thread here (pid 2, kthreadd): the kernel thread is not taken for the
// owner, and the message names the process that has the pid over there.
func TestOwnerPIDIsAKernelThreadHere(t *testing.T) {
	if comm, ok := kernelThread(2); !ok {
		t.Skipf("pid 2 is not a kernel thread here (%q)", comm)
	}
	prefix := childPIDNamespace(t, 1)
	path := tempJournal(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	owner := startHelperVia(t, prefix, "hold-reference", path)
	owner.waitLines(t, 1)
	if o, _ := readOwner(path + ".lock"); o.PID != 2 {
		t.Skipf("the owner got pid %d, not 2", o.PID)
	}
	backdate(t, path+".lock")
	j := openT(t, path, Options{StaleAfter: time.Millisecond, LockTimeout: 200 * time.Millisecond})
	_, err := j.Append([][]byte{testEvent("c", 1)}, false)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("robbed: %v", err)
	}
	if !strings.Contains(err.Error(), "has pid 2 in a child PID namespace") {
		t.Errorf("the message does not name the owner's process: %v", err)
	}
	t.Log(err)
}

// A lock directory without a usable owner record may be a live writer's
// between its mkdir and its record: under load that lasts longer than a
// short stale age, and taking it then let two writers append at once
// (a duplicate journalSequence at a 5 ms stale age). It is kept until
// noRecordGrace, whatever the stale age.
func TestRecordlessLockOfALiveWriterKept(t *testing.T) {
	for _, record := range []string{"", "{"} { // none yet; being written
		path := tempJournal(t)
		lock := path + ".lock"
		os.MkdirAll(lock, 0o700)
		if record != "" {
			os.WriteFile(filepath.Join(lock, ownerFile), []byte(record), 0o600)
		}
		then := time.Now().Add(-200 * time.Millisecond)
		os.Chtimes(lock, then, then)
		j := openT(t, path, Options{StaleAfter: 5 * time.Millisecond, LockTimeout: 300 * time.Millisecond})
		_, err := j.Append([][]byte{testEvent("c", 1)}, false)
		if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), "no owner record yet") {
			t.Fatalf("record %q: a lock without a record, 200 ms old, was taken at a 5 ms stale age: %v", record, err)
		}
		if _, err := os.Stat(lock); err != nil {
			t.Fatal("the lock was removed")
		}
	}
}

// random fills every byte it is given, differently each time (the lock
// tokens rest on it).
func TestRandomFills(t *testing.T) {
	a, b := make([]byte, 64), make([]byte, 64)
	random(a)
	random(b)
	if bytes.Equal(a, make([]byte, 64)) || bytes.Equal(a, b) {
		t.Fatalf("random gave %x then %x", a, b)
	}
}
