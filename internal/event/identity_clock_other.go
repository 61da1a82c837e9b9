//go:build !linux

package event

// convertStart reports false: only Linux has clock ticks to convert.
func convertStart(t uint64, from, to Clock) (uint64, bool) { return 0, false }
