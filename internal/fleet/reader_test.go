package fleet

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

func events(items []*Item) (ev, dmg []*Item) {
	for _, it := range items {
		if it.Damage != nil {
			dmg = append(dmg, it)
		} else {
			ev = append(ev, it)
		}
	}
	return ev, dmg
}

// A partly written last line of the live file is waited for, then read
// once it is whole; nothing of it is damage.
func TestPendingLastLine(t *testing.T) {
	dir := t.TempDir()
	r1 := request("a", "", rec{body: line(t, "x", 1, event.KindCreated, event.StateCreated, t0, 0), observed: t0, received: t0})
	r2 := request("a", "", rec{body: line(t, "x", 2, event.KindStateChanged, event.StateStarting, t0, 0), observed: t0, received: t0})
	p := write(t, dir, "gateway.jsonl", r1)
	appendTo(t, p, r2[:len(r2)/2])
	r, err := NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []*Item
	collect := func(it *Item) error { c := *it; got = append(got, &c); return nil }
	if err := r.Pass(collect); err != nil {
		t.Fatal(err)
	}
	if ev, dmg := events(got); len(ev) != 1 || len(dmg) != 0 {
		t.Fatalf("%d events %d damaged, want 1 and 0", len(ev), len(dmg))
	}
	if p := r.Pending(); len(p) != 1 || p[0].File != "gateway.jsonl" || p[0].Offset != int64(len(r1)+1) || p[0].Bytes != int64(len(r2)/2) {
		t.Fatalf("pending %+v", p)
	}
	appendTo(t, p, r2[len(r2)/2:]+"\n")
	got = nil
	if err := r.Pass(collect); err != nil {
		t.Fatal(err)
	}
	if ev, dmg := events(got); len(ev) != 1 || len(dmg) != 0 || ev[0].Event.ChildID != "x" || ev[0].Cursor.Offset != int64(len(r1)+1) {
		t.Fatalf("after the rest arrived: %d events %d damaged", len(ev), len(dmg))
	}
	if len(r.Pending()) != 0 {
		t.Fatalf("pending %+v", r.Pending())
	}
}

// A request cut off mid-file (a gateway killed while writing, restarted:
// the exporter appends the next request to the cut one) is damage with
// its file and offset; the request after it, on the same line, is read.
// A request written whole just before the kill, without its newline,
// joined to the next one, is read whole too.
func TestTornAndJoinedLines(t *testing.T) {
	dir := t.TempDir()
	r := func(child string, seq int64, st event.State, kind event.Kind) string {
		return request("a", "", rec{body: line(t, child, seq, kind, st, t0, 0), observed: t0, received: t0})
	}
	first := r("x", 1, event.StateCreated, event.KindCreated)
	torn := r("x", 2, event.StateStarting, event.KindStateChanged)
	after := r("x", 3, event.StateRunning, event.KindStateChanged)
	whole := r("y", 1, event.StateCreated, event.KindCreated)
	next := r("y", 2, event.StateStarting, event.KindStateChanged)
	write(t, dir, "gateway.jsonl", first, torn[:len(torn)-40]+after, whole+next)
	items, f, _ := readAll(t, dir, t0, 0)
	ev, dmg := events(items)
	if len(ev) != 4 || len(dmg) != 1 {
		t.Fatalf("%d events %d damaged, want 4 and 1", len(ev), len(dmg))
	}
	d := dmg[0].Damage
	if d.File != "gateway.jsonl" || d.Offset != int64(len(first)+1) || d.Class != ClassTornLine || d.Host != "" {
		t.Fatalf("damage %+v", d)
	}
	if ev[1].Event.ChildID != "x" || ev[1].Cursor.Offset != int64(len(first)+1) || ev[1].Cursor.Index != 1 {
		t.Fatalf("the request after the torn one: %+v", ev[1].Cursor)
	}
	if ev[3].Cursor.Index != 1 || ev[2].Cursor.Offset != ev[3].Cursor.Offset {
		t.Fatalf("joined requests: %+v %+v", ev[2].Cursor, ev[3].Cursor)
	}
	rep := f.Report(true)
	if rep.DamageCount != 1 || len(rep.Damage) != 1 {
		t.Fatalf("report damage %d %+v", rep.DamageCount, rep.Damage)
	}
	// x is provisional: its sequence 2 was in the torn request.
	if x := childOf(t, rep, "a", "x"); !x.Provisional {
		t.Fatalf("x lost sequence 2 and is not provisional: %+v", x)
	}
}

