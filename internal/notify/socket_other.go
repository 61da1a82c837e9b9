//go:build !linux

package notify

import "errors"

// Socket needs credentials passing on unix datagram sockets
// (SO_PASSCRED), which lcwrap implements on Linux only.
type Socket struct{ path string }

// Open fails: sd_notify is only available on Linux.
func Open() (*Socket, error) { return nil, errors.New("sd_notify is only available on Linux") }

// Path returns "".
func (n *Socket) Path() string { return n.path }

// Listen returns nil.
func (n *Socket) Listen(int) <-chan Msg { return nil }

// Stop does nothing.
func (n *Socket) Stop() {}

// Close does nothing.
func (n *Socket) Close() {}
