//go:build linux

package journal

import (
	crand "crypto/rand"
	"unsafe"

	"golang.org/x/sys/unix"
)

// random fills b with getrandom(2) itself, the system call. crypto/rand
// and unix.Getrandom go through the vDSO, whose first call in a process
// maps per-thread state (page faults and a TLB shootdown on every CPU the
// process runs on): more than a short-lived writer's whole lock cycle
// costs.
func random(b []byte) {
	for len(b) > 0 {
		n, _, errno := unix.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 || int(n) <= 0 {
			crand.Read(b)
			return
		}
		b = b[n:]
	}
}
