package doccapture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = "# Doc\n\nText.\n\n<!-- capture: one -->\n\n    $ lcwrap status\n    CHILD  STATE\n\n<!-- capture: two -->\n```console\n$ lcwrap -- true\n```\nend\n"

func TestBlocks(t *testing.T) {
	_, err := blocks(strings.Split(sample, "\n"))
	if err == nil || !strings.Contains(err.Error(), "capture one: the line after its marker starts no code block") {
		t.Fatalf("a marker followed by a blank line: %v", err)
	}
	fixed := strings.Replace(sample, "-->\n\n    $", "-->\n    $", 1)
	bs, err := blocks(strings.Split(fixed, "\n"))
	if err != nil || len(bs) != 2 {
		t.Fatalf("%v %v", bs, err)
	}
	if bs[0].text != "$ lcwrap status\nCHILD  STATE" || bs[0].fenced || bs[1].text != "$ lcwrap -- true" || !bs[1].fenced {
		t.Fatalf("%+v", bs)
	}
}

func TestNormalize(t *testing.T) {
	a := "build-9  ● running  ?1   —         stale 3s   10:54:49  1s        —     lcwrap  sleep 60  \n" +
		`{"eventId":"mx3g45b4-9k52nj6h/web/1","observedAt":"2026-11-30T15:51:33.089Z","bootId":"b2d3d96c-18e9-43c7-815d-c7f30cda70bb","host":"vm","pid":9008} /tmp/lcwrap-adopt-example.DzsGwn/journal.jsonl`
	b := "build-9  ● running  ?1  —  stale <1s  09:01:02  15ms  —  lcwrap  sleep 60\n" +
		`{"eventId":"aaaaaaaa-bbbbbbbb/web/1","observedAt":"2027-01-01T00:00:00.000Z","bootId":"00000000-1111-2222-3333-444444444444","host":"ci-runner-7","pid":1} /tmp/lcwrap-adopt-example.Q/journal.jsonl`
	if Normalize(a) != Normalize(b) {
		t.Fatalf("\n%s\n%s", Normalize(a), Normalize(b))
	}
	// A duration in two units (a loaded machine's 1m54s) is one duration;
	// a sub-agent's id suffix is masked like its session's.
	if x, y := Normalize("gm-739157ff-bswv9x7h.dc555bea 1m54s"), Normalize("gm-4caf4c79-3rvz5snj.9e3b1fd9 12s"); x != y {
		t.Errorf("%q != %q", x, y)
	}
	// opencode's session ids with a run tag.
	if x, y := "oc-ses_dcc8-7r3kdgby.ses_dcc8  1m12s ago", "oc-ses_dcc7-ab72wgjv.ses_dcc7  54s ago"; Normalize(x) != Normalize(y) {
		t.Errorf("\n%s\n%s", Normalize(x), Normalize(y))
	}
	// A duration of two units is one duration.
	for _, d := range []string{"1m07s", "2h05m", "3d04h", "850ms"} {
		if x, y := Normalize("duration 42s ago"), Normalize("duration "+d+" ago"); x != y {
			t.Errorf("%q and %q differ", x, y)
		}
	}
	// Words and layout still count: a missing column, another state.
	for _, c := range []string{
		strings.Replace(b, "?1  ", "", 1),
		strings.Replace(b, "running", "waiting", 1),
		strings.Replace(b, "sleep 60", "sleep", 1),
	} {
		if Normalize(a) == Normalize(c) {
			t.Errorf("%q compares equal to %q", c, a)
		}
	}
}

func TestCheckAndUpdate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "doc.md")
	fixed := strings.Replace(sample, "-->\n\n    $", "-->\n    $", 1)
	os.WriteFile(file, []byte(fixed), 0o644)
	ft := &fakeT{TB: t}
	Check(ft, file, "one", "$ lcwrap status\nCHILD    STATE\n")
	if ft.failed {
		t.Fatal("padding counted")
	}
	Check(ft, file, "one", "$ lcwrap status\nCHILD STATE UNK\n")
	if !ft.failed {
		t.Fatal("a new column not noticed")
	}
	*update = true
	defer func() { *update = false }()
	Check(t, file, "one", "$ lcwrap status\nCHILD STATE UNK\n\nmore")
	Check(t, file, "two", "$ lcwrap -- false")
	b, _ := os.ReadFile(file)
	want := strings.Replace(strings.Replace(fixed, "    CHILD  STATE\n", "    CHILD STATE UNK\n\n    more\n", 1), "-- true", "-- false", 1)
	if string(b) != want {
		t.Fatalf("updated:\n%s\nwant:\n%s", b, want)
	}
	bs, err := blocks(strings.Split(string(b), "\n"))
	if err != nil || bs[0].text != "$ lcwrap status\nCHILD STATE UNK\n\nmore" {
		t.Fatalf("read back: %+v %v", bs, err)
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
