package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/projection"
)

const sec = time.Second

// A host heard from recently keeps its children's own freshness; past the
// threshold its open children are stale "host silent since T", never lost
// or ended, and its ended children stay as they ended.
func TestSilentHost(t *testing.T) {
	dir := t.TempDir()
	hostClock := t0 // in step with the gateway
	write(t, dir, "gateway.jsonl",
		request("a", "m1",
			rec{body: line(t, "job", 1, event.KindCreated, event.StateCreated, hostClock, 10000), observed: hostClock, received: t0.Add(100 * time.Millisecond)},
			rec{body: line(t, "job", 2, event.KindStateChanged, event.StateStarting, hostClock, 0), observed: hostClock, received: t0.Add(100 * time.Millisecond)},
			rec{body: line(t, "job", 3, event.KindStateChanged, event.StateRunning, hostClock, 0), observed: hostClock, received: t0.Add(100 * time.Millisecond)},
			rec{body: line(t, "done", 1, event.KindCreated, event.StateCreated, hostClock, 0), observed: hostClock, received: t0.Add(100 * time.Millisecond)},
			rec{body: line(t, "done", 2, event.KindTerminal, event.StateFailed, hostClock, 0), observed: hostClock, received: t0.Add(100 * time.Millisecond)},
		))
	for _, tc := range []struct {
		name   string
		now    time.Time
		silent bool
	}{
		{"heard 5s ago", t0.Add(5 * sec), false},
		{"heard 29s ago", t0.Add(29 * sec), false},
		{"heard 31s ago", t0.Add(31 * sec), true},
		{"heard an hour ago", t0.Add(time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f, _ := readAll(t, dir, tc.now, 0)
			rep := f.Report(true)
			h := hostOf(t, rep, "a")
			if h.Silent != tc.silent {
				t.Fatalf("silent = %v, want %v (%+v)", h.Silent, tc.silent, h)
			}
			job := childOf(t, rep, "a", "job")
			if job.State == nil || *job.State != event.StateRunning {
				t.Fatalf("job state %v, want running: silence never changes a state", job.State)
			}
			done := childOf(t, rep, "a", "done")
			if done.Stale {
				t.Fatalf("an ended child is never stale: %+v", done)
			}
			want := ""
			if tc.silent {
				want = SilentReason(event.Timestamp(t0.Add(100 * time.Millisecond)))
				if !strings.HasPrefix(want, "host silent since 2026-11-30T14:00:00.100Z") {
					t.Fatalf("reason %q", want)
				}
			}
			if tc.silent != job.Stale || job.StaleReason != want {
				t.Fatalf("job stale=%v reason %q, want %v %q", job.Stale, job.StaleReason, tc.silent, want)
			}
		})
	}
}

// A custom threshold is used as given.
func TestSilentAfterOption(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "g.jsonl", request("a", "", rec{body: line(t, "job", 1, event.KindCreated, event.StateCreated, t0, 0), observed: t0, received: t0}))
	_, f, _ := readAll(t, dir, t0.Add(3*sec), 2*sec)
	if h := hostOf(t, f.Report(false), "a"); !h.Silent || h.SilentSince != event.Timestamp(t0) {
		t.Fatalf("with --silent-after 2s a host heard 3s ago is silent since %s: %+v", event.Timestamp(t0), h)
	}
	if f.SilentAfter() != 2*sec {
		t.Fatalf("SilentAfter() = %s", f.SilentAfter())
	}
}

