package event

import (
	"github.com/lcwrap/lcwrap/internal/testtool"

	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The oracle: what encoding/json makes of a line, decoded into pointer
// fields. The fast decoder must agree with it on every outcome.
type oracleWire struct {
	SchemaVersion   *int64          `json:"schemaVersion"`
	EventID         *string         `json:"eventId"`
	Source          *string         `json:"source"`
	SourceEpoch     *string         `json:"sourceEpoch"`
	ChildID         *string         `json:"childId"`
	Lineage         *oracleLineage  `json:"lineage"`
	Kind            *string         `json:"kind"`
	State           *string         `json:"state"`
	ObservedAt      *string         `json:"observedAt"`
	Sequence        *int64          `json:"sequence"`
	Activity        *string         `json:"activity"`
	Details         json.RawMessage `json:"details"`
	Capabilities    *oracleCaps     `json:"capabilities"`
	JournalSequence *int64          `json:"journalSequence"`
}

type oracleLineage struct {
	RootChildID   *string `json:"rootChildId"`
	Attempt       *int64  `json:"attempt"`
	External      *bool   `json:"external"`
	ParentChildID *string `json:"parentChildId"`
	AdoptedAt     *string `json:"adoptedAt"`
}

type oracleCaps struct {
	History       *string `json:"history"`
	Heartbeat     *string `json:"heartbeat"`
	Snapshot      *string `json:"snapshot"`
	Cancel        *string `json:"cancel"`
	TerminalCause *string `json:"terminalCause"`
}

// oracleDecode returns the flat form encoding/json produces, or its error
// mapped to the package's error types.
func oracleDecode(b []byte) (flat, error) {
	var w oracleWire
	var f flat
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return f, &FieldError{Field: te.Field, Rule: typeRule(te.Field)}
		}
		return f, &SyntaxError{Reason: err.Error()}
	}
	setS := func(dst *string, p *string, has *uint32, bit uint32) {
		if p != nil {
			*dst, *has = *p, *has|bit
		}
	}
	setI := func(dst *int64, p *int64, has *uint32, bit uint32) {
		if p != nil {
			*dst, *has = *p, *has|bit
		}
	}
	setI(&f.schemaVersion, w.SchemaVersion, &f.has, hasSchemaVersion)
	setS(&f.eventID, w.EventID, &f.has, hasEventID)
	setS(&f.source, w.Source, &f.has, hasSource)
	setS(&f.sourceEpoch, w.SourceEpoch, &f.has, hasSourceEpoch)
	setS(&f.childID, w.ChildID, &f.has, hasChildID)
	setS(&f.kind, w.Kind, &f.has, hasKind)
	setS(&f.state, w.State, &f.has, hasState)
	setS(&f.observedAt, w.ObservedAt, &f.has, hasObservedAt)
	setI(&f.sequence, w.Sequence, &f.has, hasSequence)
	setS(&f.activity, w.Activity, &f.has, hasActivity)
	setI(&f.journalSequence, w.JournalSequence, &f.has, hasJournalSequence)
	if w.Details != nil {
		f.details, f.has = []byte(w.Details), f.has|hasDetails
	}
	if l := w.Lineage; l != nil {
		f.has |= hasLineage
		s8 := func(dst *string, p *string, bit uint8) {
			if p != nil {
				*dst, f.lineage.has = *p, f.lineage.has|bit
			}
		}
		s8(&f.lineage.rootChildID, l.RootChildID, hasRoot)
		s8(&f.lineage.parentChildID, l.ParentChildID, hasParent)
		s8(&f.lineage.adoptedAt, l.AdoptedAt, hasAdoptedAt)
		if l.Attempt != nil {
			f.lineage.attempt, f.lineage.has = *l.Attempt, f.lineage.has|hasAttempt
		}
		if l.External != nil {
			f.lineage.external, f.lineage.has = *l.External, f.lineage.has|hasExternal
		}
	}
	if c := w.Capabilities; c != nil {
		f.has |= hasCapabilities
		for i, p := range []*string{c.History, c.Heartbeat, c.Snapshot, c.Cancel, c.TerminalCause} {
			if p != nil {
				f.caps[i], f.capsHas = *p, f.capsHas|1<<i
			}
		}
	}
	return f, nil
}

var knownKeys = map[string][]string{
	"":             {"schemaVersion", "eventId", "source", "sourceEpoch", "childId", "lineage", "kind", "state", "observedAt", "sequence", "activity", "details", "capabilities", "journalSequence"},
	"lineage":      {"rootChildId", "attempt", "external", "parentChildId", "adoptedAt"},
	"capabilities": {"history", "heartbeat", "snapshot", "cancel", "terminalCause"},
}

