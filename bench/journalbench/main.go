// Command journalbench measures the journal for bench/journal.sh: appends
// per second from one process, from contending processes, and from a
// baseline writer that does what the reference writer does (re-read and
// re-validate the whole file under the lock on every append). It prints
// one tab-separated result line per run. It is a benchmark tool, not part
// of lcwrap.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/journal"
	"github.com/lcwrap/lcwrap/internal/linereader"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: journalbench append|contend|worker|baseline [flags]")
		os.Exit(2)
	}
	fl := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	path := fl.String("journal", "", "journal path")
	n := fl.Int("n", 1000, "appends (per process)")
	procs := fl.Int("procs", 8, "contending processes")
	sink := fl.Bool("sink", false, "append through emit.JournalSink (batched) instead of one Append per line")
	id := fl.String("id", "w", "child id of this worker")
	fl.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "append":
		err = appendRate(*path, *n)
	case "worker":
		err = worker(*path, *n, *id, *sink)
	case "contend":
		err = contend(*path, *n, *procs, *sink)
	case "baseline":
		err = baseline(*path, *n)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "journalbench:", err)
		os.Exit(1)
	}
}

func benchLine(id string, seq int) []byte {
	ev := event.Event{
		SchemaVersion: 1, EventID: fmt.Sprintf("bench/%s/%d", id, seq), Source: "bench", SourceEpoch: "bench",
		ChildID: id, Lineage: event.Lineage{RootChildID: id}, Kind: event.KindHeartbeat,
		ObservedAt: event.Timestamp(time.Now()), Sequence: event.Int64(int64(seq)),
		Capabilities: event.Launched(true).Set,
	}
	b, _ := ev.Marshal()
	return b
}

// appendRate: one process, n appends of one line each, no fsync.
func appendRate(path string, n int) error {
	j, err := journal.Open(path, journal.Options{Fsync: journal.FsyncNever})
	if err != nil {
		return err
	}
	start := time.Now()
	for i := 1; i <= n; i++ {
		if _, err := j.Append([][]byte{benchLine("one", i)}, false); err != nil {
			return err
		}
	}
	d := time.Since(start)
	if err := j.Close(); err != nil {
		return err
	}
	fmt.Printf("append\t%d\t%.0f\n", n, float64(n)/d.Seconds())
	return nil
}

// worker appends n events, one Append each or through the batching sink.
func worker(path string, n int, id string, sink bool) error {
	j, err := journal.Open(path, journal.Options{Fsync: journal.FsyncNever})
	if err != nil {
		return err
	}
	if !sink {
		for i := 1; i <= n; i++ {
			if _, err := j.Append([][]byte{benchLine(id, i)}, false); err != nil {
				return err
			}
		}
		return j.Close()
	}
	var failed error
	e := emit.New(emit.Options{Source: "bench", OnSinkError: func(_ string, err error) { failed = err }}, emit.NewJournalSink(j))
	c := e.Child(id, event.Lineage{}, event.Launched(true))
	for i := 0; i < n; i++ {
		if _, err := c.Emit(emit.Spec{Kind: event.KindHeartbeat}); err != nil {
			return err
		}
	}
	return errors.Join(e.Close(), failed)
}

// contend runs procs workers at once and checks the journal afterwards:
// every line whole and numbered 1..procs*n, one per (child, sequence).
func contend(path string, n, procs int, sink bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var cmds []*exec.Cmd
	start := time.Now()
	for p := 0; p < procs; p++ {
		args := []string{"worker", "-journal", path, "-n", strconv.Itoa(n), "-id", fmt.Sprintf("w%d", p)}
		if sink {
			args = append(args, "-sink")
		}
		cmd := exec.Command(self, args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		cmds = append(cmds, cmd)
	}
	failed := 0
	for _, c := range cmds {
		if c.Wait() != nil {
			failed++
		}
	}
	d := time.Since(start)
	seen := map[string]bool{}
	var lines int64
	err = journal.Scan(path, 0, func(rec event.Record, raw []byte) error {
		lines++
		seen[rec.Event.EventID] = true
		return nil
	})
	if err != nil {
		return err
	}
	want := int64(procs * n)
	mode := "append-per-line"
	if sink {
		mode = "journal-sink"
	}
	fmt.Printf("contend\t%s\t%d\t%d\t%.0f\t%d\t%d\n", mode, procs, lines, float64(lines)/d.Seconds(), want-int64(len(seen)), failed)
	return nil
}

// baseline appends n lines the way the reference writer does: take the
// lock directory, read the whole file and validate every line (and its
// journalSequence), append one line, release. (The reference's line
// splitter also copies the rest of its buffer per line; this baseline does
// not, so it is faster than the reference.)
func baseline(path string, n int) error {
	lock := path + ".baseline-lock"
	start := time.Now()
	for i := 1; i <= n; i++ {
		for {
			err := os.Mkdir(lock, 0o700)
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		owner, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "token": strconv.Itoa(i), "createdAt": time.Now().UnixMilli()})
		if err := os.WriteFile(filepath.Join(lock, "owner.json"), owner, 0o600); err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var count int64
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), linereader.DefaultMaxBytes+1)
		for sc.Scan() {
			count++
			_, js, err := event.Parse(sc.Bytes())
			if err != nil || js != count {
				return fmt.Errorf("line %d: bad (%v)", count, err)
			}
		}
		line := benchLine("base", i)
		line = append(line[:len(line)-1], []byte(fmt.Sprintf(`,"journalSequence":%d}`+"\n", count+1))...)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(line)
		f.Close()
		if err != nil {
			return err
		}
		os.Remove(filepath.Join(lock, "owner.json"))
		os.Remove(lock)
	}
	d := time.Since(start)
	fmt.Printf("baseline\t%d\t%.1f\n", n, float64(n)/d.Seconds())
	return nil
}
