package event

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stdEncode is the oracle: encoding/json with HTML escaping off.
func stdEncode(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

type identityLike struct {
	PID  int    `json:"pid"`
	Host string `json:"host,omitempty"`
}

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	vals := []any{
		nil, "s\x00\"", true, 42, int64(-7), uint64(1 << 63), []string{"a", "b\n"}, []string(nil), []int{1, 2},
		[]any{1, "x", nil, map[string]any{"z": 1, "a": []any{}}}, map[string]any{"b": 1, "a": "x", "é": false, "": nil},
		json.RawMessage(` { "k" : 1 } `), identityLike{PID: 5}, 1.5, map[string]any{"id": identityLike{PID: 1, Host: "h"}},
	}
	for _, v := range vals {
		got, err := AppendValue(nil, v)
		if err != nil {
			t.Fatalf("AppendValue(%#v): %v", v, err)
		}
		if want := stdEncode(t, v); !bytes.Equal(got, want) {
			t.Errorf("AppendValue(%#v):\n got %s\nwant %s", v, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\x1f\"\\\u2028\u2029\xff<>&é")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), stdEncode(t, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
