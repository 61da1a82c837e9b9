package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// The attributes the fleet reader looks for.
const (
	// AttrHostName is the resource attribute naming a record's host.
	AttrHostName = "host.name"
	// AttrHostID is the resource attribute holding the host's machine id
	// (a fact: hosts on one machine share it).
	AttrHostID = "host.id"
	// AttrReceivedAt is the log record attribute the gateway stamps with
	// its own receive time, Unix nanoseconds (an int), by the
	// lcwrap_receive_time processor of the gateway's Collector.
	AttrReceivedAt = "lcwrap.gateway.received_time_unix_nano"
)

// objectStart is how every OTLP-JSON line the file exporter writes
// begins. Inside a string value the quotes would be escaped, so it marks
// where one export request starts even in a line two writes ran together.
var objectStart = []byte(`{"resourceLogs":`)

// wireLogs is the part of an OTLP-JSON ExportLogsServiceRequest the reader
// needs; everything else is skipped.
type wireLogs struct {
	ResourceLogs []struct {
		Resource struct {
			Attributes []wireKV `json:"attributes"`
		} `json:"resource"`
		ScopeLogs []struct {
			LogRecords []wireRecord `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

type wireRecord struct {
	ObservedTimeUnixNano flexInt   `json:"observedTimeUnixNano"`
	Body                 wireValue `json:"body"`
	Attributes           []wireKV  `json:"attributes"`
}

type wireKV struct {
	Key   string    `json:"key"`
	Value wireValue `json:"value"`
}

// wireValue is an OTLP AnyValue; only strings and ints are read.
type wireValue struct {
	StringValue *string  `json:"stringValue"`
	IntValue    *flexInt `json:"intValue"`
}

// flexInt is an int64 written as a JSON string (OTLP-JSON's rule for
// 64-bit integers) or as a number.
type flexInt struct {
	v   int64
	set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("not a 64-bit integer")
	}
	f.v, f.set = n, true
	return nil
}

// rawRecord is one log record of an OTLP-JSON line, as read.
type rawRecord struct {
	host, hostID string
	observedNs   int64 // file_log's read time on the host's clock; 0 when absent
	receivedNs   int64 // the gateway's receive stamp; 0 when absent
	body         []byte
	bodyString   bool // the body is a string value
}

// segment is one export request found in a line.
type segment struct {
	at      int // byte offset within the line
	records []rawRecord
	err     error
}

// line splits a line into the export requests it holds (normally one;
// two when a gateway killed between writing a request and its newline
// appended the next request to it) and decodes each. A part that is not
// a complete OTLP-JSON object is a segment with err set. What it returns
// may be d's buffers: valid until d's next use.
func (d *fastDecoder) line(line []byte) []segment {
	if b := bytes.TrimSpace(line); len(b) > 0 && b[0] == '{' {
		if recs, ok := d.decode(b); ok {
			d.one[0] = segment{records: recs}
			return d.one[:]
		}
		if recs, err := decodeSlow(b); err == nil {
			return []segment{{records: recs}}
		}
	}
	var starts []int
	for i := 0; i < len(line); {
		j := bytes.Index(line[i:], objectStart)
		if j < 0 {
			break
		}
		starts = append(starts, i+j)
		i += j + len(objectStart)
	}
	if len(starts) == 0 || len(bytes.TrimSpace(line[:starts[0]])) > 0 {
		starts = append([]int{0}, starts...)
	}
	segs := make([]segment, 0, len(starts))
	for k, at := range starts {
		end := len(line)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		recs, err := decodeRequest(line[at:end])
		segs = append(segs, segment{at: at, records: recs, err: err})
	}
	return segs
}

// errNotOTLP is what a part of a line that is not an OTLP-JSON logs
// request is reported as.
var errNotOTLP = errors.New("not a complete OTLP-JSON logs request")

func decodeRequest(b []byte) ([]rawRecord, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errNotOTLP
	}
	if out, ok := decodeFast(b); ok {
		return out, nil
	}
	return decodeSlow(b)
}

// decodeSlow decodes a request with encoding/json: everything decodeFast
// leaves to it.
func decodeSlow(b []byte) ([]rawRecord, error) {
	var w wireLogs
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errNotOTLP
	}
	var out []rawRecord
	for _, rl := range w.ResourceLogs {
		var host, hostID string
		for _, kv := range rl.Resource.Attributes {
			switch kv.Key {
			case AttrHostName:
				if kv.Value.StringValue != nil {
					host = *kv.Value.StringValue
				}
			case AttrHostID:
				if kv.Value.StringValue != nil {
					hostID = *kv.Value.StringValue
				}
			}
		}
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				r := rawRecord{host: host, hostID: hostID, observedNs: lr.ObservedTimeUnixNano.v}
				if s := lr.Body.StringValue; s != nil {
					r.body, r.bodyString = []byte(*s), true
				}
				for _, kv := range lr.Attributes {
					if kv.Key == AttrReceivedAt && kv.Value.IntValue != nil {
						r.receivedNs = kv.Value.IntValue.v
					}
				}
				out = append(out, r)
			}
		}
	}
	return out, nil
}
