// Command hookbench measures one command hook call as the agent pays for
// it: a new process per call, a payload on stdin, until it exits. It
// replays recorded payloads (default internal/agent/claudecode/testdata/hooks)
// as many sessions, each call a fresh process of the handler under test,
// the handlers interleaved call by call (so that a change of load falls on
// all of them alike), and prints one markdown row per handler: median and
// p99 wall time and the ratio to the first handler. It is a benchmark, not
// part of lcwrap.
//
// A handler is "label=[NAME=VALUE]... command [arg]...": leading NAME=VALUE
// words are added to that handler's environment (PAYLOADS=DIR, a pseudo
// variable, gives it payloads of its own), and "{event}" in an argument is
// the replayed file's event name (its name without the "NN-" prefix and
// ".json", for a hook whose payload does not name its event).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

type handler struct {
	label string
	argv  []string
	env   []string
	recs  [][]byte
	names []string
	walls []float64
}

var sessionKey = regexp.MustCompile(`"(session_id|sessionId)":"`)

func load(dir string) (recs [][]byte, names []string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		if i := strings.IndexByte(base, '-'); i >= 0 {
			base = base[i+1:]
		}
		recs, names = append(recs, b), append(names, base)
	}
	if len(recs) == 0 {
		fmt.Fprintf(os.Stderr, "hookbench: no payloads in %s\n", dir)
		os.Exit(2)
	}
	return recs, names
}

func main() {
	n := flag.Int("n", 300, "hook calls per handler")
	payloads := flag.String("payloads", "internal/agent/claudecode/testdata/hooks", "recorded payloads")
	flag.Parse()
	var hs []*handler
	for _, spec := range flag.Args() {
		label, command, _ := strings.Cut(spec, "=")
		h := &handler{label: label, env: os.Environ()}
		dir := *payloads
		words := strings.Fields(command)
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "/") {
			if v, ok := strings.CutPrefix(words[0], "PAYLOADS="); ok {
				dir = v
			} else {
				h.env = append(h.env, words[0])
			}
			words = words[1:]
		}
		h.argv = words
		h.recs, h.names = load(dir)
		hs = append(hs, h)
	}
	for c := 0; c < *n; c++ {
		for _, h := range hs {
			i := c % len(h.recs)
			session := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), c/len(h.recs))
			p := sessionKey.ReplaceAll(h.recs[i], []byte(`"$1":"`+session))
			argv := make([]string, len(h.argv))
			for k, a := range h.argv {
				argv[k] = strings.ReplaceAll(a, "{event}", h.names[i])
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = h.env
			cmd.Stdin = bytes.NewReader(p)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			start := time.Now()
			err := cmd.Run()
			h.walls = append(h.walls, float64(time.Since(start).Microseconds())/1000)
			if err != nil || errb.Len() > 0 && c < len(h.recs) {
				fmt.Fprintf(os.Stderr, "hookbench: %s: %v %s\n", h.label, err, errb.String())
			}
		}
	}
	var first float64
	for i, h := range hs {
		slices.Sort(h.walls)
		med, p99 := h.walls[len(h.walls)/2], h.walls[min(len(h.walls)-1, len(h.walls)*99/100)]
		if i == 0 {
			first = med
		}
		fmt.Printf("| %s | %d | %.2f | %.2f | %.2f× |\n", h.label, *n, med, p99, med/first)
	}
}
