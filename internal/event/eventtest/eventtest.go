// Package eventtest holds the checks of details shapes for the packages
// that keep their own (internal/agent, internal/agent/codex,
// internal/supervise, internal/adopt): a shape as emit writes it
// (emit.EncodeDetails: redacted) against the map its writer built before
// shapes had types (MatchOld), and decoded back into its own type
// (RoundTrip). It is for tests only and promises nothing else.
package eventtest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// MatchOld fails t unless d, as emit writes it, holds the members and
// values of old (the map its writer used to build before the shape had a
// type) encoded through redact.Value and event.AppendValue — the same
// JSON value, keys in any order; a nested identity was written in its
// own order then, sorted now — and unless decoding it into d's type and
// encoding that again gives the same JSON (a reader's side; not for
// FreeDetails).
func MatchOld(t testing.TB, d event.Details, old any) {
	t.Helper()
	got, err := emit.EncodeDetails(d)
	if err != nil {
		t.Fatalf("%T: %v", d, err)
	}
	want, err := event.AppendValue(nil, redact.Value(old))
	if err != nil {
		t.Fatalf("%T reference: %v", d, err)
	}
	var gv, wv any
	if err := json.Unmarshal(got, &gv); err != nil {
		t.Fatalf("%T: invalid JSON %s", d, got)
	}
	if err := json.Unmarshal(want, &wv); err != nil || !reflect.DeepEqual(gv, wv) {
		t.Fatalf("%T:\n got %s\nwant %s", d, got, want)
	}
	if _, free := d.(event.FreeDetails); free {
		return // not a shape: nothing to decode into
	}
	// The same bytes but for invalid UTF-8, which the first encoding
	// already wrote as U+FFFD.
	back := reflect.New(reflect.TypeOf(d))
	if err := json.Unmarshal(got, back.Interface()); err != nil {
		t.Fatalf("%T: decoding %s: %v", d, got, err)
	}
	again, err := emit.EncodeDetails(back.Elem().Interface().(event.Details))
	var x, y any
	if err != nil || json.Unmarshal(got, &x) != nil || json.Unmarshal(again, &y) != nil || !reflect.DeepEqual(x, y) {
		t.Fatalf("%T round trip:\n got %s\nwant %s", d, again, got)
	}
}

// RoundTrip fails t unless d, as emit writes it, is one JSON object that
// decodes into d's type (a reader's side) and encodes again to the same
// JSON value, with every member of an event.Created's or event.Terminal's
// Extra present under its key. It is what holds a shape's MarshalJSON (a
// shape that must look other than its fields) to its UnmarshalJSON and
// its json tags.
func RoundTrip(t testing.TB, d event.Details) {
	t.Helper()
	got, err := emit.EncodeDetails(d)
	if err != nil {
		t.Fatalf("%T: %v", d, err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("%T: not an object: %s", d, got)
	}
	var extra event.Members
	switch c := d.(type) {
	case event.Created:
		extra = c.Extra
	case event.Terminal:
		extra = c.Extra
	}
	for _, e := range extra {
		if _, ok := m[e.Key]; !ok {
			t.Fatalf("%T: member %q missing: %s", d, e.Key, got)
		}
	}
	back := reflect.New(reflect.TypeOf(d))
	if err := json.Unmarshal(got, back.Interface()); err != nil {
		t.Fatalf("%T: decoding %s: %v", d, got, err)
	}
	again, err := emit.EncodeDetails(back.Elem().Interface())
	var x, y any
	if len(extra) == 0 && (err != nil || json.Unmarshal(got, &x) != nil || json.Unmarshal(again, &y) != nil || !reflect.DeepEqual(x, y)) {
		t.Fatalf("%T round trip:\n got %s\nwant %s", d, again, got)
	}
}
