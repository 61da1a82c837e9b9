package fleet

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// The fixtures under testdata/collector were written by the real
// Collectors of examples/otel-collector (record.sh there says how): hosts
// rec-a and rec-b interleaved, a third agent with an empty host.name,
// rec-b's journal holding a line that is not an event (a torn line lcwrap
// quarantined, with the journal's quarantine record after it), and rec-a's
// whole journal shipped twice (its agent restarted on a fresh offset
// store). rotated/ is the same bytes split into a rotated file and a live
// one; live/ cuts a request mid-line with the next request appended to it
// (a killed gateway restarted) and ends with half a request (being
// written).

func newest(items []*Item) time.Time {
	var ns int64
	for _, it := range items {
		ns = max(ns, it.ReceivedNs)
	}
	return time.Unix(0, ns)
}

func TestRecordedOutput(t *testing.T) {
	for _, dir := range []string{"testdata/collector/recorded", "testdata/collector/rotated"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			items, _, _ := readAll(t, dir, t0, 0)
			now := newest(items).Add(time.Second)
			_, f, r := readAll(t, dir, now, 0)
			rep := f.Report(true)
			if rep.Records != 29 || rep.Duplicates != 8 || rep.DamageCount != 2 || len(r.Pending()) != 0 {
				t.Fatalf("records %d duplicates %d damage %d pending %v, want 29, 8, 2, none", rep.Records, rep.Duplicates, rep.DamageCount, r.Pending())
			}
			if len(rep.Hosts) != 2 {
				t.Fatalf("hosts %+v, want rec-a and rec-b", rep.Hosts)
			}
			a, b := hostOf(t, rep, "rec-a"), hostOf(t, rep, "rec-b")
			if a.Duplicates != 8 || a.Damage != 0 || b.Damage != 1 || b.JournalRecords != 1 || a.HostID != "0123456789abcdef0123456789abcdef" {
				t.Fatalf("rec-a %+v\nrec-b %+v", a, b)
			}
			if a.Silent || b.Silent || a.SkewMs == nil || b.DelayMs == nil {
				t.Fatalf("heard a second ago: rec-a %+v rec-b %+v", a, b)
			}
			// The same child id on two hosts is two children.
			ab, bb := childOf(t, rep, "rec-a", "build"), childOf(t, rep, "rec-b", "build")
			if *ab.State != event.StateCompleted || *bb.State != event.StateCompleted || ab.SourceEpoch == bb.SourceEpoch {
				t.Fatalf("rec-a/build %+v\nrec-b/build %+v", ab, bb)
			}
			if test := childOf(t, rep, "rec-a", "test"); *test.State != event.StateFailed || test.Exit == nil || test.Exit.Code == nil || *test.Exit.Code != 3 {
				t.Fatalf("rec-a/test %+v", test)
			}
			if sub := childOf(t, rep, "rec-b", "sub"); sub.Activity == nil || sub.Activity.Text != "after the torn line" {
				t.Fatalf("rec-b/sub %+v", sub)
			}
			// The record with no host, and rec-b's body that is not a journal
			// line, are damage (with its host), never children.
			if d := rep.Damage[0]; d.Host != "" || d.Class != ClassNoHost || d.Offset != 0 {
				t.Fatalf("damage 0: %+v", d)
			}
			if d := rep.Damage[1]; d.Host != "rec-b" || d.Class != string(event.ClassMalformed) {
				t.Fatalf("damage 1: %+v", d)
			}
			for _, c := range rep.Children {
				if c.ChildID == "nohost" || c.ChildID == "lcwrap-journal" {
					t.Fatalf("child %s/%s", c.Host, c.ChildID)
				}
			}
			// An hour later both hosts are silent; nothing was open but
			// rec-b/sub, which is stale for it, still created.
			_, f, _ = readAll(t, dir, now.Add(time.Hour), 0)
			rep = f.Report(true)
			sub := childOf(t, rep, "rec-b", "sub")
			if !hostOf(t, rep, "rec-b").Silent || !sub.Stale || *sub.State != event.StateCreated || sub.StaleReason != SilentReason(hostOf(t, rep, "rec-b").SilentSince) {
				t.Fatalf("an hour later: %+v", sub)
			}
			if build := childOf(t, rep, "rec-a", "build"); build.Stale {
				t.Fatalf("an ended child of a silent host is stale: %+v", build)
			}
		})
	}
}

// live/: a request cut mid-line by a killed gateway is damage with its
// file and offset, the request appended after it on the same line is
// read, and the half request at the end is pending, not damage.
func TestRecordedLive(t *testing.T) {
	dir := "testdata/collector/live"
	items, f, r := readAll(t, dir, t0, 0)
	rep := f.Report(true)
	torn := 0
	for _, it := range items {
		if it.Damage != nil && it.Damage.Class == ClassTornLine {
			torn++
			recorded, err := os.ReadFile("testdata/collector/recorded/gateway.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			first := 0
			for first < len(recorded) && recorded[first] != '\n' {
				first++
			}
			if it.Damage.File != "gateway.jsonl" || it.Damage.Offset != int64(first+1) || it.Damage.Host != "" {
				t.Fatalf("torn: %+v, want gateway.jsonl at %d", it.Damage, first+1)
			}
		}
	}
	if torn != 1 || rep.DamageCount != 3 {
		t.Fatalf("%d torn, %d damaged (%+v)", torn, rep.DamageCount, rep.Damage)
	}
	p := r.Pending()
	st, _ := os.Stat(filepath.Join(dir, "gateway.jsonl"))
	if len(p) != 1 || p[0].Offset+p[0].Bytes != st.Size() {
		t.Fatalf("pending %+v, want the last %d bytes' line", p, st.Size())
	}
	// rec-b's requests (after the torn one, and whole) are all read.
	if b := hostOf(t, rep, "rec-b"); b.Records != 12 {
		t.Fatalf("rec-b %+v", b)
	}
	for _, h := range rep.Hosts {
		if h.Host == "rec-a" {
			t.Fatalf("rec-a's only requests were cut or are being written: %+v", h)
		}
	}
}
