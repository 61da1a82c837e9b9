package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// testdata/projection/mixed-conditions.jsonl holds one child per
// condition; each must come out as the rules say.
func TestMixedConditionsFixture(t *testing.T) {
	f, err := os.Open("../../testdata/projection/mixed-conditions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := New()
	st, _, err := ReadStream(f, p, event.DecoderOptions{})
	if err != nil || st.Invalid != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	r := p.Report(t0.Add(10*time.Minute), true)
	got := map[string]string{}
	for _, v := range r.Children {
		got[v.ChildID] = v.Display
		if v.Provisional {
			got[v.ChildID] += " provisional"
		}
	}
	want := map[string]string{
		"build-1": "completed",
		"build-2": "running provisional", // 4 is missing
		"agent-3": "unknown provisional", // joined mid-way
		"adopt-4": "observed",
		"job-5":   "lost", // corrected, then lost; the late completed cannot revive it
		"note-6":  "created",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("children %v, want %v", got, want)
	}
	wantCounts := Counts{Applied: 20, Gap: 1, Duplicate: 2, Conflict: 1, IllegalTransition: 1, TerminalImmutable: 1}
	if r.Events != wantCounts {
		t.Fatalf("counts %v, want %v", r.Events, wantCounts)
	}
	// Ordered: running first, ended last; the secret in build-2's command
	// is redacted on the way out.
	if r.Children[0].ChildID != "build-2" || !r.Children[len(r.Children)-1].Ended() {
		t.Fatalf("order: %s first", r.Children[0].ChildID)
	}
	b, _ := json.Marshal(r)
	if bytes.Contains(b, []byte("sk-test")) {
		t.Fatal("a secret reached the report")
	}
}

// FuzzApply feeds foreign streams through the projection: it never panics,
// counts every valid event once, never changes a terminal state, and a
// replay of the same stream changes no state.
func FuzzApply(f *testing.F) {
	for _, glob := range []string{"../../testdata/projection/*.jsonl", "../../testdata/streams/*"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil && len(b) < 1<<16 {
				f.Add(b)
			}
		}
	}
	snap := event.Snapshot{Source: "fuzz", SourceEpoch: "f1", SnapshotID: "s", ObservedAt: "2026-11-30T09:00:00Z", Complete: true, Coverage: event.Coverage{All: true}}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := New()
		var valid int64
		for pass := range 2 {
			d := event.NewDecoder(bytes.NewReader(in), event.DecoderOptions{Mixed: true})
			for {
				rec, err := d.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				valid++
				before := p.children[rec.Event.ChildID]
				wasTerminal := before != nil && before.state.Terminal()
				out := p.Apply(&rec.Event, rec.Line.Bytes)
				if wasTerminal && out.Changed {
					t.Fatalf("a terminal state changed: %+v", out)
				}
				if pass == 1 && out.Changed && !manyUnsequenced(p) {
					t.Fatalf("a replay changed state: %+v", out)
				}
			}
		}
		if p.Counts().Total() != valid {
			t.Fatalf("%d results for %d valid events", p.Counts().Total(), valid)
		}
		r := p.Report(t0, true)
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if _, err := p.PlanSnapshot(snap, 1); err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Children {
			if strings.Contains(v.Display, "running") && v.State == nil {
				t.Fatalf("display %q without a state", v.Display)
			}
		}
	})
}

// manyUnsequenced reports whether some child has more events without a
// sequence than are remembered: those can no longer be recognised.
func manyUnsequenced(p *Projection) bool {
	for _, c := range p.children {
		if c.unseq != nil && len(c.unseq.ids) == maxUnsequenced {
			return true
		}
	}
	return false
}

// The snapshot fixtures against the mixed-conditions stream: the complete
// one corrects and counts, the incomplete one is refused, the one without
// a sourceEpoch does not even parse.
func TestSnapshotFixtures(t *testing.T) {
	f, err := os.Open("../../testdata/projection/mixed-conditions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := New()
	if _, _, err := ReadStream(f, p, event.DecoderOptions{}); err != nil {
		t.Fatal(err)
	}
	load := func(name string) (event.Snapshot, error) {
		b, err := os.ReadFile("../../testdata/projection/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return event.ParseSnapshot(b)
	}
	s, err := load("snapshot-complete.json")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanSnapshot(s, DefaultGrace)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Corrections) != 1 || plan.Corrections[0].ChildID != "build-2" || plan.Corrections[0].After != waiting {
		t.Fatalf("corrections %+v", plan.Corrections)
	}
	if len(plan.Refusals) != 1 || plan.Refusals[0].ChildID != "build-1" {
		t.Fatalf("refusals %+v", plan.Refusals)
	}
	var omitted []string
	for _, o := range plan.Omissions {
		omitted = append(omitted, o.ChildID)
	}
	if strings.Join(omitted, " ") != "adopt-4 agent-3 note-6" {
		t.Fatalf("omissions %v", omitted)
	}
	if s, err = load("snapshot-incomplete.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.PlanSnapshot(s, DefaultGrace); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("incomplete: %v", err)
	}
	var fe *event.FieldError
	if _, err := load("snapshot-no-epoch.json"); !errors.As(err, &fe) || fe.Field != "sourceEpoch" {
		t.Fatalf("no sourceEpoch: %v", err)
	}
}
