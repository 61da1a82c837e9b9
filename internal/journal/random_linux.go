//go:build linux

package journal

import (
	crand "crypto/rand"

	"golang.org/x/sys/unix"
)

// random fills b with getrandom(2) itself. crypto/rand goes through the
// vDSO, whose first call in a process maps per-thread state (page faults
// and a TLB shootdown on every CPU the process runs on): more than a
// short-lived writer's whole lock cycle costs.
func random(b []byte) {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			crand.Read(b)
			return
		}
		b = b[n:]
	}
}
