package serve_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/fleet"
	pt "github.com/lcwrap/lcwrap/internal/projection/projectiontest"
	"github.com/lcwrap/lcwrap/internal/serve"
)

// gatewayLine is one OTLP-JSON line as the gateway's file exporter writes
// it: one resource of host holding the journal lines of events.
func gatewayLine(t *testing.T, host string, events ...event.Event) string {
	t.Helper()
	var lrs []map[string]any
	for _, e := range events {
		lrs = append(lrs, map[string]any{
			"body":                 map[string]any{"stringValue": string(pt.Line(t, e))},
			"observedTimeUnixNano": strconv.FormatInt(time.Now().UnixNano(), 10),
			"attributes":           []any{map[string]any{"key": fleet.AttrReceivedAt, "value": map[string]any{"intValue": strconv.FormatInt(time.Now().UnixNano(), 10)}}},
		})
	}
	b, _ := json.Marshal(map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": []any{map[string]any{"key": "host.name", "value": map[string]any{"stringValue": host}}}},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{}, "logRecords": lrs}},
	}}})
	return string(b) + "\n"
}

// --fleet serves the fleet: status --fleet --json, the fleet snapshot,
// the stream with fleet cursors (resumed with Last-Event-ID), damage said
// as such, and cancel refused.
func TestFleet(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "logs.json")
	os.WriteFile(out, []byte(gatewayLine(t, "alpha", events("a1", 1, 3)...)+gatewayLine(t, "beta", events("b1", 1, 3)...)), 0o600)
	doc, raw := loadOpenAPI(t)
	c := &conformance{doc: doc, raw: raw, seen: map[string]bool{}}
	ts := start(t, serve.Config{Fleet: out})
	code, hdr, b := do(t, "GET", ts.URL+"/v1/children", nil, "")
	c.check(t, "GET", "/v1/children", code, hdr.Get("Content-Type"), b)
	var rep struct {
		Schema   string
		Hosts    []struct{ Host string }
		Children []struct{ Host, ChildID, Display string }
	}
	if code != 200 || json.Unmarshal(b, &rep) != nil || rep.Schema != fleet.ReportSchema || len(rep.Hosts) != 2 || len(rep.Children) != 2 || hdr.Get(serve.CursorHeader) == "" {
		t.Fatalf("%d %s", code, b)
	}
	code, hdr, b = do(t, "GET", ts.URL+"/v1/snapshot", nil, "")
	c.check(t, "GET", "/v1/snapshot", code, hdr.Get("Content-Type"), b)
	if code != 200 || !strings.Contains(string(b), `"complete":false`) {
		t.Fatalf("snapshot: %d %s", code, b)
	}
	code, hdr, b = do(t, "POST", ts.URL+"/v1/children/a1/cancel", nil, "")
	c.check(t, "POST", "/v1/children/a1/cancel", code, hdr.Get("Content-Type"), b)
	if code != 403 || errorCode(t, b) != serve.CodeNoAuthority {
		t.Fatalf("cancel: %d %s", code, b)
	}
	s := openStream(t, ts.URL+"/v1/events", nil)
	var ids []string
	for len(ids) < 6 {
		m := s.next(t, 20*time.Second)
		var fl serve.FleetLine
		if m.Event != "" || json.Unmarshal([]byte(m.Data), &fl) != nil || fl.Cursor != m.ID || fl.Host == "" {
			t.Fatalf("%+v", m)
		}
		if _, err := fleet.ParseCursor(m.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	f, _ := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{torn\n" + gatewayLine(t, "alpha", events("a1", 4, 1)...))
	f.Close()
	m := s.next(t, 20*time.Second)
	var d fleet.Damage
	if m.Event != "damage" || m.ID != "" || json.Unmarshal([]byte(m.Data), &d) != nil {
		t.Fatalf("damage: %+v", m)
	}
	if m := s.next(t, 20*time.Second); m.Event != "" || m.ID == "" {
		t.Fatalf("after the damage: %+v", m)
	}
	r := openStream(t, ts.URL+"/v1/events", map[string]string{"Last-Event-ID": ids[3]})
	if got := r.ids(t, 2); got[0] != ids[4] || got[1] != ids[5] {
		t.Fatalf("resumed after %s: %v, want %v", ids[3], got, ids[4:])
	}
	if code, _, b := do(t, "GET", ts.URL+"/v1/events?after=nonsense", nil, ""); code != 400 || errorCode(t, b) != serve.CodeBadCursor {
		t.Fatalf("a bad fleet cursor: %d %s", code, b)
	}
}
