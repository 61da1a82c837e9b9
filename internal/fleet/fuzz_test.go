package fleet

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReader feeds arbitrary bytes to the reader as a live gateway file:
// it never panics, every item is an event or damage (never both), a
// cursor reads back as itself, every byte up to the last newline is read
// and the rest is pending, and the fleet built from it reports.
func FuzzReader(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/collector/*/*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"a"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x"}}]}]}]}` + "\n"))
	f.Add([]byte(`{"resourceLogs":[]}{"resourceLogs":[{"resource":{}}]}` + "\n" + `{"resourceLogs":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "gateway.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.MaxLineBytes = 4096
		fl := New(Options{Now: func() time.Time { return t0 }})
		err = r.Pass(func(it *Item) error {
			if (it.Damage == nil) == (it.Event == nil) {
				t.Fatalf("item %+v: want exactly one of event and damage", it)
			}
			if c, err := ParseCursor(it.Cursor.String()); err != nil || c != it.Cursor {
				t.Fatalf("cursor %q: %+v %v", it.Cursor.String(), c, err)
			}
			fl.Apply(it)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pend := r.Pending()
		last := bytes.LastIndexByte(data, '\n')
		switch {
		case last == len(data)-1 && len(pend) != 0, last < len(data)-1 && len(pend) != 1:
			t.Fatalf("pending %+v for %d bytes with the last newline at %d", pend, len(data), last)
		case len(pend) == 1 && (pend[0].Offset != int64(last+1) || pend[0].Bytes != int64(len(data)-last-1)):
			t.Fatalf("pending %+v, want offset %d", pend[0], last+1)
		}
		fl.SetPending(pend)
		rep := fl.Report(true)
		if rep.Records < int64(len(rep.Damage)) {
			t.Fatalf("records %d < damage %d", rep.Records, len(rep.Damage))
		}
		var b bytes.Buffer
		if err := Table(&b, rep, TableOptions{Now: t0}); err != nil {
			t.Fatal(err)
		}
	})
}
