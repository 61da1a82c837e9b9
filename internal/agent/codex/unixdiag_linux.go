package codex

import (
	"encoding/binary"
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// unixSocket is what the kernel's sock_diag says about one unix socket.
type unixSocket struct {
	state uint8  // TCP_ESTABLISHED (1) for a connected one, TCP_LISTEN (10) for a listener
	named bool   // bound to a path or abstract name (an accepted connection carries its listener's name)
	peer  uint32 // inode of the other end (0: none)
}

const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	udiagShowName    = 0x01
	udiagShowPeer    = 0x04
	unixDiagName     = 0
	unixDiagPeer     = 2
	tcpEstablished   = 1
)

// unixSockets lists the unix sockets of lcwrap's network namespace by
// inode, with their peers (netlink sock_diag, as `ss -x` does).
func unixSockets() (map[uint32]unixSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	req := make([]byte, unix.NLMSG_HDRLEN+24)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	b := req[unix.NLMSG_HDRLEN:]
	b[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(b[4:], ^uint32(0)) // every state
	binary.NativeEndian.PutUint32(b[12:], udiagShowName|udiagShowPeer)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	socks := map[uint32]unixSocket{}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return socks, nil
			case unix.NLMSG_ERROR:
				return nil, errors.New("sock_diag refused the request")
			}
			if len(m.Data) < 16 {
				continue
			}
			s := unixSocket{state: m.Data[2]}
			ino := binary.NativeEndian.Uint32(m.Data[4:])
			attrs := m.Data[16:]
			for len(attrs) >= 4 {
				l := int(binary.NativeEndian.Uint16(attrs[0:]))
				t := binary.NativeEndian.Uint16(attrs[2:])
				if l < 4 || l > len(attrs) {
					break
				}
				v := attrs[4:l]
				switch {
				case t == unixDiagName && len(v) > 0:
					s.named = true
				case t == unixDiagPeer && len(v) >= 4:
					s.peer = binary.NativeEndian.Uint32(v)
				}
				attrs = attrs[min((l+3)&^3, len(attrs)):]
			}
			socks[ino] = s
		}
	}
}
