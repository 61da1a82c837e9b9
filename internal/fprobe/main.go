package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/lcwrap/lcwrap/journal"
	"github.com/lcwrap/lcwrap/jsonl"
	"github.com/lcwrap/lcwrap/view"
)

func main() {
	start := time.Now()
	if os.Args[2] == "follow" {
		n := 0
		ctx, cancel := context.WithCancel(context.Background())
		journal.Follow(ctx, os.Args[1], 0, func(rec jsonl.Record, raw []byte) error {
			if n++; n == 1000000 {
				cancel()
			}
			return nil
		}, nil)
		fmt.Println("follow:", time.Since(start))
		return
	}
	if os.Args[2] == "scan" {
		f, _ := os.Create("/tmp/scan.prof")
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
		m := view.NewModel()
		journal.Scan(os.Args[1], 0, func(rec jsonl.Record, raw []byte) error { m.Apply(&rec.Event, raw, rec.JournalSequence); return nil })
		m.Sync(time.Now())
		fmt.Println("scan+model:", time.Since(start))
		return
	}
	l := view.NewLive(view.JournalLines(os.Args[1]))
	ctx, cancel := context.WithCancel(context.Background())
	go l.Run(ctx)
	<-l.CaughtUp()
	l.With(func(m *view.Model) { m.Sync(time.Now()) })
	fmt.Println("live:", time.Since(start))
	cancel()
}
