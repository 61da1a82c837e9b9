package fleet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// TestGenerateScale writes the scale comparison of docs/fleet.md when
// FLEET_GEN_DIR names a directory (it is skipped otherwise): 100 hosts ×
// 100 children × FLEET_GEN_EVENTS events (10 unless set; 100 makes the
// issue's 1M) as a gateway's output (gw/, body-only records, one request
// per host and child, rotated at 100 MB) and as one journal holding the
// same events (journal.jsonl, child ids made unique with the host's
// name). bench/fleetscale.sh runs it. Then compare
//
//	lcwrap status --journal DIR/journal.jsonl --all --json
//	lcwrap status --fleet DIR/gw --all --json
func TestGenerateScale(t *testing.T) {
	dir := os.Getenv("FLEET_GEN_DIR")
	if dir == "" {
		t.Skip("FLEET_GEN_DIR is not set: nothing to generate")
	}
	hosts, children, per := 100, 100, 10
	if n, err := strconv.Atoi(os.Getenv("FLEET_GEN_EVENTS")); err == nil && n >= 4 {
		per = n
	}
	os.MkdirAll(filepath.Join(dir, "gw"), 0o755)
	jf, _ := os.Create(filepath.Join(dir, "journal.jsonl"))
	jw := bufio.NewWriterSize(jf, 1<<20)
	file := 0
	var gf *os.File
	var gw *bufio.Writer
	size := 0
	open := func() {
		if gw != nil {
			gw.Flush()
			gf.Close()
			os.Rename(filepath.Join(dir, "gw", "gateway.jsonl"), filepath.Join(dir, "gw", fmt.Sprintf("gateway-2026-11-30T14-%02d-00.000-size.jsonl", file)))
			file++
		}
		gf, _ = os.Create(filepath.Join(dir, "gw", "gateway.jsonl"))
		gw = bufio.NewWriterSize(gf, 1<<20)
		size = 0
	}
	open()
	js := int64(0)
	states := []event.State{event.StateCreated, event.StateStarting, event.StateRunning}
	for c := 0; c < children; c++ {
		for h := 0; h < hosts; h++ {
			host := "host-" + strconv.Itoa(h)
			var recs []rec
			for i := 0; i < per; i++ {
				at := t0.Add(time.Duration(c*per+i) * time.Second)
				var l string
				id := fmt.Sprintf("c%d", c)
				switch {
				case i < 3:
					kind := event.KindStateChanged
					if i == 0 {
						kind = event.KindCreated
					}
					l = line(t, id, int64(i+1), kind, states[i], at, 10000)
				case i == per-1:
					l = line(t, id, int64(i+1), event.KindTerminal, event.StateCompleted, at, 0)
				default:
					l = line(t, id, int64(i+1), event.KindHeartbeat, "", at, 0)
				}
				js++
				jl := l[:len(l)-1] + ",\"journalSequence\":" + strconv.FormatInt(js, 10) + "}"
				// the single journal: ids unique across hosts
				jw.WriteString(strings.ReplaceAll(jl, `"`+id+`"`, `"`+host+"-"+id+`"`) + "\n")
				recs = append(recs, rec{body: jl, observed: at, received: at.Add(100 * time.Millisecond)})
			}
			r := request(host, "", recs...)
			gw.WriteString(r + "\n")
			size += len(r) + 1
			if size > 100<<20 {
				open()
			}
		}
	}
	jw.Flush()
	jf.Close()
	gw.Flush()
	gf.Close()
}
