//go:build !linux

package adopt

import "context"

// pidfd does not exist here: every process is watched by polling.
type pidfd struct{}

func openPidfd(int) (*pidfd, error) { return nil, errNoPidfd }

func (*pidfd) exited() (bool, error)          { return false, errNoPidfd }
func (*pidfd) wait(ctx context.Context) error { return errNoPidfd }
func (*pidfd) close() error                   { return nil }
