package adopt

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/pidfd"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// modes are the two exit watchers; every process test runs with both.
var modes = []struct {
	name  string
	watch Watch
	want  string // what Watching must report
}{
	{"pidfd", WatchAuto, autoWatching()},
	{"poll", WatchPoll, "poll"},
}

// autoWatching is what WatchAuto must choose here: a pidfd wherever the
// kernel lets this process open one.
func autoWatching() string {
	if runtime.GOOS != "linux" {
		return "poll"
	}
	if fd, err := pidfd.Open(os.Getpid()); err == nil {
		fd.Close()
		return "pidfd"
	}
	return "poll"
}

func forModes(t *testing.T, f func(t *testing.T, opts Options, want string)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			f(t, Options{Watch: m.watch, Poll: 5 * time.Millisecond}, m.want)
		})
	}
}

// adoptPID opens pid and records its start on a fresh emitter; Follow
// runs in the background and its result arrives on done.
type adoption struct {
	p    *Process
	c    *emit.Child
	rec  *recorder
	done chan error
	v    event.Verdict
}

func adoptPID(t *testing.T, ctx context.Context, pid int, opts Options, want string) *adoption {
	t.Helper()
	p, err := Open(pid, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if got := p.Watching(); got != want {
		t.Fatalf("Watching() = %s, want %s", got, want)
	}
	rec := newRecorder(t)
	c, err := p.Record(emit.New(emit.Options{}, rec), "", event.Lineage{ParentChildID: "outer-1"})
	if err != nil {
		t.Fatal(err)
	}
	a := &adoption{p: p, c: c, rec: rec, done: make(chan error, 1)}
	go func() {
		v, err := p.Follow(ctx, c)
		a.v = v
		a.done <- err
	}()
	return a
}

// finished waits (with a deadline) for Follow to return.
func (a *adoption) finished(t *testing.T) error {
	t.Helper()
	select {
	case err := <-a.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Follow did not return within 20s")
	}
	return nil
}

func details(t *testing.T, ev event.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Details, &m); err != nil {
		t.Fatalf("details of %s: %v", ev.Kind, err)
	}
	return m
}