// Records that are not events are damage with their host: no host, a
// body that is not a string, a body that is not a journal line.
func TestRecordDamage(t *testing.T) {
	dir := t.TempDir()
	good := line(t, "x", 1, event.KindCreated, event.StateCreated, t0, 0)
	write(t, dir, "g.jsonl",
		request("", "", rec{body: good, observed: t0, received: t0}),
		request("a", "", rec{body: "not a journal line", observed: t0, received: t0}, rec{notStr: true, received: t0}, rec{body: good, received: t0}),
		`{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"{\"schemaVersion\":1}"}}]}]}]}`,
		"plain text",
	)
	items, f, _ := readAll(t, dir, t0, 0)
	ev, dmg := events(items)
	if len(ev) != 1 || len(dmg) != 5 {
		t.Fatalf("%d events %d damaged, want 1 and 5", len(ev), len(dmg))
	}
	want := []struct{ host, class string }{{"", ClassNoHost}, {"a", ""}, {"a", ClassNoBody}, {"", ClassNoHost}, {"", ClassTornLine}}
	for i, w := range want {
		d := dmg[i].Damage
		if d.Host != w.host || (w.class != "" && d.Class != w.class) || d.Reason == "" {
			t.Fatalf("damage %d: %+v, want host %q class %q", i, d, w.host, w.class)
		}
	}
	if strings.Contains(dmg[1].Damage.Class, "no-") || dmg[1].Damage.Text != "not a journal line" {
		t.Fatalf("a body that is not a journal line: %+v", dmg[1].Damage)
	}
	if h := hostOf(t, f.Report(false), "a"); h.Damage != 2 || h.Records != 3 {
		t.Fatalf("host a: %+v", h)
	}
}

