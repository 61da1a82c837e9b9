//go:build linux && !lcwrap_gopsutil

package event

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// ProcBackend names the process-table implementation in use.
const ProcBackend = "procfs"

// nativeClock is the clock of this backend's start times.
const nativeClock = ClockTicks

// System is the real process table, read from /proc.
var System ProcTable = procfs{}

type procfs struct{}

func (procfs) Stat(pid int) (ProcInfo, error) { return readStat(pid) }

func mapErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrNoProcess
	case errors.Is(err, fs.ErrPermission):
		return ErrPermission
	}
	return err
}

func readStat(pid int) (ProcInfo, error) {
	if pid <= 0 {
		return ProcInfo{}, ErrNoProcess
	}
	b, err := readProcFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcInfo{}, mapErr(err)
	}
	return parseStat(pid, b)
}

// parseStat parses /proc/<pid>/stat. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(pid int, b []byte) (ProcInfo, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return ProcInfo{}, fmt.Errorf("procid: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return ProcInfo{}, fmt.Errorf("procid: short /proc/%d/stat", pid)
	}
	info := ProcInfo{PID: pid, Comm: string(b[open+1 : end]), State: '?'}
	if len(f[0]) > 0 {
		info.State = f[0][0]
	}
	info.PPID, _ = strconv.Atoi(f[1])
	info.PGID, _ = strconv.Atoi(f[2])
	info.SID, _ = strconv.Atoi(f[3])
	st, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return ProcInfo{}, fmt.Errorf("procid: bad start time in /proc/%d/stat", pid)
	}
	info.StartTime = st
	return info, nil
}

// Cmdline returns the process's argument vector.
func Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, mapErr(err)
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil, nil // a kernel thread or a zombie
	}
	return strings.Split(string(b), "\x00"), nil
}

// Exe returns the path of the process's executable.
func Exe(pid int) (string, error) {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return "", mapErr(err)
	}
	return p, nil
}

// GroupMembers returns the pids of live (non-zombie) processes in process
// group pgid.
func GroupMembers(pgid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		info, err := readStat(pid)
		if err != nil || info.PGID != pgid || info.Zombie() {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
