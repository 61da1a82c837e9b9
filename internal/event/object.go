package event

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
)

// Details is one typed shape of an event's details (docs/events.md). Every
// writer in lcwrap hands the emitter a Details; every reader decodes the
// same types with encoding/json (their json tags name the same keys).
//
// Adding a shape: declare a struct next to the code that writes it (an
// integration keeps its own shapes: internal/agent, internal/agent/codex,
// internal/supervise), give its fields json tags, and write AppendDetails:
// one Object call per member, in the order the wire shows them (sorted
// keys, as encoding/json writes a map), omitting what the shape omits.
// Hold it to encoding/json with a differential test, as details_test.go
// does for the core's shapes. The core keeps only the shapes its readers
// decode (the projection, the views, reconciliation).
type Details interface {
	AppendDetails(o *Object)
}

// Object writes the members of one JSON object, without reflection.
// It never redacts: the caller of AppendDetails may give a text filter,
// which every string value written with String, OptString or Strings
// passes through (emit gives redact.Text); keys, identities and numbers
// are written as they are.
type Object struct {
	b      []byte
	n      int
	failed error
	text   func(string) string // nil: strings as they are
	extra  Members             // members still to merge in key order (Created, Terminal)
}

// AppendDetails appends d as one JSON object, every string value passed
// through text first when text is not nil. Outcomes: the longer slice and
// nil; or an error when d cannot be encoded (a FreeDetails value or a
// float encoding/json refuses), and b unchanged.
func AppendDetails(b []byte, d Details, text func(string) string) ([]byte, error) {
	o := Object{b: append(b, '{'), text: text}
	d.AppendDetails(&o)
	if o.failed != nil {
		return b, o.failed
	}
	return append(o.b, '}'), nil
}

// MarshalDetails encodes d as it is (no text filter), for Event.Details.
func MarshalDetails(d Details) (json.RawMessage, error) {
	return AppendDetails(make([]byte, 0, 256), d, nil)
}

func (o *Object) fail(err error) {
	if o.failed == nil {
		o.failed = err
	}
}

// key starts member k, after the merged members (Members) whose keys
// sort before it. Keys are escaped like any JSON string (a shape with
// open-ended names, such as a map of counts, writes them as keys).
func (o *Object) key(k string) {
	for len(o.extra) > 0 && o.extra[0].Key < k {
		m := o.extra[0]
		o.extra = o.extra[1:]
		o.Object(m.Key, m.Value)
	}
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *Object) str(s string) {
	if o.text != nil {
		s = o.text(s)
	}
	o.b = AppendString(o.b, s)
}

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

// Float writes k: v as encoding/json writes a float64 (NaN and the
// infinities, which JSON cannot hold, fail the encoding).
func (o *Object) Float(k string, v float64) {
	b, err := AppendValue(nil, v)
	if err != nil {
		o.fail(err)
		return
	}
	o.key(k)
	o.b = append(o.b, b...)
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
	o.object(d)
}

// object writes d as a nested object (the same text filter applies).
func (o *Object) object(d Details) {
	sub := Object{b: append(o.b, '{'), text: o.text}
	d.AppendDetails(&sub)
	o.b = append(sub.b, '}')
	if sub.failed != nil {
		o.fail(sub.failed)
	}
}

// Objects writes k: [v...] (null for a nil slice), each a nested object.
func Objects[T Details](o *Object, k string, v []T) {
	array(o, k, v, func(d T) { o.object(d) })
}

// Member is one member an integration adds to a core shape (Created,
// Terminal: their Extra): its key and its value, written as a nested
// object. The key is never one of the shape's own.
type Member struct {
	Key   string
	Value Details
}

// Members are the members integrations add to a core shape, kept sorted
// by key and written among the shape's own in key order: the bytes are
// those of one struct holding them all, as encoding/json writes it.
// Readers decode them with the integration's own type (the core's shapes
// do not decode them: `json:"-"`).
type Members []Member

// Set sets key: v, replacing a member of the same key; a nil v removes
// it.
func (m *Members) Set(key string, v Details) {
	i := sort.Search(len(*m), func(i int) bool { return (*m)[i].Key >= key })
	found := i < len(*m) && (*m)[i].Key == key
	switch {
	case v == nil && found:
		*m = slices.Delete(*m, i, i+1)
	case v == nil:
	case found:
		(*m)[i].Value = v
	default:
		*m = slices.Insert(*m, i, Member{Key: key, Value: v})
	}
}

// SetPtr sets key: *v, or removes key when v is nil (a pointer to a
// shape, as writers hold optional members).
func SetPtr[T Details](m *Members, key string, v *T) {
	if v == nil {
		m.Set(key, nil)
		return
	}
	m.Set(key, *v)
}

// Get returns the member key as a T, and whether there is one of that
// type (in memory, before encoding; readers of a line decode instead).
func Get[T Details](m Members, key string) (T, bool) {
	for _, mb := range m {
		if mb.Key == key {
			v, ok := mb.Value.(T)
			return v, ok
		}
	}
	var zero T
	return zero, false
}

// merge makes the shape being written interleave m with its own members
// (key writes them as their turn comes; endMerge writes the rest).
func (o *Object) merge(m Members) { o.extra = m }

// endMerge writes the merged members that sort after every key written.
func (o *Object) endMerge() {
	for len(o.extra) > 0 {
		m := o.extra[0]
		o.extra = o.extra[1:]
		o.Object(m.Key, m.Value)
	}
}

// Identity writes k: id as Identity's MarshalJSON does (not passed
// through the text filter: an identity is not free text).
func (o *Object) Identity(k string, id Identity) {
	o.key(k)
	o.b = appendIdentity(o.b, id)
}

// Raw writes k: raw, compacted (raw must be valid JSON; invalid JSON is
// written as a string).
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
