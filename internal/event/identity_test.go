package event

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestSelf(t *testing.T) {
	id, err := SelfIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if id.PID != os.Getpid() || id.StartTime == 0 || id.Host == "" {
		t.Fatalf("Self = %+v", id)
	}
	if v := CheckIdentity(System, id); v.Status != Alive {
		t.Fatalf("CheckIdentity(self) = %+v", v)
	}
}

func TestCheck(t *testing.T) {
	self, _ := SelfIdentity()
	fake := &FakeProcTable{Fallback: System}
	reused := self
	reused.PID = 4242
	fake.Set(4242, ProcInfo{StartTime: self.StartTime + 1, State: 'S'})
	zombie := self
	zombie.PID = 4243
	fake.Set(4243, ProcInfo{StartTime: self.StartTime, State: 'Z'})
	gone := self
	gone.PID = 4244
	fake.Remove(4244)
	noStart := Identity{PID: os.Getpid()}
	other := self
	other.Host = self.Host + "-elsewhere"
	rebooted := self
	rebooted.BootID = "not-this-boot"
	cases := []struct {
		name string
		id   Identity
		want ProcStatus
	}{
		{"same process", self, Alive},
		{"pid reused", reused, Gone},
		{"zombie", zombie, Gone},
		{"no such pid", gone, Gone},
		{"no start time", noStart, ProcUnknown},
		{"other host", other, ProcUnknown},
		{"no pid", Identity{}, ProcUnknown},
	}
	if BootID() != "" {
		cases = append(cases, struct {
			name string
			id   Identity
			want ProcStatus
		}{"rebooted", rebooted, Gone})
	}
	for _, c := range cases {
		if v := CheckIdentity(fake, c.id); v.Status != c.want || v.Reason == "" {
			t.Errorf("%s: Check = %v (%s), want %v", c.name, v.Status, v.Reason, c.want)
		}
	}
}

// A real child: alive while it runs, gone (zombie) once it exits unreaped,
// gone after it is reaped.
func TestCheckRealChild(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	id, info, err := IdentityOf(System, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if info.PGID != cmd.Process.Pid || info.PPID != os.Getpid() {
		t.Errorf("info %+v", info)
	}
	if v := CheckIdentity(System, id); v.Status != Alive {
		t.Fatalf("running child: %+v", v)
	}
	members, err := GroupMembers(cmd.Process.Pid)
	if err != nil || !slices.Contains(members, cmd.Process.Pid) {
		t.Fatalf("GroupMembers = %v, %v", members, err)
	}
	if args, err := Cmdline(cmd.Process.Pid); err != nil || !slices.Equal(args, []string{"sleep", "30"}) {
		t.Errorf("Cmdline = %q, %v", args, err)
	}
	if exe, err := Exe(cmd.Process.Pid); err != nil || exe == "" {
		t.Errorf("Exe = %q, %v", exe, err)
	}
	// Kill it but do not reap it yet: a zombie is gone.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var v Verdict
	if !testtool.Poll(10*time.Second, func() bool { v = CheckIdentity(System, id); return v.Status == Gone }) {
		t.Fatalf("killed child still %v", v)
	}
	_ = cmd.Wait()
	if v := CheckIdentity(System, id); v.Status != Gone {
		t.Fatalf("reaped child: %+v", v)
	}
	if _, err := System.Stat(cmd.Process.Pid); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("Stat of a reaped pid: %v", err)
	}
}
