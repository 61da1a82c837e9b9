//go:build !linux

package codex

import "github.com/lcwrap/lcwrap/internal/procid"

// Prove needs /proc: elsewhere it always returns ErrUnsupported.
func Prove(root procid.Identity) (Proof, error) { return Proof{}, ErrUnsupported }

// proveTree needs /proc too.
func proveTree(root procid.Identity) (Proof, map[int]procid.Info, error) {
	return Proof{}, nil, ErrUnsupported
}
