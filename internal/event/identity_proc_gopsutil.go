//go:build !linux || lcwrap_gopsutil

package event

import (
	"errors"
	"strings"

	"github.com/shirou/gopsutil/v4/process"
)

// ProcBackend names the process-table implementation in use.
const ProcBackend = "gopsutil"

// nativeClock is the clock of this backend's start times.
const nativeClock = ClockUnixMs

// System is the real process table, read through gopsutil. Start times are
// creation times in unix milliseconds.
var System ProcTable = gops{}

type gops struct{}

func (gops) Stat(pid int) (ProcInfo, error) {
	if pid <= 0 {
		return ProcInfo{}, ErrNoProcess
	}
	ok, err := process.PidExists(int32(pid))
	if err != nil {
		return ProcInfo{}, err
	}
	if !ok {
		return ProcInfo{}, ErrNoProcess
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return ProcInfo{}, mapErr(err)
	}
	ct, err := p.CreateTime()
	if err != nil {
		return ProcInfo{}, mapErr(err)
	}
	info := ProcInfo{PID: pid, StartTime: uint64(ct), Clock: nativeClock, State: '?'}
	if pp, err := p.Ppid(); err == nil {
		info.PPID = int(pp)
	}
	if st, err := p.Status(); err == nil && len(st) > 0 {
		switch st[0] {
		case process.Zombie:
			info.State = 'Z'
		case process.Running:
			info.State = 'R'
		case process.Sleep, process.Idle, process.Wait:
			info.State = 'S'
		case process.Stop:
			info.State = 'T'
		}
	}
	if name, err := p.Name(); err == nil {
		info.Comm = name
	}
	info.PGID = pgidOf(pid)
	return info, nil
}

func mapErr(err error) error {
	if errors.Is(err, process.ErrorProcessNotRunning) {
		return ErrNoProcess
	}
	if strings.Contains(strings.ToLower(err.Error()), "permission") {
		return ErrPermission
	}
	return err
}

// Cmdline returns the process's argument vector.
func Cmdline(pid int) ([]string, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, mapErr(err)
	}
	args, err := p.CmdlineSlice()
	if err != nil {
		return nil, mapErr(err)
	}
	return args, nil
}

// Exe returns the path of the process's executable.
func Exe(pid int) (string, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return "", mapErr(err)
	}
	return p.Exe()
}

// GroupMembers returns the pids of live (non-zombie) processes in process
// group pgid.
func GroupMembers(pgid int) ([]int, error) {
	pids, err := process.Pids()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, pid := range pids {
		if pgidOf(int(pid)) != pgid {
			continue
		}
		if info, err := (gops{}).Stat(int(pid)); err == nil && !info.Zombie() {
			out = append(out, int(pid))
		}
	}
	return out, nil
}
