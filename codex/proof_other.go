//go:build !linux

package codex

import "github.com/lcwrap/lcwrap/internal/procid"

// Prove needs /proc: elsewhere it always returns ErrUnsupported.
func Prove(root procid.Identity) (Proof, error) { return Proof{}, ErrUnsupported }
