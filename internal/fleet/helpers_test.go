package fleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// t0 is the tests' gateway time zero.
var t0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

// line builds one journal line of child id: seq 1 is its created event
// (launched, heartbeat hbMs when > 0), later ones state changes or
// heartbeats, at the host-clock time at.
func line(t *testing.T, child string, seq int64, kind event.Kind, state event.State, at time.Time, hbMs int64) string {
	t.Helper()
	ev := event.Event{SchemaVersion: 1, EventID: fmt.Sprintf("ep/%s/%d", child, seq), Source: "lcwrap", SourceEpoch: "ep",
		ChildID: child, Lineage: event.Lineage{RootChildID: child, Attempt: 1}, Kind: kind, State: state,
		ObservedAt: event.Timestamp(at), Sequence: event.Int64(seq), Capabilities: event.AllUnknown()}
	if kind == event.KindCreated {
		ev.Capabilities = event.Launched(hbMs > 0).Set
		d, _ := json.Marshal(map[string]any{"command": []string{"sleep", "60"}, "heartbeatIntervalMs": hbMs, "profile": "launched"})
		ev.Details = d
	}
	b, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rec is one log record of a test request.
type rec struct {
	body     string
	observed time.Time // host clock; zero: absent
	received time.Time // gateway clock; zero: absent
	notStr   bool      // the body is an int, not a string
}

// request builds one OTLP-JSON line as the file exporter writes it: one
// resource (host, hostID; "" leaves the attribute out) holding recs.
func request(host, hostID string, recs ...rec) string {
	var attrs []map[string]any
	if host != "" {
		attrs = append(attrs, map[string]any{"key": "host.name", "value": map[string]any{"stringValue": host}})
	}
	if hostID != "" {
		attrs = append(attrs, map[string]any{"key": "host.id", "value": map[string]any{"stringValue": hostID}})
	}
	var lrs []map[string]any
	for _, r := range recs {
		lr := map[string]any{"body": map[string]any{"stringValue": r.body}}
		if r.notStr {
			lr["body"] = map[string]any{"intValue": "7"}
		}
		if !r.observed.IsZero() {
			lr["observedTimeUnixNano"] = strconv.FormatInt(r.observed.UnixNano(), 10)
		}
		var la []map[string]any
		la = append(la, map[string]any{"key": "log.file.name", "value": map[string]any{"stringValue": "journal.jsonl"}})
		if !r.received.IsZero() {
			la = append(la, map[string]any{"key": AttrReceivedAt, "value": map[string]any{"intValue": strconv.FormatInt(r.received.UnixNano(), 10)}})
		}
		lr["attributes"] = la
		lrs = append(lrs, lr)
	}
	req := map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": attrs},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{}, "logRecords": lrs}},
	}}}
	b, _ := json.Marshal(req)
	// encoding/json sorts map keys: put resourceLogs first as the
	// exporter does (it is the only top-level key).
	return string(b)
}

// write writes lines (each with its newline) to dir/name.
func write(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	s := strings.Join(lines, "\n")
	if len(lines) > 0 {
		s += "\n"
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// appendTo appends raw bytes to a file.
func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// readAll reads path once into a fleet with clock now and returns the
// items and the fleet.
func readAll(t *testing.T, path string, now time.Time, silent time.Duration) ([]*Item, *Fleet, *Reader) {
	t.Helper()
	r, err := NewReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f := New(Options{Now: func() time.Time { return now }, SilentAfter: silent})
	var items []*Item
	if err := r.Pass(func(it *Item) error {
		f.Apply(it)
		c := *it
		c.Body = append([]byte(nil), it.Body...)
		items = append(items, &c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.SetPending(r.Pending())
	return items, f, r
}

func childOf(t *testing.T, rep Report, host, id string) Child {
	t.Helper()
	for _, c := range rep.Children {
		if c.Host == host && c.ChildID == id {
			return c
		}
	}
	t.Fatalf("no child %s/%s in %+v", host, id, rep.Children)
	return Child{}
}

func hostOf(t *testing.T, rep Report, host string) HostView {
	t.Helper()
	for _, h := range rep.Hosts {
		if h.Host == host {
			return h
		}
	}
	t.Fatalf("no host %s in %+v", host, rep.Hosts)
	return HostView{}
}
