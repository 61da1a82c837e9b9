package journal

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/lcwrap/lcwrap/internal/lazy"
	"golang.org/x/sys/unix"
)

// initPIDNamespace names the initial PID namespace: the kernel gives it a
// fixed inode number (PROC_PID_INIT_INO, 0xEFFFFFFC).
const initPIDNamespace = "pid:[4026531836]"

// procView is what this process's /proc can prove about pids, read once.
func procView() pidView { return ownView.Get() }

var ownView = lazy.Value[pidView]{Make: func() pidView {
	_, ns := selfIdentity()
	b, _ := readProc("/proc/self/status", make([]byte, 0, 2048))
	hidden := false
	if _, err := os.Lstat("/proc/1"); err != nil {
		hidden = true // hidepid: other users' processes are not listed
	}
	return newPIDView(ns, len(nsPIDs(b)), hidden)
}}

// newPIDView judges a view: ns is this process's PID namespace, levels
// the number of pids /proc gives it (NSpid: one per namespace from the
// one /proc belongs to down to its own), hidden whether /proc hides
// processes.
func newPIDView(ns string, levels int, hidden bool) pidView {
	v := pidView{ns: ns, own: levels == 1}
	switch {
	case ns == "":
		v.why = "this process cannot name its own PID namespace"
		v.own = false
	case levels == 0:
		v.why = "/proc does not say which namespaces a pid belongs to here (no NSpid)"
	case !v.own:
		v.why = "/proc here belongs to another PID namespace than this process's own (" + ns + ")"
	case ns != initPIDNamespace:
		v.why = "this process runs in a child PID namespace (" + ns + "), from which processes outside it cannot be seen"
	case hidden:
		v.why = "/proc hides other users' processes here (hidepid)"
	default:
		v.all = true
	}
	return v
}

// readProc reads a small /proc file into buf.
func readProc(name string, buf []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			return buf, nil
		}
	}
}

// nsPIDs returns the NSpid fields of a /proc/<pid>/status: the process's
// pid in each PID namespace it belongs to, outermost (the one /proc
// belongs to) first.
func nsPIDs(status []byte) []string {
	i := bytes.Index(status, []byte("\nNSpid:"))
	if i < 0 {
		return nil
	}
	line := status[i+len("\nNSpid:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.Fields(string(line))
}

// pfKthread is PF_KTHREAD, the flag of kernel threads in /proc/<pid>/stat.
const pfKthread = 0x00200000

// kernelThread reports whether pid, as /proc shows it, is a kernel thread,
// and its name.
func kernelThread(pid int) (string, bool) {
	b, err := readProc("/proc/"+strconv.Itoa(pid)+"/stat", make([]byte, 0, 512))
	if err != nil {
		return "", false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 7 {
		return "", false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return string(b[open+1 : end]), err == nil && flags&pfKthread != 0
}

// pidExists asks the kernel whether a process has pid in this process's
// PID namespace (kill(2) with signal 0), whatever /proc shows.
func pidExists(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// holdersOf lists the processes (by their pid in /proc, which must belong
// to the initial PID namespace) that have pid in any PID namespace they
// belong to, kernel threads aside; kthread names the kernel thread that
// has pid itself, if any.
func holdersOf(pid int) (hosts []int, kthread string, err error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, "", err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, "", err
	}
	target := strconv.Itoa(pid)
	buf := make([]byte, 0, 4096)
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := readProc("/proc/"+n+"/status", buf)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue // it exited meanwhile
			}
			return nil, "", err
		}
		buf = b
		found := false
		for _, id := range nsPIDs(b) {
			found = found || id == target
		}
		if !found {
			continue
		}
		host, _ := strconv.Atoi(n)
		if comm, ok := kernelThread(host); ok {
			if n == target {
				kthread = comm
			}
			continue
		}
		hosts = append(hosts, host)
	}
	return hosts, kthread, nil
}
