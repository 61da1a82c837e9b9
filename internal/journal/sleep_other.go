//go:build !linux

package journal

import "time"

func sleep(d time.Duration) { time.Sleep(d) }
