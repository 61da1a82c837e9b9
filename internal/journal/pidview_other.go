//go:build !linux

package journal

import (
	"errors"
	"syscall"
)

// procView: without PID namespaces, every process is in this process's
// view.
func procView() pidView { return pidView{own: true, all: true} }

func kernelThread(pid int) (string, bool) { return "", false }

// pidExists asks the kernel whether a process has pid (kill(2), signal 0).
func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// holdersOf: without PID namespaces only pid itself can have pid.
func holdersOf(pid int) ([]int, string, error) {
	if !pidExists(pid) {
		return nil, "", nil
	}
	return []int{pid}, "", nil
}
