package event

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// strDetails is a one-member shape for the tests of Members.
type strDetails struct {
	V string `json:"v"`
}

// TestMembersMergeInKeyOrder: the members an integration adds are written
// among the shape's own in key order, byte for byte as one map of all of
// them (keys sorted) would be.
func TestMembersMergeInKeyOrder(t *testing.T) {
	var extra Members
	for _, k := range []string{"zzz", "codexRollout", "agentReport", "hookRequestsRejected", "a\"<b"} {
		extra.Set(k, strDetails{k})
	}
	ready := true
	for _, d := range []Details{
		Terminal{Claim: ClaimExitStatusOnly, Exit: ExitCode(2), Cancel: &Cancel{At: "t", By: CancelBySignal, Signal: "SIGTERM"}, Ready: &ready, Extra: extra},
		Terminal{Claim: ClaimExitStatusOnly, Extra: extra[:1]},
		Created{Command: Command{"make"}, Profile: "launched", Extra: extra},
		Created{Command: Command{"make"}, Profile: "launched"},
	} {
		got, err := MarshalDetails(d)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		want, err := AppendValue(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("members out of key order:\n got %s\nwant %s", got, want)
		}
	}
	got, _ := MarshalDetails(Terminal{Claim: ClaimExitStatusOnly, Extra: extra})
	for _, e := range extra {
		if !bytes.Contains(got, []byte(`"v":`+string(AppendString(nil, e.Key)))) {
			t.Fatalf("member %q missing: %s", e.Key, got)
		}
	}
}

func TestMembersSet(t *testing.T) {
	var m Members
	m.Set("b", strDetails{"1"})
	m.Set("a", strDetails{"2"})
	m.Set("b", strDetails{"3"})
	SetPtr[strDetails](&m, "c", nil)
	SetPtr(&m, "d", &strDetails{"4"})
	if len(m) != 3 || m[0].Key != "a" || m[1].Key != "b" || m[1].Value.(strDetails).V != "3" || m[2].Key != "d" {
		t.Fatalf("%+v", m)
	}
	m.Set("a", nil)
	SetPtr[strDetails](&m, "d", nil)
	if len(m) != 1 || m[0].Key != "b" {
		t.Fatalf("%+v", m)
	}
}

// TestFilter: the caller's filter is given the whole decoded object, the
// Extra members among the shape's own, and what it returns is written,
// keys sorted, HTML characters as they are.
func TestFilter(t *testing.T) {
	id := Identity{PID: 4, StartTime: 5, BootID: "boot", Host: "host"}
	d := Created{Command: Command{"a", "b<"}, Profile: "p", Wrapper: &id, HeartbeatIntervalMs: 7, Extra: Members{{Key: "x", Value: strDetails{"c"}}}}
	var seen any
	got, err := EncodeDetails(d, func(v any) any {
		seen = v
		m := v.(map[string]any)
		m["profile"] = "filtered"
		return m
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"command":["a","b<"],"heartbeatIntervalMs":7,"profile":"filtered","wrapper":{"bootId":"boot","host":"host","pid":4,"startTime":5},"x":{"v":"c"}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if m, ok := seen.(map[string]any); !ok || m["x"] == nil {
		t.Fatalf("the filter saw %#v", seen)
	}
	plain, _ := MarshalDetails(d)
	if bytes.Contains(plain, []byte("filtered")) || !bytes.Contains(plain, []byte(`"b<"`)) {
		t.Fatalf("MarshalDetails: %s", plain)
	}
}

// TestEncodeDetailsRefuses: a value that is not an object, and a float
// JSON cannot hold, are errors, never a line.
func TestEncodeDetailsRefuses(t *testing.T) {
	for _, d := range []Details{"text", []int{1}, struct {
		F float64 `json:"f"`
	}{math.NaN()}} {
		if b, err := MarshalDetails(d); err == nil {
			t.Errorf("%#v: encoded as %s", d, b)
		}
	}
}
