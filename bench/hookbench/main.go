// Command hookbench measures one Claude Code hook call as the agent pays
// for it: a new process per call, a payload on stdin, until it exits. It
// replays recorded payloads (internal/agent/claudecode/testdata/hooks) as many
// sessions, each call a fresh process of the handler under test, and
// prints one markdown row per handler: median and p99 wall time and the
// ratio to the first handler. It is a benchmark, not part of lcwrap.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 300, "hook calls per handler")
	payloads := flag.String("payloads", "internal/agent/claudecode/testdata/hooks", "recorded payloads")
	flag.Parse()
	// handlers: label=command (split on spaces, payload on stdin)
	files, _ := filepath.Glob(filepath.Join(*payloads, "*.json"))
	sort.Strings(files)
	var recs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		recs = append(recs, b)
	}
	if len(recs) == 0 {
		fmt.Fprintln(os.Stderr, "hookbench: no payloads")
		os.Exit(2)
	}
	var first float64
	for i, h := range flag.Args() {
		label, command, _ := strings.Cut(h, "=")
		walls := make([]float64, 0, *n)
		for c := 0; c < *n; c++ {
			session := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), c/len(recs))
			p := bytes.ReplaceAll(recs[c%len(recs)], []byte(`"session_id":"`), []byte(`"session_id":"`+session))
			argv := strings.Fields(command)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = bytes.NewReader(p)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			start := time.Now()
			err := cmd.Run()
			walls = append(walls, float64(time.Since(start).Microseconds())/1000)
			if err != nil || errb.Len() > 0 && c == 0 {
				fmt.Fprintf(os.Stderr, "hookbench: %s: %v %s\n", label, err, errb.String())
			}
		}
		slices.Sort(walls)
		med, p99 := walls[len(walls)/2], walls[min(len(walls)-1, len(walls)*99/100)]
		if i == 0 {
			first = med
		}
		fmt.Printf("| %s | %d | %.2f | %.2f | %.2f× |\n", label, *n, med, p99, med/first)
	}
}
