//go:build !linux

package codex

import "github.com/lcwrap/lcwrap/internal/procid"

// Prove needs /proc: elsewhere it always returns ErrUnsupported.
func Prove(root procid.Identity) (Proof, error) { return Proof{}, ErrUnsupported }

// processTree needs /proc: elsewhere there is no tree to read.
func processTree(root procid.Identity) (map[int]procid.Info, error) { return nil, ErrUnsupported }
