//go:build !linux

package opencode

import "github.com/lcwrap/lcwrap/internal/event"

// FindServer needs Linux's /proc (open descriptors, listening sockets).
func FindServer(event.Identity, int) (*ServerProof, string, error) {
	return nil, "", ErrUnsupported
}