// A host whose clock is minutes off: its children are judged on its own
// clock, so they are neither stale because its clock is behind nor fresh
// forever because it is ahead.
func TestClockSkew(t *testing.T) {
	for _, off := range []time.Duration{-7 * time.Minute, 7 * time.Minute} {
		t.Run(off.String(), func(t *testing.T) {
			dir := t.TempDir()
			delay := 150 * time.Millisecond // shipping, each record
			var recs []rec
			// Host time h, gateway time h - off + delay: the host's clock is
			// off ahead of the gateway's.
			add := func(body string, h time.Time) {
				recs = append(recs, rec{body: body, observed: h.Add(20 * time.Millisecond), received: h.Add(-off + delay)})
			}
			h0 := t0.Add(off)
			add(line(t, "job", 1, event.KindCreated, event.StateCreated, h0, 10000), h0)
			add(line(t, "job", 2, event.KindStateChanged, event.StateStarting, h0, 0), h0)
			add(line(t, "job", 3, event.KindStateChanged, event.StateRunning, h0, 0), h0)
			for i := int64(1); i <= 3; i++ { // heartbeats every 10 s of host time
				h := h0.Add(time.Duration(i) * 10 * sec)
				add(line(t, "job", 3+i, event.KindHeartbeat, "", h, 0), h)
			}
			write(t, dir, "g.jsonl", request("a", "", recs...))
			lastHB := t0.Add(30*sec + delay) // gateway time of the last heartbeat

			// 5 s after the last heartbeat arrived: fresh, whatever the host's clock says.
			_, f, _ := readAll(t, dir, lastHB.Add(5*sec), time.Hour)
			rep := f.Report(false)
			h := hostOf(t, rep, "a")
			if h.SkewMs == nil || h.DelayMs == nil {
				t.Fatalf("skew and delay unknown: %+v", h)
			}
			wantSkew := (-off + delay - 20*time.Millisecond).Milliseconds()
			if *h.SkewMs != wantSkew || *h.DelayMs != 0 {
				t.Fatalf("skew %d ms delay %d ms, want %d and 0", *h.SkewMs, *h.DelayMs, wantSkew)
			}
			job := childOf(t, rep, "a", "job")
			if job.Stale {
				t.Fatalf("a host clock %s off made a fresh child stale: %+v", off, job)
			}
			if job.SinceEvidenceMs < 4000 || job.SinceEvidenceMs > 6000 {
				t.Fatalf("since evidence %d ms, want about 5 s on the host's clock", job.SinceEvidenceMs)
			}
			// 40 s after it (host still heard: threshold an hour): stale by its
			// heartbeat deadline (30 s), whatever the host's clock says.
			_, f, _ = readAll(t, dir, lastHB.Add(40*sec), time.Hour)
			job = childOf(t, f.Report(false), "a", "job")
			if !job.Stale || job.StaleReason != projection.StaleHeartbeat {
				t.Fatalf("a host clock %s off kept a child fresh past its deadline: %+v", off, job)
			}
		})
	}
}

// Skew is the least receive − observed in the window, delay the rest:
// one slow delivery (an outage) raises the delay, not the skew.
func TestSkewAndDelay(t *testing.T) {
	dir := t.TempDir()
	var recs []rec
	for i := range 5 {
		h := t0.Add(time.Duration(i) * sec)
		recs = append(recs, rec{body: line(t, "job", int64(i+1), event.KindHeartbeat, "", h, 0), observed: h, received: h.Add(2*sec + time.Duration(i)*10*time.Millisecond)})
	}
	// The last record waited in the agent's queue for a minute.
	h := t0.Add(5 * sec)
	recs = append(recs, rec{body: line(t, "job", 6, event.KindHeartbeat, "", h, 0), observed: h, received: h.Add(2*sec + time.Minute)})
	write(t, dir, "g.jsonl", request("a", "", recs...))
	_, f, _ := readAll(t, dir, h.Add(time.Minute+3*sec), time.Hour)
	hv := hostOf(t, f.Report(false), "a")
	if *hv.SkewMs != 2000 || *hv.DelayMs != 60000 {
		t.Fatalf("skew %d delay %d, want 2000 and 60000", *hv.SkewMs, *hv.DelayMs)
	}
}

// The same id on two hosts is two children; a record delivered twice is
// shown once and counted; host.id disagreements are counted.
func TestHostsAndDuplicates(t *testing.T) {
	dir := t.TempDir()
	c1 := line(t, "build", 1, event.KindCreated, event.StateCreated, t0, 0)
	c2 := line(t, "build", 2, event.KindStateChanged, event.StateStarting, t0, 0)
	c3 := line(t, "build", 3, event.KindStateChanged, event.StateRunning, t0, 0)
	end := line(t, "build", 4, event.KindTerminal, event.StateFailed, t0, 0)
	r := func(b string) rec { return rec{body: b, observed: t0, received: t0} }
	write(t, dir, "g.jsonl",
		request("b", "m2", r(c1), r(c2)),
		request("a", "m1", r(c1), r(c2), r(c3)),
		request("b", "m2", r(c1), r(c2)), // the gateway's ack was lost: sent again
		request("a", "m9", r(end)),       // another machine id under the same name
		request("b", "m2", r(c3)),
	)
	items, f, _ := readAll(t, dir, t0.Add(sec), time.Hour)
	shown := 0
	g := New(Options{Now: func() time.Time { return t0 }})
	for _, it := range items {
		if g.Apply(it).Shown() {
			shown++
		}
	}
	if shown != 7 {
		t.Fatalf("%d records shown, want 7 (9 delivered, 2 duplicates)", shown)
	}
	rep := f.Report(true)
	if rep.Duplicates != 2 || rep.Records != 9 {
		t.Fatalf("records %d duplicates %d, want 9 and 2", rep.Records, rep.Duplicates)
	}
	a, b := childOf(t, rep, "a", "build"), childOf(t, rep, "b", "build")
	if *a.State != event.StateFailed || *b.State != event.StateRunning {
		t.Fatalf("a/build %s, b/build %s: want failed and running", *a.State, *b.State)
	}
	if ha, hb := hostOf(t, rep, "a"), hostOf(t, rep, "b"); ha.HostIDDisagreements != 1 || hb.HostIDDisagreements != 0 || hb.Duplicates != 2 || ha.HostID != "m1" {
		t.Fatalf("hosts %+v %+v", ha, hb)
	}
}

