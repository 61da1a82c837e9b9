//go:build !linux

package journal

import crand "crypto/rand"

// random fills b from crypto/rand.
func random(b []byte) { crand.Read(b) }
