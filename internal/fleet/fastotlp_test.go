package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// collectorLines are the lines of the output recorded from the real
// Collector (testdata/collector).
func collectorLines(t testing.TB) [][]byte {
	paths, _ := filepath.Glob("testdata/collector/*/*")
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	if len(out) == 0 {
		t.Fatal("no recorded collector output in testdata/collector")
	}
	return out
}

func sameRecords(t *testing.T, in []byte, fast, slow []rawRecord) {
	t.Helper()
	if len(fast) != len(slow) {
		t.Fatalf("%q: fast %d records, slow %d", in, len(fast), len(slow))
	}
	for i := range fast {
		f, s := fast[i], slow[i]
		if f.host != s.host || f.hostID != s.hostID || f.observedNs != s.observedNs || f.receivedNs != s.receivedNs ||
			f.bodyString != s.bodyString || !bytes.Equal(f.body, s.body) {
			t.Fatalf("%q: record %d: fast %+v, slow %+v", in, i, f, s)
		}
	}
}

// TestFastDecodeTakesRecordedOutput: the fast decoder reads every line
// the real Collector wrote (it is not always leaving them to the slow
// one), and reads them as encoding/json does.
func TestFastDecodeTakesRecordedOutput(t *testing.T) {
	fastOK := 0
	for _, l := range collectorLines(t) {
		slow, err := decodeSlow(bytes.TrimSpace(l))
		fast, ok := decodeFast(bytes.TrimSpace(l))
		if err != nil {
			if ok {
				t.Fatalf("%q: fast read what encoding/json refuses (%v)", l, err)
			}
			continue // a torn line of the recording
		}
		if !ok {
			t.Errorf("the fast decoder left a recorded line to the slow one: %.300q", l)
			continue
		}
		fastOK++
		sameRecords(t, l, fast, slow)
	}
	if fastOK == 0 {
		t.Fatal("no line read by the fast decoder")
	}
}

// FuzzFastDecode: whenever the fast decoder answers, encoding/json gives
// the same records; it never answers what encoding/json refuses.
func FuzzFastDecode(f *testing.F) {
	for _, l := range collectorLines(f) {
		f.Add(l)
	}
	for _, s := range []string{
		`{"resourceLogs":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"a"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x\u00e9\ud83d\ude00\n"},"observedTimeUnixNano":"12","attributes":[{"key":"lcwrap.gateway.received_time_unix_nano","value":{"intValue":13}}]}]}]}]}`,
		`{"resourceLogs":[{"ResourceX":1,"resource":null}]}`,
		`{"resourcelogs":[]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[null]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"\ud800"}}]}]}]}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"observedTimeUnixNano":1.5}]}]}]} `,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"a","stringValue":"b"}}]}]}]}`,
		`{"resourceLogs":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"a"}},{"key":"host.name","value":{"intValue":"7"}}]}}]}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeFast(b)
		if !ok {
			return
		}
		slow, err := decodeSlow(b)
		if err != nil {
			t.Fatalf("%q: fast read what encoding/json refuses: %v", b, err)
		}
		sameRecords(t, b, fast, slow)
	})
}

// BenchmarkDecode compares the two decoders on the recorded output.
func BenchmarkDecode(b *testing.B) {
	lines := collectorLines(b)
	var ok [][]byte
	for _, l := range lines {
		if _, err := decodeSlow(l); err == nil {
			ok = append(ok, l)
		}
	}
	for _, c := range []struct {
		name string
		fn   func([]byte)
	}{{"fast", func(l []byte) { decodeFast(l) }}, {"slow", func(l []byte) { decodeSlow(l) }}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, l := range ok {
					c.fn(l)
				}
			}
		})
	}
}

// FuzzFastDecodeReused: a decoder that read other requests before (its
// arena and host names in use) reads a request as encoding/json does.
func FuzzFastDecodeReused(f *testing.F) {
	lines := collectorLines(f)
	for _, l := range lines {
		f.Add(l, uint8(0))
	}
	f.Add([]byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"h\u00e9"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"{\"a\":\"\\u00e9\"}"}},{"body":{"stringValue":"plain"}}]}]}]}`), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, k uint8) {
		var d fastDecoder
		d.decode(lines[int(k)%len(lines)])
		d.decode(b)
		fast, ok := d.decode(b)
		if !ok {
			return
		}
		slow, err := decodeSlow(b)
		if err != nil {
			t.Fatalf("%q: fast read what encoding/json refuses: %v", b, err)
		}
		sameRecords(t, b, fast, slow)
	})
}

// FuzzText: a JSON string read by the fast decoder's one pass reads as
// encoding/json reads it, and it is refused only where encoding/json
// would replace something (invalid UTF-8, a lone surrogate) or refuse it.
func FuzzText(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b`, `\u00e9\ud83d\ude00\n\t\/\\`, `\ud800`, `\udc00x`, `\ud800\u0041`, "\xff", "é", `\x`, "\x01", `\u12`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		q := append(append([]byte{'"'}, in...), '"')
		s := scanner{b: q, arena: []byte("junk")[:1]}
		got, ok := s.text()
		if ok {
			var want string
			if err := json.Unmarshal(q[:s.i], &want); err != nil {
				t.Fatalf("%q: read %q, what encoding/json refuses (%v)", q[:s.i], got, err)
			}
			if string(got) != want {
				t.Fatalf("%q: read %q, encoding/json %q", q[:s.i], got, want)
			}
		}
		var want string
		if err := json.Unmarshal(q, &want); err == nil && !strings.ContainsRune(want, utf8.RuneError) && (!ok || s.i != len(q)) {
			t.Fatalf("%q: refused what encoding/json reads as %q", q, want)
		}
		ss := scanner{b: q}
		raw, _, sok := ss.str()
		if sok != (ss.i > 0 && json.Valid(q[:ss.i])) {
			t.Fatalf("%q: str says %v to byte %d", q, sok, ss.i)
		}
		if sok && ok && (ss.i != s.i || !bytes.Equal(raw, q[1:ss.i-1])) {
			t.Fatalf("%q: str read %q to byte %d, text to %d", q, raw, ss.i, s.i)
		}
	})
}
