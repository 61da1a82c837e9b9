package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sort"
)

// Details is one typed shape of an event's details (docs/events.md): a
// struct whose json tags name its members, declared next to the code that
// writes it (an integration keeps its own shapes: internal/agent,
// internal/agent/codex, internal/supervise). Every shape is encoded by
// encoding/json, and every reader decodes the same types with it; no shape
// has an encoder of its own (a hand-written one did not earn its place:
// docs/design.md, "Decisions"). A shape that must look other than its
// fields (Exit, Correction) has a MarshalJSON. The core keeps only the
// shapes its readers decode (the projection, the views, reconciliation).
type Details = any

// EncodeDetails encodes d as one JSON object with its keys sorted (the
// wire format's order) and HTML escaping off; filter, when not nil, is
// given the decoded object first (emit gives redact.Value: values under
// sensitive keys replaced, strings redacted). Outcomes: the object and
// nil; or an error when d cannot be encoded (a float JSON cannot hold) or
// is not an object.
func EncodeDetails(d Details, filter func(any) any) (json.RawMessage, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errNotObject
	}
	if filter != nil {
		v = filter(v)
	}
	return AppendValue(make([]byte, 0, len(raw)+16), v)
}

var errNotObject = errors.New("details are not a JSON object")

// MarshalDetails encodes d as it is (no filter), for Event.Details.
func MarshalDetails(d Details) (json.RawMessage, error) { return EncodeDetails(d, nil) }

// Member is one member an integration adds to a core shape (Created,
// Terminal: their Extra): its key and its value, a shape of its own. The
// key is never one of the shape's own.
type Member struct {
	Key   string
	Value Details
}

// Members are the members integrations add to a core shape, kept sorted
// by key and encoded among the shape's own: the object is that of one
// struct holding them all. Readers decode them with the integration's own
// type (the core's shapes do not decode them: `json:"-"`).
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
func SetPtr[T any](m *Members, key string, v *T) {
	if v == nil {
		m.Set(key, nil)
		return
	}
	m.Set(key, *v)
}

// Get returns the member key as a T, and whether there is one of that
// type (in memory, before encoding; readers of a line decode instead).
func Get[T any](m Members, key string) (T, bool) {
	for _, mb := range m {
		if mb.Key == key {
			v, ok := mb.Value.(T)
			return v, ok
		}
	}
	var zero T
	return zero, false
}

// withMembers encodes own (a core shape without its MarshalJSON) and
// adds m's members to the object.
func withMembers(own any, m Members) ([]byte, error) {
	raw, err := json.Marshal(own)
	if err != nil || len(m) == 0 {
		return raw, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	for _, mb := range m {
		v, err := json.Marshal(mb.Value)
		if err != nil {
			return nil, err
		}
		obj[mb.Key] = v
	}
	return json.Marshal(obj)
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
