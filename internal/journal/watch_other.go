//go:build !linux

package journal

import (
	"context"
	"time"
)

// dirWatch is not implemented here: ReadOptions.Watch polls.
type dirWatch struct{ broken, said bool }

func watchDir(context.Context, string) *dirWatch { return nil }

func watchDirWith(context.Context, string, string, func(string) bool) *dirWatch { return nil }

func (w *dirWatch) close()                              {}
func (w *dirWatch) drain()                              {}
func (w *dirWatch) wait(context.Context, time.Duration) {}
