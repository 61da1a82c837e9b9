package fleet

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/projection"
)

// The scale benchmarks read what TestGenerateScale wrote in
// FLEET_BENCH_DIR (they are skipped otherwise) as status --all and
// status --fleet --all do, side by side, for a CPU profile of each:
//
//	FLEET_BENCH_DIR=DIR go test -run '^$' -bench Scale -benchtime 1x -cpuprofile cpu.out ./internal/fleet
func scaleDir(b *testing.B) string {
	dir := os.Getenv("FLEET_BENCH_DIR")
	if dir == "" {
		b.Skip("FLEET_BENCH_DIR is not set: nothing to read")
	}
	return dir
}

func BenchmarkScaleJournal(b *testing.B) {
	dir := scaleDir(b)
	for b.Loop() {
		t := projection.NewTracker(filepath.Join(dir, "journal.jsonl"))
		if err := t.Refresh(); err != nil {
			b.Fatal(err)
		}
		enc := json.NewEncoder(io.Discard)
		enc.SetIndent("", "  ")
		enc.Encode(t.Report(time.Now(), true))
	}
}

func BenchmarkScaleFleet(b *testing.B) {
	dir := scaleDir(b)
	for b.Loop() {
		r, err := NewReader(filepath.Join(dir, "gw"))
		if err != nil {
			b.Fatal(err)
		}
		f := New(Options{})
		if err := r.Pass(func(it *Item) error { f.Apply(it); return nil }); err != nil {
			b.Fatal(err)
		}
		r.Close()
		enc := json.NewEncoder(io.Discard)
		enc.SetIndent("", "  ")
		enc.Encode(f.Report(true))
	}
}
