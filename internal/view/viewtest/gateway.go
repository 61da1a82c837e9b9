package viewtest

import (
	"encoding/json"
	"os"
	"strconv"
	"time"

	"github.com/lcwrap/lcwrap/internal/event"
)

// GatewayLine is one line of a gateway Collector's file exporter
// (docs/fleet.md): one OTLP-JSON export request whose resource has
// host.name host, holding one log record per event, its body the
// event's journal line (journalSequence seq0+1, seq0+2, …), observed at
// the event's observedAt (the host's clock) and received by the gateway
// delay later (lcwrap.gateway.received_time_unix_nano).
func GatewayLine(host string, seq0 int64, delay time.Duration, evs ...event.Event) string {
	recs := make([]any, 0, len(evs))
	for i := range evs {
		b, err := evs[i].Marshal()
		if err != nil {
			panic(err)
		}
		b = append(b[:len(b)-1], `,"journalSequence":`+strconv.FormatInt(seq0+int64(i)+1, 10)+`}`...)
		at, err := time.Parse(time.RFC3339Nano, evs[i].ObservedAt)
		if err != nil {
			panic(err)
		}
		recs = append(recs, map[string]any{
			"observedTimeUnixNano": strconv.FormatInt(at.UnixNano(), 10),
			"body":                 map[string]any{"stringValue": string(b)},
			"attributes": []any{
				map[string]any{"key": "log.file.name", "value": map[string]any{"stringValue": "journal.jsonl"}},
				map[string]any{"key": "lcwrap.gateway.received_time_unix_nano", "value": map[string]any{"intValue": strconv.FormatInt(at.Add(delay).UnixNano(), 10)}},
			},
		})
	}
	req := map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": []any{map[string]any{"key": "host.name", "value": map[string]any{"stringValue": host}}}},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{}, "logRecords": recs}},
	}}}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// AppendGateway appends lines to the gateway output file at path.
func AppendGateway(path string, lines ...string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l); err != nil {
			return err
		}
	}
	return nil
}
