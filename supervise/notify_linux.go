package supervise

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lcwrap/lcwrap/internal/procid"
)

// notifySocket is the NOTIFY_SOCKET lcwrap makes for the child: a unix
// datagram socket, passing credentials, in a private directory of its
// own. Every attempt of a Run shares it; each listens for its own child.
type notifySocket struct {
	path string
	dir  string
	f    *os.File // non-blocking, in the runtime's poller
	rc   syscall.RawConn
}

// oobSize holds the sender's credentials and the most descriptors one
// message can carry (SCM_MAX_FD), so the kernel never drops any.
var oobSize = unix.CmsgSpace(unix.SizeofUcred) + unix.CmsgSpace(253*4)

// openNotifySocket makes the socket in a new 0700 directory. Errors wrap
// ErrNotify; nothing is left behind when it fails.
func openNotifySocket() (*notifySocket, error) {
	dir, err := os.MkdirTemp("", "lcwrap-notify-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotify, err)
	}
	n, err := bindNotify(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %v", ErrNotify, err)
	}
	return n, nil
}

func bindNotify(dir string) (*notifySocket, error) {
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
	return &notifySocket{path: path, dir: dir, f: f, rc: rc}, nil
}

// listen reads datagrams for the child root until stop, judging each
// (see judge), and sends them in arrival order on the channel it
// returns; the channel is closed once reading has stopped.
func (n *notifySocket) listen(root int) <-chan notifyMsg {
	n.f.SetReadDeadline(time.Time{})
	out := make(chan notifyMsg, 16)
	go n.read(root, out)
	return out
}

// stop makes the reader take what is queued on the socket (at most
// maxDrain datagrams), send it, and close its channel.
func (n *notifySocket) stop() { n.f.SetReadDeadline(time.Unix(1, 0)) }

// close removes the socket and its directory. The reader must have
// stopped.
func (n *notifySocket) close() {
	n.f.Close()
	os.RemoveAll(n.dir)
}

func (n *notifySocket) read(root int, out chan<- notifyMsg) {
	defer close(out)
	buf := make([]byte, 2*maxNotify)
	oob := make([]byte, oobSize)
	for {
		var m notifyMsg
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
func receive(fd, root int, buf, oob []byte) (notifyMsg, error) {
	size, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_TRUNC|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return notifyMsg{}, err
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
	return judge(procid.System, root, pid, size, buf[:min(size, len(buf))], fds), nil
}
