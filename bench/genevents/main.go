// Command genevents writes realistic schema-v1 journal lines (about 350
// bytes each) for benchmarks: many children, each going through created,
// starting, running, activity and heartbeats, and a terminal event.
// It is a benchmark fixture generator, not part of lcwrap.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 1000000, "events to write")
	children := flag.Int("children", 10000, "distinct child ids")
	journal := flag.Bool("journal", false, "add journalSequence (a journal file)")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	per := *n / *children
	if per < 2 {
		per = 2
	}
	seqs := make([]int, *children)
	caps := `"capabilities":{"history":"known","heartbeat":"known","snapshot":"unknown","cancel":"known","terminalCause":"known"}`
	for i := 0; i < *n; i++ {
		c := i % *children
		seqs[c]++
		seq := seqs[c]
		id := fmt.Sprintf("build-%05d", c)
		ts := start.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		head := fmt.Sprintf(`{"schemaVersion":1,"eventId":"mij2k3a1-k3x9qa2m/%s/%d","source":"lcwrap","sourceEpoch":"mij2k3a1-k3x9qa2m","childId":"%s","lineage":{"rootChildId":"%s","attempt":0,"external":false},`, id, seq, id, id)
		var body string
		switch {
		case seq == 1:
			body = fmt.Sprintf(`"kind":"created","state":"created","observedAt":"%s","sequence":%d,"details":{"command":["make","test"],"heartbeatIntervalMs":10000},`, ts, seq)
		case seq == 2:
			body = fmt.Sprintf(`"kind":"state_changed","state":"starting","observedAt":"%s","sequence":%d,`, ts, seq)
		case seq == 3:
			body = fmt.Sprintf(`"kind":"state_changed","state":"running","observedAt":"%s","sequence":%d,`, ts, seq)
		case seq == per:
			body = fmt.Sprintf(`"kind":"terminal","state":"completed","observedAt":"%s","sequence":%d,"details":{"exit":{"code":0},"claim":"process-exit-status-only"},`, ts, seq)
		case seq > per:
			body = fmt.Sprintf(`"kind":"diagnostic","observedAt":"%s","sequence":%d,"details":{"note":"late"},`, ts, seq)
		case seq%2 == 0:
			body = fmt.Sprintf(`"kind":"heartbeat","observedAt":"%s","sequence":%d,`, ts, seq)
		default:
			body = fmt.Sprintf(`"kind":"activity","observedAt":"%s","sequence":%d,"activity":"ok github.com/x/y/pkg%d 0.%03ds",`, ts, seq, seq, seq%1000)
		}
		fmt.Fprint(w, head, body, caps)
		if *journal {
			fmt.Fprintf(w, `,"journalSequence":%d`, i+1)
		}
		fmt.Fprint(w, "}\n")
	}
}
