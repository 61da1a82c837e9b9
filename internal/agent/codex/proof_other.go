//go:build !linux

package codex

import "github.com/lcwrap/lcwrap/internal/event"

// Prove needs /proc: elsewhere it always returns ErrUnsupported.
func Prove(root event.Identity) (Proof, error) { return Proof{}, ErrUnsupported }

// proveTree needs /proc too.
func proveTree(root event.Identity) (Proof, map[int]event.ProcInfo, error) {
	return Proof{}, nil, ErrUnsupported
}
