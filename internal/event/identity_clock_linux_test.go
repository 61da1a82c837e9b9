package event

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A start time recorded in the other clock is converted, never taken for
// another process's.
func TestCheckAcrossClocks(t *testing.T) {
	btime, ok := bootTimeUnix()
	if !ok {
		t.Fatal("no btime in /proc/stat")
	}
	const ticks = 123456
	ms := btime*1000 + ticks*10
	fake := &FakeProcTable{Procs: map[int]ProcInfo{ // both clocks, whatever this build's
		100: {PID: 100, StartTime: ticks, Clock: ClockTicks, State: 'S'},
		101: {PID: 101, StartTime: ms, Clock: ClockUnixMs, State: 'S'},
		102: {PID: 102, StartTime: ms, Clock: ClockUnixMs, State: 'Z'},
	}}
	cases := []struct {
		name string
		id   Identity
		want ProcStatus
	}{
		{"unix-ms read by procfs", Identity{PID: 100, StartTime: ms, Clock: ClockUnixMs}, Alive},
		{"unix-ms without startClock (older gopsutil builds)", Identity{PID: 100, StartTime: ms}, Alive},
		{"ticks read by gopsutil", Identity{PID: 101, StartTime: ticks}, Alive},
		{"ticks, a second off", Identity{PID: 101, StartTime: ticks + 100}, Alive},
		{"ticks, an hour off", Identity{PID: 101, StartTime: ticks + 360000}, ProcUnknown},
		{"unix-ms, an hour off", Identity{PID: 100, StartTime: ms + 3600000, Clock: ClockUnixMs}, ProcUnknown},
		{"other clock, zombie", Identity{PID: 102, StartTime: ticks}, Gone},
		{"other clock, no such pid", Identity{PID: 103, StartTime: ticks}, Gone},
		{"same clock, different start", Identity{PID: 100, StartTime: ticks + 1}, Gone},
	}
	for _, c := range cases {
		if v := CheckIdentity(fake, c.id); v.Status != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, v.Status, v.Reason, c.want)
		}
	}
}

// An identity written by one build (procfs or gopsutil) is read correctly
// by the other: each recognises the other's live process as alive and its
// exited process as gone. make test runs this in both builds.
func TestIdentitiesOfTheOtherBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the go tool is needed to build the other backend")
		}
		t.Skip("the go tool is needed to build the other backend")
	}
	tags := "lcwrap_gopsutil"
	if ProcBackend == "gopsutil" {
		tags = ""
	}
	bin := filepath.Join(t.TempDir(), "otherbuild")
	build := exec.Command(goTool, "build", "-tags", tags, "-o", bin, "./testdata/otherbuild")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the other backend: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the other build ended early")
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatal("no answer from the other build")
		}
		return ""
	}
	backend, raw, _ := strings.Cut(next(), " ")
	if backend == ProcBackend {
		t.Fatalf("the other build uses %s too", backend)
	}
	var theirs Identity
	if err := json.Unmarshal([]byte(raw), &theirs); err != nil {
		t.Fatal(err)
	}
	if v := CheckIdentity(System, theirs); v.Status != Alive {
		t.Fatalf("%s's identity %s read by %s: %v (%s)", backend, raw, ProcBackend, v.Status, v.Reason)
	}
	// The created event it wrote, as a journal holds it: its wrapper is
	// the same live process to this build.
	var created struct {
		Details struct {
			Wrapper Identity `json:"wrapper"`
		} `json:"details"`
	}
	line := next()
	if err := json.Unmarshal([]byte(line), &created); err != nil || created.Details.Wrapper != theirs {
		t.Fatalf("created event %s: %v", line, err)
	}
	if v := CheckIdentity(System, created.Details.Wrapper); v.Status != Alive {
		t.Fatalf("the wrapper of %s's created event read by %s: %v (%s)", backend, ProcBackend, v.Status, v.Reason)
	}
	ask := func(id Identity) string {
		b, _ := json.Marshal(id)
		io.WriteString(stdin, string(b)+"\n")
		return next()
	}
	self, _ := SelfIdentity()
	if got := ask(self); got != "alive" {
		t.Fatalf("%s's own identity read by %s: %s", ProcBackend, backend, got)
	}
	ended := exec.Command("true")
	if err := ended.Start(); err != nil {
		t.Fatal(err)
	}
	endedID, _, err := IdentityOf(System, ended.Process.Pid)
	ended.Wait()
	if err == nil {
		if got := ask(endedID); got != "gone" {
			t.Fatalf("an exited process's identity read by %s: %s", backend, got)
		}
	}
	stdin.Close()
	cmd.Wait()
	if v := CheckIdentity(System, theirs); v.Status != Gone {
		t.Fatalf("%s's exited identity read by %s: %v (%s)", backend, ProcBackend, v.Status, v.Reason)
	}
}
