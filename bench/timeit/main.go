// Command timeit runs a command several times and prints one tab-separated
// row: label, runs, median/min/max wall milliseconds, median CPU
// milliseconds (user+system, children included) and peak RSS in KiB.
// It is the stopwatch of `make bench`; it is not part of lcwrap.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 10, "timed runs")
	warm := flag.Int("warmup", 1, "untimed runs first")
	label := flag.String("label", "", "row label (default: the command)")
	stdin := flag.String("stdin", "", "file to feed on standard input")
	quiet := flag.Bool("quiet", true, "discard the command's output")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: timeit [-n N] [-label L] -- CMD [ARGS...]")
		os.Exit(2)
	}
	if *label == "" {
		*label = fmt.Sprint(args)
	}
	var walls, cpus []float64
	var rss int64
	for i := 0; i < *warm+*n; i++ {
		cmd := exec.Command(args[0], args[1:]...)
		if !*quiet {
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		}
		if *stdin != "" {
			f, err := os.Open(*stdin)
			if err != nil {
				fmt.Fprintln(os.Stderr, "timeit:", err)
				os.Exit(2)
			}
			cmd.Stdin = f
			defer f.Close()
		}
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if cmd.ProcessState == nil {
			fmt.Fprintln(os.Stderr, "timeit:", err)
			os.Exit(2)
		}
		if i < *warm {
			continue
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		walls = append(walls, float64(wall.Microseconds())/1000)
		cpus = append(cpus, float64(cpu.Microseconds())/1000)
		rss = max(rss, ru.Maxrss)
	}
	fmt.Printf("%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%d\n", *label, *n, median(walls), slices.Min(walls), slices.Max(walls), median(cpus), rss)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