// Records of different hosts interleaved in any order give the same
// picture.
func TestOrderAcrossHosts(t *testing.T) {
	var lines []string
	for i, h := range []string{"a", "b", "c"} {
		at := t0.Add(time.Duration(i) * sec)
		r := func(b string) rec { return rec{body: b, observed: at, received: at} }
		lines = append(lines,
			request(h, "", r(line(t, "x", 1, event.KindCreated, event.StateCreated, at, 0))),
			request(h, "", r(line(t, "x", 2, event.KindStateChanged, event.StateStarting, at, 0))),
			request(h, "", r(line(t, "x", 3, event.KindStateChanged, event.StateRunning, at, 0))),
			request(h, "", r(line(t, "x", 4, event.KindTerminal, event.StateCompleted, at, 0))))
	}
	want := ""
	for _, perm := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {11, 3, 7, 10, 2, 6, 9, 1, 5, 8, 0, 4}, {4, 8, 0, 5, 9, 1, 6, 10, 2, 7, 11, 3}} {
		dir := t.TempDir()
		var ls []string
		for _, i := range perm {
			ls = append(ls, lines[i])
		}
		write(t, dir, "g.jsonl", ls...)
		_, f, _ := readAll(t, dir, t0.Add(5*sec), time.Hour)
		var b strings.Builder
		for _, c := range f.Report(true).Children {
			b.WriteString(c.Host + "/" + c.ChildID + "=" + string(*c.State) + " ")
		}
		if want == "" {
			want = b.String()
		}
		if b.String() != want || !strings.Contains(want, "c/x=completed") {
			t.Fatalf("order %v: %s, want %s", perm, b.String(), want)
		}
	}
}

// Without the gateway's stamp a host has no last-heard time: its silence
// is not judged (never guessed from the host's own clock), and it is said.
func TestNoReceiveStamp(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "g.jsonl", request("a", "", rec{body: line(t, "job", 1, event.KindCreated, event.StateCreated, t0, 0), observed: t0}))
	_, f, _ := readAll(t, dir, t0.Add(time.Hour), 0)
	rep := f.Report(false)
	h := hostOf(t, rep, "a")
	if h.Silent || h.LastHeardAt != "" || h.SinceHeardMs != -1 || h.SkewMs != nil || rep.NoReceiveStamp != 1 {
		t.Fatalf("%+v, noReceiveStamp %d", h, rep.NoReceiveStamp)
	}
}

func TestMinWindow(t *testing.T) {
	w := newMinWindow(10 * sec) // ten buckets of 1 s
	w.add(int64(8*sec), 50)
	w.add(int64(9*sec), 40)
	w.add(int64(15*sec), 70)
	w.add(int64(9*sec+sec/2), 45)
	if m, ok := w.min(int64(15 * sec)); !ok || m != 40 {
		t.Fatalf("min %d %v, want 40 (all within the window)", m, ok)
	}
	if m, ok := w.min(int64(24 * sec)); !ok || m != 70 {
		t.Fatalf("min %d %v, want 70 (the early ones left the window)", m, ok)
	}
	w.add(int64(25*sec), 90) // slot 5 now holds second 25
	w.add(int64(5*sec), 1)   // older than what its slot holds: ignored
	if m, _ := w.min(int64(25 * sec)); m != 90 {
		t.Fatalf("min %d, want 90", m)
	}
	if _, ok := w.min(int64(100 * sec)); ok {
		t.Fatal("nothing within the window at 100 s")
	}
}