// Files are read in the order they were written (rotated ones by their
// rotation time, then the live one), and a cursor taken in the live file
// still names its record after a rotation renamed the file.
func TestRotationAndCursor(t *testing.T) {
	dir := t.TempDir()
	r := func(seq int64, st event.State, kind event.Kind) string {
		return request("a", "", rec{body: line(t, "x", seq, kind, st, t0, 0), observed: t0, received: t0})
	}
	write(t, dir, "gateway-2026-11-30T13-00-00.000-size.jsonl", r(1, event.StateCreated, event.KindCreated))
	write(t, dir, "gateway-2026-11-30T12-00-00.000-size.jsonl", r(9, "", event.KindHeartbeat)) // older: read first
	live := write(t, dir, "gateway.jsonl", r(2, event.StateStarting, event.KindStateChanged), r(3, event.StateRunning, event.KindStateChanged))
	items, _, _ := readAll(t, dir, t0, 0)
	var seqs []int64
	for _, it := range items {
		s, _ := it.Event.Seq()
		seqs = append(seqs, s)
	}
	if len(seqs) != 4 || seqs[0] != 9 || seqs[1] != 1 || seqs[2] != 2 || seqs[3] != 3 {
		t.Fatalf("read order %v, want [9 1 2 3]", seqs)
	}
	cur := items[2].Cursor // seq 2, in the live file
	if cur.File != "gateway.jsonl" {
		t.Fatalf("cursor %s", cur)
	}
	parsed, err := ParseCursor(cur.String())
	if err != nil || parsed != cur {
		t.Fatalf("round trip %q: %+v %v", cur.String(), parsed, err)
	}
	// Rotate: the live file is renamed, a new one started.
	if err := os.Rename(live, filepath.Join(dir, "gateway-2026-11-30T14-00-00.000-size.jsonl")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "gateway.jsonl", r(4, "", event.KindHeartbeat))
	rd, err := NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rd.After(parsed)
	var after []int64
	if err := rd.Pass(func(it *Item) error {
		if !it.Before {
			s, _ := it.Event.Seq()
			after = append(after, s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after[0] != 3 || after[1] != 4 {
		t.Fatalf("after %s: %v, want [3 4]", cur, after)
	}
	// A cursor of another output is refused, not read from the start.
	other := parsed
	other.FP++
	rd2, _ := NewReader(dir)
	defer rd2.Close()
	rd2.After(other)
	if err := rd2.Pass(func(*Item) error { return nil }); !errors.Is(err, ErrCursorNotFound) {
		t.Fatalf("unknown cursor: %v", err)
	}
}

// Following: a rotation between two passes loses nothing and repeats
// nothing; the renamed file is read to its end by its inode.
func TestFollowAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	r := func(seq int64) string {
		return request("a", "", rec{body: line(t, "x", seq, event.KindHeartbeat, "", t0, 0), observed: t0, received: t0})
	}
	live := write(t, dir, "gateway.jsonl", r(1))
	rd, err := NewReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var seqs []int64
	collect := func(it *Item) error { s, _ := it.Event.Seq(); seqs = append(seqs, s); return nil }
	if err := rd.Pass(collect); err != nil {
		t.Fatal(err)
	}
	appendTo(t, live, r(2)+"\n")
	os.Rename(live, filepath.Join(dir, "gateway-2026-11-30T14-00-00.000-size.jsonl"))
	write(t, dir, "gateway.jsonl", r(3))
	if err := rd.Pass(collect); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
		t.Fatalf("followed %v, want [1 2 3]", seqs)
	}
}

// A glob, a single file, and what is not an output.
func TestPaths(t *testing.T) {
	dir := t.TempDir()
	rq := request("a", "", rec{body: line(t, "x", 1, event.KindCreated, event.StateCreated, t0, 0), observed: t0, received: t0})
	p := write(t, dir, "g1.jsonl", rq)
	write(t, dir, "g2.jsonl", rq)
	write(t, dir, ".hidden", "junk")
	for _, tc := range []struct {
		path string
		n    int
	}{{dir, 2}, {p, 1}, {filepath.Join(dir, "g*.jsonl"), 2}, {filepath.Join(dir, "none*"), 0}} {
		items, _, _ := readAll(t, tc.path, t0, 0)
		if len(items) != tc.n {
			t.Fatalf("%s: %d items, want %d", tc.path, len(items), tc.n)
		}
	}
	if _, err := NewReader(filepath.Join(dir, "missing")); !errors.Is(err, ErrNoOutput) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := NewReader(filepath.Join(dir, "[")); err == nil {
		t.Fatal("a bad glob is an error")
	}
}

// A file that shrank was truncated: said as damage, read again.
func TestShrunkFile(t *testing.T) {
	dir := t.TempDir()
	rq := request("a", "", rec{body: line(t, "x", 1, event.KindCreated, event.StateCreated, t0, 0), observed: t0, received: t0})
	p := write(t, dir, "g.jsonl", rq, rq)
	rd, _ := NewReader(dir)
	defer rd.Close()
	n := 0
	var classes []string
	fn := func(it *Item) error {
		n++
		if it.Damage != nil {
			classes = append(classes, it.Damage.Class)
		}
		return nil
	}
	rd.Pass(fn)
	os.WriteFile(p, []byte(rq+"\n"), 0o600)
	rd.Pass(fn)
	if n != 4 || len(classes) != 1 || classes[0] != ClassShrunk {
		t.Fatalf("%d items, damage %v", n, classes)
	}
}

func TestParseCursor(t *testing.T) {
	c := Cursor{File: "a:b.jsonl", Offset: 12, Index: 3, FP: 0xabc}
	got, err := ParseCursor(c.String())
	if err != nil || got != c {
		t.Fatalf("%q → %+v %v", c.String(), got, err)
	}
	for _, bad := range []string{"", "x", "f:1:2", "f:-1:0:0000000000000abc", "f:1:x:0000000000000abc", "f:1:0:abc", "/x/f:1:0:0000000000000abc", ":1:0:0000000000000abc"} {
		if _, err := ParseCursor(bad); !errors.Is(err, ErrCursor) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	_ = time.Second
}

// With ReuseEvent the reader hands the same items, its events filled in
// one place: a fleet built from them is the fleet built without it, and
// each item's event is the one it would have had.
func TestReuseEventSameItems(t *testing.T) {
	for _, dir := range []string{"testdata/collector/recorded", "testdata/collector/rotated", "testdata/collector/live"} {
		read := func(reuse bool) ([]string, Report) {
			r, err := NewReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			r.ReuseEvent = reuse
			f := New(Options{Now: func() time.Time { return t0 }})
			var out []string
			var prev *event.Event
			err = r.Pass(func(it *Item) error {
				f.Apply(it)
				if it.Event == nil {
					out = append(out, "damage "+it.Damage.Class)
					return nil
				}
				if reuse && prev != nil && it.Event != prev {
					t.Fatalf("%s: ReuseEvent handed a new event", dir)
				}
				prev = it.Event
				b, _ := it.Event.Marshal()
				out = append(out, it.Host+" "+it.Cursor.String()+" "+string(b))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out, f.Report(true)
		}
		a, ra := read(false)
		b, rb := read(true)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("%s: items differ:\n%s\nwith ReuseEvent:\n%s", dir, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		ja, _ := json.Marshal(ra)
		jb, _ := json.Marshal(rb)
		if string(ja) != string(jb) || len(a) == 0 {
			t.Fatalf("%s: reports differ:\n%s\n%s", dir, ja, jb)
		}
	}
}
