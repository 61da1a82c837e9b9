//go:build !linux

package supervise

import "fmt"

// notifySocket needs credentials passing on unix datagram sockets
// (SO_PASSCRED), which lcwrap implements on Linux only.
type notifySocket struct{ path string }

func openNotifySocket() (*notifySocket, error) {
	return nil, fmt.Errorf("%w: sd_notify is only available on Linux", ErrNotify)
}

func (n *notifySocket) listen(int) <-chan notifyMsg { return nil }
func (n *notifySocket) stop()                       {}
func (n *notifySocket) close()                      {}
