package opencode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strconv"
)

// Listener is one listening TCP socket as the kernel lists it
// (/proc/PID/net/tcp and tcp6).
type Listener struct {
	Addr  netip.AddrPort
	Inode uint64
}

// tcpListen is the state "0A" of /proc/net/tcp: LISTEN.
const tcpListen = "0A"

// ParseListeners reads the LISTEN lines of a /proc/net/tcp or tcp6 text
// (addresses in the kernel's host byte order, 32 bits at a time). A line
// it cannot read is passed over: it never fails.
func ParseListeners(b []byte) []Listener {
	var out []Listener
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 10 || string(f[3]) != tcpListen {
			continue
		}
		host, port, ok := bytes.Cut(f[1], []byte(":"))
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(string(port), 16, 16)
		if err != nil {
			continue
		}
		raw, err := hex.DecodeString(string(host))
		if err != nil || len(raw) != 4 && len(raw) != 16 {
			continue
		}
		// Each 32-bit word is in the host's byte order.
		ip := make([]byte, len(raw))
		for i := 0; i < len(raw); i += 4 {
			binary.BigEndian.PutUint32(ip[i:], binary.NativeEndian.Uint32(raw[i:]))
		}
		addr, _ := netip.AddrFromSlice(ip)
		inode, err := strconv.ParseUint(string(f[9]), 10, 64)
		if err != nil || inode == 0 {
			continue
		}
		out = append(out, Listener{Addr: netip.AddrPortFrom(addr.Unmap(), uint16(p)), Inode: inode})
	}
	return out
}

// dialAddr is where lcwrap connects to reach l: loopback only (a socket
// listening on every address is reached on 127.0.0.1 or [::1]); "" when
// l listens on no loopback address.
func (l Listener) dialAddr() string {
	a := l.Addr.Addr()
	switch {
	case a.Is4() && (a.IsLoopback() || a.IsUnspecified()):
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), l.Addr.Port()).String()
	case a.Is6() && (a.IsLoopback() || a.IsUnspecified()):
		if a.IsUnspecified() { // dual-stack as Linux makes it by default
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), l.Addr.Port()).String()
		}
		return netip.AddrPortFrom(netip.IPv6Loopback(), l.Addr.Port()).String()
	}
	return ""
}
