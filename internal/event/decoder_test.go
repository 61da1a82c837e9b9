package event

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/redact"
	"github.com/lcwrap/lcwrap/internal/testtool"
)

func TestDecoderBroken(t *testing.T) {
	f, err := os.Open("../../testdata/streams/broken.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDecoder(f, DecoderOptions{Redact: redact.Text})
	var ids []string
	for {
		rec, err := d.Next()
		if err != nil {
			break
		}
		ids = append(ids, rec.Event.EventID)
	}
	if strings.Join(ids, ",") != "ep1/build-7/1,ep1/build-7/2,ep1/build-7/4" {
		t.Errorf("valid events around bad ones: %v", ids)
	}
	st := d.Stats()
	want := map[Class]int64{ClassMalformed: 1, ClassOversized: 1, ClassInvalidUTF8: 1, ClassSchema: 1, ClassTruncated: 1}
	for c, n := range want {
		if st.ByClass[c] != n {
			t.Errorf("class %s: %d, want %d", c, st.ByClass[c], n)
		}
	}
	if st.Valid != 3 || st.Invalid != 5 || st.Lines != 8 {
		t.Errorf("stats %+v", st)
	}
	for _, dg := range d.Diagnostics() {
		if strings.Contains(dg.Text, "sk-planted-secret") || strings.Contains(dg.Reason, "sk-planted") {
			t.Errorf("secret in diagnostic: %v", dg)
		}
		if len([]rune(dg.Text)) > MaxDiagnosticText {
			t.Errorf("diagnostic text not cut: %d", len(dg.Text))
		}
		if dg.Line == 0 {
			t.Errorf("diagnostic without line: %+v", dg)
		}
	}
}

func TestDecoderBoundsDiagnostics(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("{broken password=hunter2\n")
	}
	d := NewDecoder(strings.NewReader(b.String()), DecoderOptions{Redact: redact.Text})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if n := len(d.Diagnostics()); n != MaxDiagnostics {
		t.Errorf("kept %d diagnostics, want %d", n, MaxDiagnostics)
	}
	if d.Stats().Invalid != 1000 {
		t.Errorf("counted %d", d.Stats().Invalid)
	}
	for _, dg := range d.Diagnostics() {
		if strings.Contains(dg.Text, "hunter2") {
			t.Fatalf("secret kept: %q", dg.Text)
		}
	}
}

func TestDecoderMixed(t *testing.T) {
	f, err := os.Open("../../testdata/streams/mixed.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := NewDecoder(f, DecoderOptions{Mixed: true})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	st := d.Stats()
	if st.Valid != 8 || st.Invalid != 0 || st.Log != 6 || st.Lines != 14 {
		t.Errorf("mixed stats %+v diags %v", st, d.Diagnostics())
	}
	// A damaged event in a mixed stream is an error, not a log line.
	d = NewDecoder(strings.NewReader("log line\n{\"schemaVersion\":1,\"eventId\":\n"), DecoderOptions{Mixed: true})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	if st := d.Stats(); st.Log != 1 || st.Invalid != 1 {
		t.Errorf("damaged event in mixed stream: %+v", st)
	}
}

// FuzzDecoder: any input: no panic, every event it returns round-trips,
// and diagnostics stay bounded.
func FuzzDecoder(f *testing.F) {
	testtool.SeedLines(f, "../../testdata/streams/*")
	f.Add([]byte("a\nb\n\xff\nlast"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := NewDecoder(bytes.NewReader(in), DecoderOptions{Mixed: len(in)%2 == 0})
		for {
			rec, err := d.Next()
			if err != nil {
				break
			}
			roundTrip(t, rec.Event)
		}
		if len(d.Diagnostics()) > MaxDiagnostics {
			t.Fatal("too many diagnostics")
		}
	})
}

// TestDecoderWithoutRedactKeepsNoText: the core never redacts, so without
// a Redact option a diagnostic keeps no text of the line at all.
func TestDecoderWithoutRedactKeepsNoText(t *testing.T) {
	d := NewDecoder(strings.NewReader("{broken password=hunter2\n"), DecoderOptions{})
	for {
		if _, err := d.Next(); err != nil {
			break
		}
	}
	diags := d.Diagnostics()
	if len(diags) != 1 || diags[0].Text != "" || diags[0].Reason == "" {
		t.Fatalf("diagnostics %+v", diags)
	}
}