// checkStart requires the created event and the limits diagnostic of an
// adopted process and returns created's details.
func checkStart(t *testing.T, a *adoption) map[string]any {
	t.Helper()
	created := a.rec.next(t)
	if created.Kind != event.KindCreated || created.State != event.StateCreated {
		t.Fatalf("first event %s/%s, want created/created", created.Kind, created.State)
	}
	l := created.Lineage
	if !l.External || l.AdoptedAt == "" || l.ParentChildID != "outer-1" || l.RootChildID != created.ChildID {
		t.Errorf("lineage %+v", l)
	}
	if created.Capabilities != event.AllUnknown() {
		t.Errorf("capabilities %+v, want all unknown", created.Capabilities)
	}
	if name := filepath.Base(os.Args[0]); a.p.Name() != name || !strings.HasPrefix(created.ChildID, name+"-") {
		t.Errorf("childId %q, name %q: want both from the command's name %q", created.ChildID, a.p.Name(), name)
	}
	d := details(t, created)
	id := a.p.Identity()
	if d["pid"] != float64(id.PID) || d["startTime"] != float64(id.StartTime) || d["host"] != event.Host() ||
		d["observation"] != "process-presence" || d["bootId"] != nonEmpty(event.BootID()) {
		t.Errorf("created details %v, identity %+v", d, id)
	}
	diag := a.rec.next(t)
	if diag.Kind != event.KindDiagnostic || diag.State != "" || details(t, diag)["limits"] != limits {
		t.Errorf("second event %s/%s %s, want the limits diagnostic", diag.Kind, diag.State, diag.Details)
	}
	return d
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// checkLost requires the terminal lost event and returns its check reason.
func checkLost(t *testing.T, a *adoption) string {
	t.Helper()
	ev := a.rec.next(t)
	if ev.Kind != event.KindTerminal || ev.State != event.StateLost {
		t.Fatalf("event %s/%s, want terminal/lost", ev.Kind, ev.State)
	}
	d := details(t, ev)
	if d["observation"] != "process-exited" || d["exitStatus"] != "unknown" || d["check"] == "" || d["claim"] != "process-exit-status-only" || len(d) != 4 {
		t.Errorf("terminal details %v", d)
	}
	if err := a.finished(t); err != nil {
		t.Fatalf("Follow: %v", err)
	}
	a.rec.none(t)
	if a.v.Status != event.Gone || a.v.Reason != d["check"] {
		t.Errorf("verdict %+v, details %v", a.v, d)
	}
	return a.v.Reason
}

// A process the test started and lcwrap adopted ends on its own: its
// parent sees exit status 0 (nobody signalled it) and the stream is
// exactly created, the limits diagnostic, terminal lost.
func TestAdoptUntilExit(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, want string) {
		h := startHelper(t, "block", "--password", "hunter2", "--", "Bearer abcdefghijklmnop")
		a := adoptPID(t, context.Background(), h.pid, opts, want)
		d := checkStart(t, a)
		exe, _ := os.Executable()
		if d["executable"] != exe {
			t.Errorf("executable %v, want %s", d["executable"], exe)
		}
		var argv []string
		for _, s := range d["command"].([]any) {
			argv = append(argv, s.(string))
		}
		if want := redact.Argv([]string{os.Args[0], "--password", "hunter2", "--", "Bearer abcdefghijklmnop"}); !reflect.DeepEqual(argv, want) {
			t.Errorf("command %q, want %q", argv, want)
		}
		h.reap(t)
		checkLost(t, a)
		for _, line := range a.rec.lines {
			if strings.Contains(line, "hunter2") || strings.Contains(line, "abcdefghijklmnop") {
				t.Errorf("secret on a line: %s", line)
			}
		}
	})
}

// Stopping observation (Ctrl-C to lcwrap adopt) writes a diagnostic, no
// terminal, and leaves the process alone.
func TestStopObservation(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, want string) {
		h := startHelper(t, "block")
		ctx, cancel := context.WithCancelCause(context.Background())
		a := adoptPID(t, ctx, h.pid, opts, want)
		checkStart(t, a)
		stop := errors.New("lcwrap adopt received SIGINT")
		cancel(stop)
		if err := a.finished(t); !errors.Is(err, stop) {
			t.Fatalf("Follow = %v, want the stop cause", err)
		}
		ev := a.rec.next(t)
		d := details(t, ev)
		if ev.Kind != event.KindDiagnostic || ev.State != "" || d["observation"] != "ended" || d["processState"] != "unknown" || d["reason"] != stop.Error() {
			t.Errorf("last event %s/%s %v, want the observation-ended diagnostic", ev.Kind, ev.State, d)
		}
		a.rec.none(t)
		if v := event.CheckIdentity(event.System, a.p.Identity()); v.Status != event.Alive {
			t.Fatalf("after observation stopped the process is %v: %s", v.Status, v.Reason)
		}
		h.reap(t)
	})
}

// A reused pid (simulated through the table seam) ends the lifecycle of
// the original identity as lost; nothing is ever recorded about the
// newcomer.
func TestPIDReuse(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, want string) {
		h := startHelper(t, "block")
		fake := &event.FakeProcTable{Fallback: event.System}
		opts.Table = fake
		a := adoptPID(t, context.Background(), h.pid, opts, want)
		d := checkStart(t, a)
		orig := a.p.Identity()
		fake.Set(h.pid, event.ProcInfo{StartTime: orig.StartTime + 1, State: 'S', Comm: "newcomer"})
		// A pidfd names the original process: it fires when that one ends.
		h.reap(t)
		if reason := checkLost(t, a); !strings.Contains(reason, "different process") {
			t.Errorf("reason %q, want the pid now names a different process", reason)
		}
		if d["startTime"] != float64(orig.StartTime) {
			t.Errorf("created start time %v, want the original %d", d["startTime"], orig.StartTime)
		}
	})
}

