package journal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func openFlockFile(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFlockWaitsForTheHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l")
	a, b := openFlockFile(t, p), openFlockFile(t, p)
	if err := Flock(a, time.Now(), &Backoff{}); err != nil {
		t.Fatal(err)
	}
	if err := Flock(b, time.Now().Add(5*time.Millisecond), &Backoff{}); !errors.Is(err, ErrFlockTimeout) {
		t.Fatalf("held by another: %v, want ErrFlockTimeout", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Flock(b, time.Now().Add(time.Minute), &Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond})
	}()
	if err := unflock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
	if ok, err := tryFlock(a); ok || err != nil {
		t.Fatalf("Try while b holds it: %v %v", ok, err)
	}
}

func TestFlockTriesOnceAfterTheDeadline(t *testing.T) {
	f := openFlockFile(t, filepath.Join(t.TempDir(), "l"))
	if err := Flock(f, time.Now().Add(-time.Hour), &Backoff{}); err != nil {
		t.Fatalf("a free lock past the deadline: %v", err)
	}
}

func TestFlockReportsItsErrors(t *testing.T) {
	f := openFlockFile(t, filepath.Join(t.TempDir(), "l"))
	f.Close()
	if err := Flock(f, time.Now().Add(time.Minute), &Backoff{}); err == nil || errors.Is(err, ErrFlockTimeout) {
		t.Fatalf("closed file: %v, want the flock error", err)
	}
}
