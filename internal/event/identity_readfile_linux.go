//go:build linux

package event

import (
	"io/fs"
	"syscall"
)

// readProcFile reads a small /proc file with open(2) and read(2):
// os.ReadFile registers every file with the runtime's poller first, which
// costs a wrapper six more system calls per read on its start-up path.
func readProcFile(name string) ([]byte, error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if n > 0 {
			b = b[:len(b)+n]
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
	}
}
