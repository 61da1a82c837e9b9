package event

import (
	"github.com/lcwrap/lcwrap/internal/testtool"

	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

const base = `{"schemaVersion":1,"eventId":"e1","source":"lcwrap","sourceEpoch":"ep","childId":"c1",` +
	`"lineage":{"rootChildId":"c1","attempt":0,"external":false},"kind":"state_changed","state":"running",` +
	`"observedAt":"2026-11-30T14:00:00.000Z","sequence":3,` +
	`"capabilities":{"history":"known","heartbeat":"known","snapshot":"unknown","cancel":"known","terminalCause":"known"}}`

// mutate decodes base, applies f and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func lineage(m map[string]any) map[string]any { return m["lineage"].(map[string]any) }
func caps(m map[string]any) map[string]any    { return m["capabilities"].(map[string]any) }

// Each rule has one valid and one invalid case; the invalid one must be
// rejected naming the field (and, where given, words of the rule).
func TestValidationRules(t *testing.T) {
	type tc struct {
		name      string
		valid     func(m map[string]any)
		invalid   func(m map[string]any)
		field     string
		ruleWords string
	}
	cases := []tc{
		{"schemaVersion required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "schemaVersion") }, "schemaVersion", "required"},
		{"schemaVersion is 1", func(m map[string]any) { m["schemaVersion"] = 1 }, func(m map[string]any) { m["schemaVersion"] = 2 }, "schemaVersion", "integer 1"},
		{"schemaVersion integer", func(m map[string]any) {}, func(m map[string]any) { m["schemaVersion"] = "1" }, "schemaVersion", "integer 1"},
		{"eventId required", func(m map[string]any) { m["eventId"] = "x" }, func(m map[string]any) { delete(m, "eventId") }, "eventId", "required"},
		{"eventId non-empty", func(m map[string]any) { m["eventId"] = "x" }, func(m map[string]any) { m["eventId"] = "" }, "eventId", "non-empty"},
		{"eventId string", func(m map[string]any) {}, func(m map[string]any) { m["eventId"] = 7 }, "eventId", "string"},
		{"source required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "source") }, "source", "required"},
		{"sourceEpoch required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "sourceEpoch") }, "sourceEpoch", "required"},
		{"childId required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "childId") }, "childId", "required"},
		{"lineage required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "lineage") }, "lineage", "required"},
		{"lineage object", func(m map[string]any) {}, func(m map[string]any) { m["lineage"] = "c1" }, "lineage", "object"},
		{"rootChildId required", func(m map[string]any) {}, func(m map[string]any) { delete(lineage(m), "rootChildId") }, "lineage.rootChildId", "required"},
		{"attempt required", func(m map[string]any) { lineage(m)["attempt"] = 2 }, func(m map[string]any) { delete(lineage(m), "attempt") }, "lineage.attempt", "required"},
		{"attempt non-negative", func(m map[string]any) { lineage(m)["attempt"] = 0 }, func(m map[string]any) { lineage(m)["attempt"] = -1 }, "lineage.attempt", "non-negative"},
		{"attempt integer", func(m map[string]any) { lineage(m)["attempt"] = 1 }, func(m map[string]any) { lineage(m)["attempt"] = 1.5 }, "lineage.attempt", "integer"},
		{"external required", func(m map[string]any) { lineage(m)["external"] = true }, func(m map[string]any) { delete(lineage(m), "external") }, "lineage.external", "required"},
		{"external boolean", func(m map[string]any) {}, func(m map[string]any) { lineage(m)["external"] = "no" }, "lineage.external", "boolean"},
		{"adoptedAt timestamp", func(m map[string]any) { lineage(m)["adoptedAt"] = "2026-11-30T14:00:00Z" }, func(m map[string]any) { lineage(m)["adoptedAt"] = "yesterday" }, "lineage.adoptedAt", "UTC"},
		{"kind required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "kind") }, "kind", "required"},
		{"kind one of seven", func(m map[string]any) { m["kind"] = "diagnostic" }, func(m map[string]any) { m["kind"] = "started" }, "kind", "one of"},
		{"state one of eight", func(m map[string]any) { m["state"] = "waiting" }, func(m map[string]any) { m["state"] = "paused" }, "state", "one of"},
		{"created needs created", func(m map[string]any) { m["kind"] = "created"; m["state"] = "created" }, func(m map[string]any) { m["kind"] = "created"; m["state"] = "running" }, "state", "created"},
		{"state_changed needs state", func(m map[string]any) { m["state"] = "starting" }, func(m map[string]any) { delete(m, "state") }, "state", "required"},
		{"terminal needs terminal state", func(m map[string]any) { m["kind"] = "terminal"; m["state"] = "lost" }, func(m map[string]any) { m["kind"] = "terminal"; m["state"] = "running" }, "state", "completed"},
		{"terminal needs a state", func(m map[string]any) { m["kind"] = "terminal"; m["state"] = "failed" }, func(m map[string]any) { m["kind"] = "terminal"; delete(m, "state") }, "state", "completed"},
		{"activity has no state", func(m map[string]any) { m["kind"] = "activity"; delete(m, "state") }, func(m map[string]any) { m["kind"] = "activity" }, "state", "absent"},
		{"heartbeat has no state", func(m map[string]any) { m["kind"] = "heartbeat"; delete(m, "state") }, func(m map[string]any) { m["kind"] = "heartbeat" }, "state", "absent"},
		{"reconciliation may carry state", func(m map[string]any) { m["kind"] = "reconciliation" }, func(m map[string]any) { m["kind"] = "reconciliation"; m["state"] = "gone" }, "state", "one of"},
		{"diagnostic may carry state", func(m map[string]any) { m["kind"] = "diagnostic"; delete(m, "state") }, func(m map[string]any) { m["kind"] = "diagnostic"; m["state"] = 3 }, "state", "string"},
		{"observedAt required", func(m map[string]any) {}, func(m map[string]any) { delete(m, "observedAt") }, "observedAt", "required"},
		{"observedAt no offset", func(m map[string]any) { m["observedAt"] = "2026-11-30T14:00:00Z" }, func(m map[string]any) { m["observedAt"] = "2026-11-30T14:00:00+01:00" }, "observedAt", "UTC"},
		{"observedAt millis only", func(m map[string]any) { m["observedAt"] = "2026-11-30T14:00:00.123Z" }, func(m map[string]any) { m["observedAt"] = "2026-11-30T14:00:00.123456Z" }, "observedAt", "UTC"},
		{"observedAt real date", func(m map[string]any) { m["observedAt"] = "2024-02-29T23:59:59Z" }, func(m map[string]any) { m["observedAt"] = "2026-02-29T00:00:00Z" }, "observedAt", "UTC"},
		{"observedAt upper T", func(m map[string]any) {}, func(m map[string]any) { m["observedAt"] = "2026-11-30t14:00:00Z" }, "observedAt", "UTC"},
		{"sequence non-negative", func(m map[string]any) { m["sequence"] = 0 }, func(m map[string]any) { m["sequence"] = -3 }, "sequence", "non-negative"},
		{"sequence integer", func(m map[string]any) { delete(m, "sequence") }, func(m map[string]any) { m["sequence"] = 2.5 }, "sequence", "integer"},
		{"details object", func(m map[string]any) { m["details"] = map[string]any{"a": 1} }, func(m map[string]any) { m["details"] = []any{1} }, "details", "object"},
		{"activity string", func(m map[string]any) { m["activity"] = "x" }, func(m map[string]any) { m["activity"] = 5 }, "activity", "string"},
		{"capability values", func(m map[string]any) { caps(m)["cancel"] = "unknown" }, func(m map[string]any) { caps(m)["cancel"] = "yes" }, "capabilities.cancel", "known or unknown"},
		{"capability string", func(m map[string]any) { delete(caps(m), "cancel") }, func(m map[string]any) { caps(m)["history"] = true }, "capabilities.history", "known or unknown"},
		{"capabilities object", func(m map[string]any) { delete(m, "capabilities") }, func(m map[string]any) { m["capabilities"] = "all" }, "capabilities", "object"},
		{"journalSequence positive", func(m map[string]any) { m["journalSequence"] = 1 }, func(m map[string]any) { m["journalSequence"] = 0 }, "journalSequence", "positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := Parse(mutate(t, c.valid)); err != nil {
				t.Fatalf("valid case rejected: %v", err)
			}
			_, _, err := Parse(mutate(t, c.invalid))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("invalid case: got %v, want a FieldError on %s", err, c.field)
			}
			if fe.Field != c.field || !strings.Contains(fe.Rule, c.ruleWords) {
				t.Fatalf("got %q, want field %s with rule mentioning %q", fe, c.field, c.ruleWords)
			}
		})
	}
}

func TestParseNormalizes(t *testing.T) {
	long := strings.Repeat("é", 600)
	b := mutate(t, func(m map[string]any) {
		m["kind"] = "activity"
		delete(m, "state")
		m["activity"] = long
		m["capabilities"] = map[string]any{"history": "known"}
		m["somethingElse"] = "dropped"
		m["journalSequence"] = 12
	})
	ev, js, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if js != 12 {
		t.Errorf("journalSequence = %d, want 12", js)
	}
	if got := []rune(ev.Activity); len(got) != MaxActivity {
		t.Errorf("activity has %d runes, want %d", len(got), MaxActivity)
	}
	want := Capabilities{History: "known", Heartbeat: "unknown", Snapshot: "unknown", Cancel: "unknown", TerminalCause: "unknown"}
	if ev.Capabilities != want {
		t.Errorf("capabilities = %+v, want %+v", ev.Capabilities, want)
	}
	out, _ := ev.Marshal()
	if strings.Contains(string(out), "somethingElse") || strings.Contains(string(out), "journalSequence") {
		t.Errorf("unknown fields kept: %s", out)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{"", "   ", "null", "[]", `"x"`, "{", `{"schemaVersion":1,}`, "{}garbage"} {
		_, _, err := Parse([]byte(in))
		if err == nil {
			t.Errorf("Parse(%q) accepted", in)
			continue
		}
		if in == "{}garbage" || in == "{" || strings.HasPrefix(in, `{"s`) {
			if ClassOf(err) != ClassMalformed {
				t.Errorf("Parse(%q) class %s, want malformed (%v)", in, ClassOf(err), err)
			}
		}
	}
	if _, _, err := Parse([]byte("{}")); ClassOf(err) != ClassSchema {
		t.Errorf("{} should be a schema error, got %v", err)
	}
}

// Every valid golden event re-encodes to a line that parses to the same value.
func TestGoldenRoundTrip(t *testing.T) {
	for _, p := range []string{"../../testdata/streams/valid.jsonl", "../../testdata/reference/journal-reference-format.jsonl"} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(f, DecoderOptions{})
		n := 0
		for {
			rec, err := d.Next()
			if err != nil {
				break
			}
			n++
			roundTrip(t, rec.Event)
		}
		f.Close()
		if st := d.Stats(); st.Invalid != 0 || n == 0 {
			t.Errorf("%s: %d valid, stats %+v, diags %v", p, n, st, d.Diagnostics())
		}
	}
}

func roundTrip(t *testing.T, ev Event) {
	t.Helper()
	b, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := Parse(b)
	if err != nil {
		t.Fatalf("re-encoded event rejected: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(normalizeDetails(ev), normalizeDetails(again)) {
		t.Fatalf("round trip changed the event:\n%+v\n%+v", ev, again)
	}
}

func normalizeDetails(e Event) Event {
	if len(e.Details) > 0 {
		var v any
		_ = json.Unmarshal(e.Details, &v)
		e.Details, _ = json.Marshal(v)
	}
	return e
}

func TestSnapshot(t *testing.T) {
	b, err := os.ReadFile("../../testdata/reference/authoritative-snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Complete || !s.Coverage.All || len(s.Children) != 1 || s.Children[0].State != StateWaiting {
		t.Fatalf("unexpected snapshot %+v", s)
	}
	out, _ := json.Marshal(s)
	s2, err := ParseSnapshot(out)
	if err != nil || !reflect.DeepEqual(s, s2) {
		t.Fatalf("snapshot round trip: %v\n%+v\n%+v", err, s, s2)
	}
	bad := map[string]string{
		"no snapshotId": `{"source":"a","sourceEpoch":"e","observedAt":"2026-01-01T00:00:00Z","complete":true,"coverage":"all","children":[]}`,
		"bad coverage":  `{"source":"a","sourceEpoch":"e","snapshotId":"s","observedAt":"2026-01-01T00:00:00Z","complete":true,"coverage":"some","children":[]}`,
		"no coverage":   `{"source":"a","sourceEpoch":"e","snapshotId":"s","observedAt":"2026-01-01T00:00:00Z","complete":true,"children":[]}`,
		"bad state":     `{"source":"a","sourceEpoch":"e","snapshotId":"s","observedAt":"2026-01-01T00:00:00Z","complete":true,"coverage":["c"],"children":[{"childId":"c","state":"paused"}]}`,
		"no complete":   `{"source":"a","sourceEpoch":"e","snapshotId":"s","observedAt":"2026-01-01T00:00:00Z","coverage":"all","children":[]}`,
	}
	for name, in := range bad {
		if _, err := ParseSnapshot([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	list := `{"source":"a","sourceEpoch":"e","snapshotId":"s","observedAt":"2026-01-01T00:00:00Z","complete":true,"coverage":["c1","c2"],"children":[]}`
	s, err = ParseSnapshot([]byte(list))
	if err != nil || s.Coverage.All || !s.Coverage.Covers("c2") || s.Coverage.Covers("c3") {
		t.Fatalf("list coverage: %v %+v", err, s.Coverage)
	}
}

func FuzzParse(f *testing.F) {
	testtool.SeedLines(f, "../../testdata/streams/*")
	testtool.SeedLines(f, "../../testdata/reference/*")
	f.Add([]byte(base))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, _, err := Parse(line)
		if err != nil {
			return
		}
		roundTrip(t, ev)
	})
}

var benchLine = []byte(`{"schemaVersion":1,"eventId":"mij2k3a1-k3x9qa2m/build-00042/7","source":"lcwrap","sourceEpoch":"mij2k3a1-k3x9qa2m","childId":"build-00042","lineage":{"rootChildId":"build-00042","attempt":0,"external":false},"kind":"activity","observedAt":"2026-11-30T09:00:00.042Z","sequence":7,"activity":"ok github.com/x/y/pkg7 0.007s","capabilities":{"history":"known","heartbeat":"known","snapshot":"unknown","cancel":"known","terminalCause":"known"}}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		if _, _, err := Parse(benchLine); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	ev, _, err := Parse(benchLine)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ev.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