// foldOnlyKeys reports whether a line uses a key that matches a schema
// field only case-insensitively: encoding/json accepts those, the decoder
// deliberately does not.
func foldOnlyKeys(b []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return false
	}
	check := func(m map[string]json.RawMessage, known []string) bool {
		for k := range m {
			for _, want := range known {
				if k != want && strings.EqualFold(k, want) {
					return true
				}
			}
		}
		return false
	}
	if check(top, knownKeys[""]) {
		return true
	}
	for _, nested := range []string{"lineage", "capabilities"} {
		var m map[string]json.RawMessage
		if raw, ok := top[nested]; ok && json.Unmarshal(raw, &m) == nil && check(m, knownKeys[nested]) {
			return true
		}
	}
	return false
}

func compareDecoders(t *testing.T, line []byte) {
	t.Helper()
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' || foldOnlyKeys(trimmed) {
		return
	}
	var got flat
	gotErr := decodeFlat(trimmed, &got)
	want, wantErr := oracleDecode(trimmed)
	var gs, ws *SyntaxError
	if errors.As(gotErr, &gs) != errors.As(wantErr, &ws) {
		t.Fatalf("syntax verdicts differ on %q:\n fast   %v\n oracle %v", line, gotErr, wantErr)
	}
	if gs != nil {
		return
	}
	var gf, wf *FieldError
	errors.As(gotErr, &gf)
	errors.As(wantErr, &wf)
	if (gf == nil) != (wf == nil) || (gf != nil && *gf != *wf) {
		t.Fatalf("type errors differ on %q:\n fast   %v\n oracle %v", line, gotErr, wantErr)
	}
	if gf != nil {
		return
	}
	if len(got.details) == 0 {
		got.details = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded values differ on %q:\n fast   %+v\n oracle %+v", line, got, want)
	}
}

func TestDecoderAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		base,
		`{}`, `{"a":1}`, `{"schemaVersion":1.0}`, `{"schemaVersion":1e0}`, `{"schemaVersion":-0}`,
		`{"sequence":99999999999999999999}`, `{"sequence":"3"}`, `{"eventId":5,"source":true}`,
		`{"lineage":"x"}`, `{"lineage":null}`, `{"lineage":{"attempt":"1"},"eventId":3}`,
		`{"lineage":{"rootChildId":"a","attempt":0,"external":false},"lineage":{"attempt":2}}`,
		`{"lineage":{"rootChildId":"a"},"lineage":null,"lineage":{"attempt":2}}`,
		`{"capabilities":{"history":null,"cancel":"known"}}`, `{"capabilities":[]}`,
		`{"eventId":"a\u0041\ud83d\ude00\ud800x\\\/\b\f\n\r\t\""}`, `{"eventId":"\udc00\ud800\u0041"}`,
		"{\"eventId\":\"bad\xff\xfeutf8\"}", `{"details":[1,2]}`, `{"details":null}`, `{"details":{"a":{"b":[true,false,null]}}}`,
		`{"x":[[[[[[]]]]]],"y":{"z":{}}}`, `{"eventId":"a","eventId":"b"}`, `{"eventId":null}`,
		`{"external":true}`, `{"lineage":{"external":"yes"}}`, `{"journalSequence":0}`,
		`{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", `{"a":"\u12"}`, `{"a":1}x`, `{"a":[1,]}`, `{"a":[1 2]}`, `{`, `{"`, `{"a"`, `{"a":`,
		`{"a":"b"`, `{"a":{"b":1}`, `{"lineage":{"attempt":1.5}}`, `{"sequence":-3}`,
		`{"schemaVersion":1,"eventId":"e","source":"s","sourceEpoch":"p","childId":"c","lineage":{"rootChildId":"c","attempt":0,"external":false},"kind":"created","state":"created","observedAt":"2026-01-01T00:00:00Z","details":7}`,
	}
	for _, c := range cases {
		compareDecoders(t, []byte(c))
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	compareDecoders(t, []byte(`{"a":`+deep+`}`))
	compareDecoders(t, []byte(`{"a":`+deep[1:len(deep)-1]+`}`))
}

func FuzzDecoderAgainstEncodingJSON(f *testing.F) {
	testtool.SeedLines(f, "../../testdata/streams/*")
	testtool.SeedLines(f, "../../testdata/reference/*")
	f.Add([]byte(base))
	f.Add([]byte(`{"lineage":{"attempt":1},"capabilities":{"history":null},"x":[{"y":"\u00e9"}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		compareDecoders(t, line)
	})
}
