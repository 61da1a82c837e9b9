// Package procstat reads what the benchmarks measure of a process from
// /proc: the CPU time of all its threads. It claims nothing about
// processes other than the one named, nor about time before it started.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU is the time every thread of pid has spent on a CPU so far (each
// thread's schedstat, summed). A thread that ends while it is read is
// left out; the error is /proc's when the threads cannot be listed.
func CPU(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // a thread that just ended
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += ns
		}
	}
	return time.Duration(sum), nil
}
