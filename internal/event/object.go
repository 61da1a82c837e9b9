package event

import (
	"encoding/json"
	"strconv"

	"github.com/lcwrap/lcwrap/internal/redact"
)

// Details is one typed shape of an event's details (docs/events.md). Every
// writer in lcwrap hands the emitter a Details; every reader decodes the
// same types with encoding/json (their json tags name the same keys).
//
// Adding a shape: declare a struct in a file of its own (agent sources keep
// theirs in details_<source>.go, say), give its fields json tags, and write
// AppendDetails: one Object call per member, in the order the wire shows
// them (sorted keys, as encoding/json writes a map), omitting what the
// shape omits. Add an example value to detailsExamples in
// details_test.go: the differential test then holds the encoding to
// encoding/json's and the decoding to a round trip.
type Details interface {
	AppendDetails(o *Object)
}

// Object writes the members of one JSON object, without reflection.
// Every string value written with String, OptString or Strings passes
// through redact.Text (details are redacted before anything sees them);
// identities and numbers are written as they are.
type Object struct {
	b      []byte
	n      int
	failed error
}

// AppendDetails appends d as one JSON object. Outcomes: the longer slice
// and nil; or an error when d cannot be encoded (only FreeDetails can
// fail), and b unchanged.
func AppendDetails(b []byte, d Details) ([]byte, error) {
	o := Object{b: append(b, '{')}
	d.AppendDetails(&o)
	if o.failed != nil {
		return b, o.failed
	}
	return append(o.b, '}'), nil
}

// MarshalDetails encodes d as AppendDetails does, for Event.Details.
func MarshalDetails(d Details) (json.RawMessage, error) {
	return AppendDetails(make([]byte, 0, 256), d)
}

func (o *Object) fail(err error) {
	if o.failed == nil {
		o.failed = err
	}
}

func (o *Object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *Object) str(s string) { o.b = AppendString(o.b, redact.Text(s)) }

// String writes k: v.
func (o *Object) String(k, v string) {
	o.key(k)
	o.str(v)
}

// OptString writes k: v unless v is empty.
func (o *Object) OptString(k, v string) {
	if v != "" {
		o.String(k, v)
	}
}

// Int writes k: v.
func (o *Object) Int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// OptInt writes k: v unless v is 0.
func (o *Object) OptInt(k string, v int64) {
	if v != 0 {
		o.Int(k, v)
	}
}

// Bool writes k: v.
func (o *Object) Bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

// Null writes k: null.
func (o *Object) Null(k string) {
	o.key(k)
	o.b = append(o.b, "null"...)
}

// Strings writes k: [v...] (null for a nil slice).
func (o *Object) Strings(k string, v []string) { array(o, k, v, o.str) }

// Ints writes k: [v...] (null for a nil slice).
func (o *Object) Ints(k string, v []int) {
	array(o, k, v, func(n int) { o.b = strconv.AppendInt(o.b, int64(n), 10) })
}

// array writes k: [each(v[0]),...] (null for a nil slice).
func array[T any](o *Object, k string, v []T, each func(T)) {
	o.key(k)
	if v == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i, e := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		each(e)
	}
	o.b = append(o.b, ']')
}

// Object writes k: d as a nested object.
func (o *Object) Object(k string, d Details) {
	o.key(k)
	sub := Object{b: append(o.b, '{')}
	d.AppendDetails(&sub)
	o.b = append(sub.b, '}')
	if sub.failed != nil {
		o.fail(sub.failed)
	}
}

// Identity writes k: id as Identity's MarshalJSON does (not passed
// redacted: an identity is not free text).
func (o *Object) Identity(k string, id Identity) {
	o.key(k)
	o.b = appendIdentity(o.b, id)
}

// Raw writes k: raw, compacted (raw must be valid JSON; invalid JSON is
// written as a string, as Event.AppendJSON does).
func (o *Object) Raw(k string, raw json.RawMessage) {
	o.key(k)
	o.b = appendCompact(o.b, raw)
}

func appendIdentity(b []byte, id Identity) []byte {
	raw, _ := id.MarshalJSON() // never fails
	return append(b, raw...)
}

// DecodeDetails decodes an event's details into a T. It reports false for
// no details and for details that do not decode as a T.
func DecodeDetails[T any](raw json.RawMessage) (T, bool) {
	var v T
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return v, false
	}
	return v, true
}
