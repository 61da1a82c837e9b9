// Package eventtest holds the differential checks of details shapes for
// the packages that keep their own (internal/agent, internal/agent/codex,
// internal/supervise, internal/adopt): a shape's encoding, as emit writes
// it (emit.EncodeDetails: redacted), against encoding/json's. It is for
// tests only and promises nothing else.
package eventtest

import (
	"bytes"
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

// MatchEncodingJSON fails t unless d, as emit writes it, is the JSON
// encoding/json makes of the same value, redacted as a decoded value
// (redact.Value). The members of an event.Created's or event.Terminal's
// Extra are encoded by encoding/json too, each under its key.
func MatchEncodingJSON(t testing.TB, d event.Details) {
	t.Helper()
	got, err := emit.EncodeDetails(d)
	if err != nil {
		t.Fatalf("%T: %v", d, err)
	}
	m := decoded(t, d)
	var extra event.Members
	switch c := d.(type) {
	case event.Created:
		extra = c.Extra
	case event.Terminal:
		extra = c.Extra
	}
	for _, e := range extra {
		m.(map[string]any)[e.Key] = decoded(t, e.Value)
	}
	want, err := event.AppendValue(nil, redact.Value(m))
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	if json.Unmarshal(got, &x) != nil || json.Unmarshal(want, &y) != nil || !reflect.DeepEqual(x, y) {
		t.Fatalf("%T:\n got %s\nwant %s", d, got, want)
	}
}

// decoded is v encoded by encoding/json and decoded into any (numbers
// kept as written).
func decoded(t testing.TB, v any) any {
	t.Helper()
	ref, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(ref))
	dec.UseNumber()
	var m any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
