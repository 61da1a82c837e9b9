package notify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/event"
)

// Socket is the NOTIFY_SOCKET lcwrap makes for the child: a unix datagram
// socket, passing credentials, in a private directory of its own. Every
// attempt of a run shares it; each listens for its own child.
type Socket struct {
	path string
	dir  string
	f    *os.File // non-blocking, in the runtime's poller
	rc   syscall.RawConn
}

// oobSize holds the sender's credentials and the most descriptors one
// message can carry (SCM_MAX_FD), so the kernel never drops any. A
// function, not a variable: package initialisation is on every process's
// start-up path.
func oobSize() int { return unix.CmsgSpace(unix.SizeofUcred) + unix.CmsgSpace(253*4) }

// Open makes the socket in a new 0700 directory. Outcomes: the Socket; or
// the error that kept it from being made (nothing is left behind).
func Open() (*Socket, error) {
	dir, err := os.MkdirTemp("", "lcwrap-notify-")
	if err != nil {
		return nil, err
	}
	n, err := bind(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return n, nil
}

func bind(dir string) (*Socket, error) {
	path := filepath.Join(dir, "notify.sock")
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return nil, fmt.Errorf("socket path %s is too long: set TMPDIR to a shorter directory", path)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Socket{path: path, dir: dir, f: f, rc: rc}, nil
}

// Path is the socket's path, for NOTIFY_SOCKET.
func (n *Socket) Path() string { return n.path }

// Listen reads datagrams for the child root until Stop, judging each (see
// Judge), and sends them in arrival order on the channel it returns; the
// channel is closed once reading has stopped.
func (n *Socket) Listen(root int) <-chan Msg {
	n.f.SetReadDeadline(time.Time{})
	out := make(chan Msg, 16)
	go n.read(root, out)
	return out
}

// Stop makes the reader take what is queued on the socket (at most
// maxDrain datagrams), send it, and close its channel.
func (n *Socket) Stop() { n.f.SetReadDeadline(time.Unix(1, 0)) }

// Close removes the socket and its directory. The reader must have
// stopped.
func (n *Socket) Close() {
	n.f.Close()
	os.RemoveAll(n.dir)
}

func (n *Socket) read(root int, out chan<- Msg) {
	defer close(out)
	buf := make([]byte, 2*MaxSize)
	oob := make([]byte, oobSize())
	for {
		var m Msg
		var rerr error
		err := n.rc.Read(func(fd uintptr) bool {
			m, rerr = receive(int(fd), root, buf, oob)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err != nil {
			break // stopped (or closed)
		}
		if rerr == nil {
			out <- m
		}
	}
	n.rc.Control(func(fd uintptr) {
		for range maxDrain {
			m, err := receive(int(fd), root, buf, oob)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return
			}
			out <- m
		}
	})
}

// receive reads one datagram with its credentials and descriptors (made
// close-on-exec at once) and judges it.
func receive(fd, root int, buf, oob []byte) (Msg, error) {
	size, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_TRUNC|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return Msg{}, err
	}
	var fds []int
	pid := 0
	cmsgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for i := range cmsgs {
		if rights, err := unix.ParseUnixRights(&cmsgs[i]); err == nil {
			fds = append(fds, rights...)
		}
		if cred, err := unix.ParseUnixCredentials(&cmsgs[i]); err == nil {
			pid = int(cred.Pid)
		}
	}
	return Judge(event.System, root, pid, size, buf[:min(size, len(buf))], fds), nil
}
