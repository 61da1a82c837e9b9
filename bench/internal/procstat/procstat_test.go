package procstat

import (
	"os"
	"testing"
	"time"
)

func TestCPUGrowsWithWork(t *testing.T) {
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := CPU(os.Getpid())
	if err != nil || after <= before {
		t.Fatalf("CPU before %v, after 50 ms of work %v (%v)", before, after, err)
	}
	if _, err := CPU(-1); err == nil {
		t.Fatal("CPU of no process: no error")
	}
}
