package stream

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is what growPipe asks for: the default limit for unprivileged
// processes (/proc/sys/fs/pipe-max-size).
const pipeSize = 1 << 20

// growPipe makes the pipe of w hold pipeSize bytes (the default is 64
// KiB); where the system refuses, it stays as it is.
func growPipe(w *os.File) {
	if rc, err := w.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

// teeFD is the descriptor of out when a Stream may pass the child's bytes
// to it with tee(2): out is a pipe in blocking mode (a non-blocking one
// would make the copy spin while it is full). It is -1 otherwise.
// Its mode is only read (Fd would set it, for everyone sharing the file).
func teeFD(out io.Writer) int {
	f, ok := out.(*os.File)
	if !ok {
		return -1
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	tee := -1
	rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err == nil && fl&unix.O_NONBLOCK == 0 && unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
			tee = int(fd)
		}
	})
	return tee
}

// teeRead passes the next chunk of the pipe src to the pipe out without
// copying it (tee(2) duplicates pipe buffers), then reads the same bytes
// into buf: one copy, where a read and a write make two. Its outcomes:
// n bytes passed and read; outErr when out failed (nothing was passed);
// err when src ended (io.EOF), failed, was closed or reached its
// deadline; errTeeUnsupported when tee(2) cannot be used here (nothing
// was passed or read); errNotPassing when gate refused to run tee (an
// event sink shares the stream now; nothing was passed or read).
func teeRead(src *os.File, out int, buf []byte, gate func(tee func()) bool) (n int, outErr, err error) {
	rc, err := src.SyscallConn()
	if err != nil {
		return 0, nil, err
	}
	var teed int64
	var terr error
	closed := false
	if err := rc.Read(func(fd uintptr) bool {
		for {
			// src is non-blocking, so tee does not wait for either end.
			if !gate(func() { teed, terr = unix.Tee(int(fd), out, len(buf), 0) }) {
				closed = true
				return true
			}
			if terr != unix.EAGAIN {
				return true
			}
			if n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err != nil || n == 0 {
				return false // nothing to pass yet: the poller waits for the child
			}
			// out is full: wait for room, as a blocking write would.
			unix.Poll([]unix.PollFd{{Fd: int32(out), Events: unix.POLLOUT}}, -1)
		}
	}); err != nil {
		return 0, nil, err
	}
	switch {
	case closed:
		return 0, nil, errNotPassing
	case terr == unix.EINVAL || terr == unix.ENOSYS:
		return 0, nil, errTeeUnsupported
	case terr != nil:
		return 0, terr, nil
	case teed == 0:
		return 0, nil, io.EOF
	}
	// The passed bytes are in src (only this copy reads it): take them out
	// whatever src's deadline says, or a deadline passing now would leave
	// them for the drain's sweep, which would pass them a second time.
	for n < int(teed) {
		var k int
		var rerr error
		if cerr := rc.Control(func(fd uintptr) { k, rerr = unix.Read(int(fd), buf[n:teed]) }); cerr != nil {
			return n, nil, cerr
		}
		switch {
		case k > 0:
			n += k
		case rerr == unix.EINTR:
		case rerr == nil:
			return n, nil, io.ErrUnexpectedEOF
		default:
			return n, nil, rerr
		}
	}
	return n, nil, nil
}
