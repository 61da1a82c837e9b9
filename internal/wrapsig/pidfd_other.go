//go:build !linux

package wrapsig

// Pidfd is unavailable here: Open always refuses with ErrUnsupported.
var Pidfd Opener = noPidfd{}

type noPidfd struct{}

func (noPidfd) Open(int) (Handle, error) { return nil, ErrUnsupported }
