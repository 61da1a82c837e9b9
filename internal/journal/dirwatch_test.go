//go:build linux

package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A DirWatch says a change to a file it is told concerns it (written,
// created, renamed) and only those; a Wait with nothing said ends at its
// limit and says nothing.
func TestDirWatchSaysChangesOfItsFiles(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := WatchDir(ctx, dir, func(name string) bool { return filepath.Ext(name) == ".jsonl" })
	if w == nil {
		t.Fatal("no inotify watch on a fresh directory")
	}
	defer w.Close()
	if w.Wait(ctx, 20*time.Millisecond) {
		t.Fatal("a quiet directory said a change")
	}
	live := filepath.Join(dir, "gateway.jsonl")
	for _, change := range []struct {
		what string
		do   func() error
	}{
		{"create", func() error { return os.WriteFile(live, []byte("a\n"), 0o600) }},
		{"append", func() error {
			f, err := os.OpenFile(live, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString("b\n")
			return err
		}},
		{"rotate", func() error { return os.Rename(live, filepath.Join(dir, "gateway-1.jsonl")) }},
	} {
		w.Drain()
		if err := change.do(); err != nil {
			t.Fatal(err)
		}
		if !w.Wait(ctx, time.Minute) {
			t.Fatalf("%s: not said", change.what)
		}
	}
	// Another file's change wakes nothing.
	w.Drain()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if w.Wait(ctx, 50*time.Millisecond) {
		t.Fatal("a file that does not concern the watch was said")
	}
	// A directory removed breaks the watch: Wait says so (look, and
	// watch again or poll).
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	w2 := WatchDir(ctx, sub, func(string) bool { return true })
	if w2 == nil {
		t.Fatal("no watch on a subdirectory")
	}
	defer w2.Close()
	os.Remove(sub)
	if !w2.Wait(ctx, time.Minute) || !w2.Broken() {
		t.Fatal("the watch of a removed directory is not broken")
	}
}
