package agent

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// OTLPLogsPath is where a run's hook server takes an agent's OTLP logs.
const OTLPLogsPath = "/v1/logs"

// OTLPLogs is the part of an OTLP/HTTP JSON ExportLogsServiceRequest an
// agent's telemetry reader reads, decoded with encoding/json into these
// small structs: the protobuf JSON packages cost every run start-up
// (docs/design.md), this costs nothing until a payload comes.
type OTLPLogs struct {
	ResourceLogs []struct {
		ScopeLogs []struct {
			LogRecords []OTLPRecord `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

// OTLPRecord is one log record: its body (when a string), trace id and
// attributes, decoded only when asked (Attrs).
type OTLPRecord struct {
	Body struct {
		StringValue string `json:"stringValue"`
	} `json:"body"`
	TraceID    string          `json:"traceId"`
	Attributes json.RawMessage `json:"attributes"`
}

// OTLPAttr is one key/value attribute.
type OTLPAttr struct {
	Key   string    `json:"key"`
	Value OTLPValue `json:"value"`
}

// OTLPValue is an AnyValue of the scalar kinds; an int64 may come as a
// JSON number or, as protobuf's JSON mapping writes it, a string.
type OTLPValue struct {
	StringValue *string         `json:"stringValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue *float64        `json:"doubleValue"`
	BoolValue   *bool           `json:"boolValue"`
}

// DecodeOTLPLogs reads one OTLP/HTTP JSON logs payload of at most max
// bytes into its records; ok is false for one that is not (over max, not
// UTF-8, not such JSON). It never fails otherwise.
func DecodeOTLPLogs(body []byte, max int) (recs []*OTLPRecord, ok bool) {
	if len(body) > max || !utf8.Valid(body) {
		return nil, false
	}
	var p OTLPLogs
	if json.Unmarshal(body, &p) != nil {
		return nil, false
	}
	for _, rl := range p.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for i := range sl.LogRecords {
				recs = append(recs, &sl.LogRecords[i])
			}
		}
	}
	return recs, true
}

// Attrs decodes the record's attributes; ok is false when they are not an
// array of key/value pairs of the scalar kinds.
func (r *OTLPRecord) Attrs() ([]OTLPAttr, bool) {
	var attrs []OTLPAttr
	if len(r.Attributes) == 0 {
		return nil, true
	}
	if json.Unmarshal(r.Attributes, &attrs) != nil {
		return nil, false
	}
	return attrs, true
}

// Str is the value when a string, else "".
func (v OTLPValue) Str() string {
	if v.StringValue != nil {
		return *v.StringValue
	}
	return ""
}

// Int reads a count: an intValue (number or string), a doubleValue that is
// whole, or a stringValue of digits; negative or unreadable is 0.
func (v OTLPValue) Int() int64 {
	s := string(bytes.Trim(v.IntValue, `"`))
	switch {
	case s != "":
	case v.DoubleValue != nil:
		if f := *v.DoubleValue; f >= 0 && f < 1<<62 && f == float64(int64(f)) {
			return int64(f)
		}
		return 0
	case v.StringValue != nil:
		s = *v.StringValue
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Float reads an amount: a doubleValue, an intValue or a stringValue of a
// number, in [0, 1e12); anything else is 0.
func (v OTLPValue) Float() float64 {
	switch {
	case v.DoubleValue != nil:
		if f := *v.DoubleValue; f >= 0 && f < 1e12 {
			return f
		}
		return 0
	case len(v.IntValue) > 0:
		return float64(v.Int())
	case v.StringValue != nil:
		if f, err := strconv.ParseFloat(*v.StringValue, 64); err == nil && f >= 0 && f < 1e12 {
			return f
		}
	}
	return 0
}