// scripted answers Stat from a list, one entry per call (the last one
// repeats), to change a pid's owner between two reads.
type scripted struct {
	answers []event.ProcInfo
	calls   int
}

func (s *scripted) Stat(pid int) (event.ProcInfo, error) {
	i := min(s.calls, len(s.answers)-1)
	s.calls++
	info := s.answers[i]
	info.PID = pid
	return info, nil
}

// If the pid changes hands between reading the identity and confirming
// it, adoption is refused: lcwrap never attaches to a newcomer.
func TestOpenRefusesChangedPID(t *testing.T) {
	// Without a pidfd the second read must show the same start time.
	h := startHelper(t, "block")
	tbl := &scripted{answers: []event.ProcInfo{{StartTime: 100, State: 'S'}, {StartTime: 200, State: 'S'}}}
	_, err := Open(h.pid, Options{Watch: WatchPoll, Table: tbl})
	if !errors.Is(err, ErrVanished) {
		t.Fatalf("Open = %v, want ErrVanished", err)
	}
	h.reap(t)
}

// deny is a table where every process exists but cannot be read, as for
// another user's process under hidepid: the sandbox runs as root, so the
// permission case is simulated here.
type deny struct{}

func (deny) Stat(int) (event.ProcInfo, error) { return event.ProcInfo{}, event.ErrPermission }

func TestOpenErrors(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ string) {
		for _, pid := range []int{math.MaxInt32, 0, -1} {
			_, err := Open(pid, opts)
			var e *Error
			if !errors.Is(err, event.ErrNoProcess) || !errors.As(err, &e) || e.PID != pid {
				t.Errorf("Open(%d) = %v, want *Error wrapping ErrNoProcess", pid, err)
			}
		}
		h := startHelper(t, "block")
		opts.Table = deny{}
		_, err := Open(h.pid, opts)
		if !errors.Is(err, event.ErrPermission) || err.Error() != "pid "+strconv.Itoa(h.pid)+" not adopted: permission denied" {
			t.Errorf("Open(unreadable) = %v", err)
		}
		h.reap(t)
	})
}

func TestParsePID(t *testing.T) {
	for _, s := range []string{"1", "4242", "2147483647"} {
		if _, err := ParsePID(s); err != nil {
			t.Errorf("ParsePID(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "0", "-1", "+5", "abc", "12 ", "0x10", "2147483648", "99999999999999999999"} {
		if _, err := ParsePID(s); !errors.Is(err, ErrBadPID) {
			t.Errorf("ParsePID(%q) = %v, want ErrBadPID", s, err)
		}
	}
}

func TestReadPIDFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if pid, err := ReadPIDFile(write("ok", "  4242\n")); err != nil || pid != 4242 {
		t.Errorf("ReadPIDFile = %d, %v", pid, err)
	}
	for name, content := range map[string]string{
		"empty":  "\n",
		"word":   "running\n",
		"two":    "12\n13\n",
		"secret": "token=sk-abcdefghijklmnopqrstuvwx",
		"huge":   strings.Repeat("1", 100),
	} {
		_, err := ReadPIDFile(write(name, content))
		if !errors.Is(err, ErrBadPID) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: ReadPIDFile = %v, want ErrBadPID naming the file", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-abc") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
	if _, err := ReadPIDFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseWatch(t *testing.T) {
	if w, err := ParseWatch("poll"); err != nil || w != WatchPoll {
		t.Errorf("poll: %v %v", w, err)
	}
	if w, err := ParseWatch("auto"); err != nil || w != WatchAuto {
		t.Errorf("auto: %v %v", w, err)
	}
	if _, err := ParseWatch("pidfd"); err == nil {
		t.Error("ParseWatch(pidfd) accepted")
	}
}
