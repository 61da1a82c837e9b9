//go:build (!linux || lcwrap_gopsutil) && unix

package event

import "golang.org/x/sys/unix"

func pgidOf(pid int) int {
	g, err := unix.Getpgid(pid)
	if err != nil {
		return -1
	}
	return g
}
