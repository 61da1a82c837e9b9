package journal

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

// The test binary doubles as every helper process: with LCWRAP_JOURNAL_HELPER
// set it runs that helper instead of the tests (like os/exec's tests).
const helperEnv = "LCWRAP_JOURNAL_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
			os.Exit(2)
		}
		os.Exit(h(os.Args[1:]))
	}
	// Files are made with the modes the tests expect, whatever the
	// umask of whoever runs them (writers refuse group-writable files).
	syscall.Umask(0o022)
	// Most tests check the checkpoint after a few appends: save it on
	// every Close (TestShortRunsShareACheckpoint checks the real rule).
	checkpointOnClose = 1
	os.Exit(m.Run())
}

var helpers = map[string]func(args []string) int{
	// append PATH N PREFIX STALE [mkdir]: append N events one by one,
	// printing "eventId journalSequence" after each Append returns; with
	// mkdir, take the lock the way a reference writer does.
	"append": func(args []string) int {
		n, _ := strconv.Atoi(args[1])
		stale, _ := time.ParseDuration(args[3])
		j, err := Open(args[0], Options{LockTimeout: 30 * time.Second, StaleAfter: stale, Fsync: FsyncNever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		j.lock.noRename = len(args) > 4 && args[4] == "mkdir"
		for i := 1; i <= n; i++ {
			line := testEvent(args[2], int64(i))
			js, err := j.Append([][]byte{line}, false)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Fprintf(os.Stdout, "%s/%d %d\n", args[2], i, js)
		}
		if err := j.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	},
	// next PATH N CHILD: reserve and append N events of one child.
	"next": func(args []string) int {
		n, _ := strconv.Atoi(args[1])
		j, err := Open(args[0], Options{LockTimeout: 30 * time.Second, Fsync: FsyncNever})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer j.Close()
		key := Key{Source: "test", SourceEpoch: "e", ChildID: args[2]}
		for i := 0; i < n; i++ {
			_, err := j.AppendNext(key, func(seq int64) ([]byte, error) { return testEvent(args[2], seq), nil }, false)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return 0
	},
	// hold PATH: take the lock, say "held", and keep it until stdin closes.
	"hold": func(args []string) int { return hold(args[0], false, false) },
	// hold-foreign PATH: hold as a writer without the kernel lock does (a
	// reference writer, an older lcwrap): mkdir, no protocol marker.
	"hold-foreign": func(args []string) int { return hold(args[0], true, false) },
	// hold-reference PATH: hold-foreign with the reference writer's owner
	// record: pid, token and createdAt, no PID namespace.
	"hold-reference": func(args []string) int { return hold(args[0], true, true) },
}

func hold(path string, foreign, reference bool) int {
	{
		l := &locker{dir: path + ".lock", stale: time.Hour, table: event.System, noKernel: foreign, noRename: foreign, reference: reference}
		tok, err := l.acquire(10 * time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin)
		if err := l.release(tok); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		l.close()
		return 0
	}
}

// helperProc is a running helper with its stdout collected line by line.
type helperProc struct {
	cmd    *exec.Cmd
	stderr *testtool.Buffer
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []string // whole lines only
	cond   *sync.Cond
	done   chan struct{}
}

// startHelper starts a helper; it is killed and reaped when the test ends.
func startHelper(t *testing.T, name string, args ...string) *helperProc {
	t.Helper()
	return startHelperVia(t, nil, name, args...)
}

// startHelperVia starts a helper through a command that runs it (such as
// unshare): prefix, then the test binary and args.
func startHelperVia(t *testing.T, prefix []string, name string, args ...string) *helperProc {
	t.Helper()
	argv := append(append(append([]string(nil), prefix...), os.Args[0]), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	// A race-enabled helper would pause 1 s at exit for late reports.
	cmd.Env = append(os.Environ(), helperEnv+"="+name, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	stderr := &testtool.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, stderr: stderr, stdin: stdin, done: make(chan struct{})}
	h.cond = sync.NewCond(&h.mu)
	go func() {
		r := bufio.NewReader(out)
		for {
			s, err := r.ReadString('\n')
			if err != nil {
				break // a final line without newline was cut by a kill
			}
			h.mu.Lock()
			h.lines = append(h.lines, strings.TrimSuffix(s, "\n"))
			h.cond.Broadcast()
			h.mu.Unlock()
		}
		h.mu.Lock()
		close(h.done) // before the broadcast: waiters check it when they wake
		h.cond.Broadcast()
		h.mu.Unlock()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-h.done
		cmd.Wait()
		if s := stderr.String(); t.Failed() && s != "" {
			t.Logf("helper %s stderr: %s", name, s)
		}
	})
	return h
}

// stderrText is what the helper wrote on stderr so far.
func (h *helperProc) stderrText() string { return strings.TrimSpace(h.stderr.String()) }

// waitLines waits until the helper printed n lines or ended, with a
// deadline. It returns the lines so far.
func (h *helperProc) waitLines(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.AfterFunc(60*time.Second, func() {
		h.mu.Lock()
		h.cond.Broadcast()
		h.mu.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.lines) < n {
		select {
		case <-h.done:
			return append([]string(nil), h.lines...)
		default:
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("helper printed %d lines, want %d", len(h.lines), n)
		}
		h.cond.Wait()
	}
	return append([]string(nil), h.lines...)
}

// wait waits for the helper to exit and returns its error.
func (h *helperProc) wait(t *testing.T) error {
	t.Helper()
	<-h.done
	return h.cmd.Wait()
}

// testEvent is a valid event line of child id with sequence seq.
func testEvent(id string, seq int64) []byte {
	ev := event.Event{
		SchemaVersion: 1,
		EventID:       fmt.Sprintf("%s/%d", id, seq),
		Source:        "test",
		SourceEpoch:   "e",
		ChildID:       id,
		Lineage:       event.Lineage{RootChildID: id},
		Kind:          event.KindActivity,
		ObservedAt:    "2026-11-30T12:00:00.000Z",
		Sequence:      event.Int64(seq),
		Activity:      "step " + strconv.FormatInt(seq, 10),
		Capabilities:  event.External().Set,
	}
	b, err := ev.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

// journalLine is what the journal stores for testEvent at position n.
func journalLine(id string, seq, n int64) []byte {
	b := testEvent(id, seq)
	return append(b[:len(b)-1], []byte(fmt.Sprintf(`,"journalSequence":%d}`+"\n", n))...)
}

// tempJournal returns a journal path in a fresh directory.
func tempJournal(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state", "journal.jsonl")
}

// openT opens a journal and closes it when the test ends.
func openT(t *testing.T, path string, opts Options) *Journal {
	t.Helper()
	j, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// readAll returns the journal's valid lines, failing on any problem.
func mustVerify(t *testing.T, path string) Report {
	t.Helper()
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("journal not clean: %v (%v)", r.Blocked, r.ByClass)
	}
	return r
}
