package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSensitiveKey(t *testing.T) {
	yes := []string{"password", "--password", "PASSWORD", "db_passwd", "--api-key", "apiKey", "X-Api-Key",
		"GITHUB_TOKEN", "authToken", "--auth", "basic-auth", "Authorization", "cookie", "Set-Cookie",
		"aws_secret_access_key", "clientSecret", "credentials", "private_key", "--pwd", "oauth", "AccessKey"}
	no := []string{"author", "--model", "-p", "path", "keyboard", "name", "heartbeatIntervalMs", "pid",
		"startTime", "host", "command", "authorName", ""}
	for _, k := range yes {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = false, want true", k)
		}
	}
	for _, k := range no {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = true, want false", k)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct{ in, secret string }{
		{"curl -H 'Authorization: Bearer abcdef123456'", "abcdef123456"},
		{"Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"},
		{"using key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA now", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAA"},
		{"token ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_0123456789abcdefghijABCDEFGHIJ"},
		{"pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"},
		{"slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"},
		{"aws AKIAIOSFODNN7EXAMPLE done", "AKIAIOSFODNN7EXAMPLE"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "eyJzdWIiOiIxMjM0In0"},
		{"password=hunter2 next", "hunter2"},
		{"DB_PASSWORD: 'hunter2'", "hunter2"},
		{`{"api_key": "s3cr3tvalue", "n": 1}`, "s3cr3tvalue"},
		{`{"token":"s3cr3tvalue`, "s3cr3tvalue"},
		{"GITHUB_TOKEN=abc123def ./run", "abc123def"},
		{"run --password hunter2 --x", "hunter2"},
		{"git clone https://bob:hunter2pw@example.com/x.git", "hunter2pw"},
		{"Cookie: session=abc; other=def", "other=def"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt", "b3BlbnNzaC1rZXkt"},
	}
	for _, c := range cases {
		got := Text(c.in)
		if strings.Contains(got, c.secret) {
			t.Errorf("Text(%q) = %q still holds %q", c.in, got, c.secret)
		}
		if !strings.Contains(got, Marker) {
			t.Errorf("Text(%q) = %q has no marker", c.in, got)
		}
		if again := Text(got); again != got {
			t.Errorf("Text not idempotent: %q -> %q", got, again)
		}
	}
	keep := []string{"compiling package foo", "author: Jane Doe", "running 12 tests", "key points: none", ""}
	for _, k := range keep {
		if got := Text(k); got != k {
			t.Errorf("Text(%q) = %q, want unchanged", k, got)
		}
	}
}

func TestArgv(t *testing.T) {
	in := []string{"claude", "-p", "fix the tests", "--api-key", "sk-secretsecretsecret", "--password=hunter2",
		"--model", "opus", "TOKEN=abc123", "--token", "--verbose"}
	got := Argv(in)
	want := []string{"claude", "-p", "fix the tests", "--api-key", Marker, "--password=" + Marker,
		"--model", "opus", "TOKEN=" + Marker, "--token", "--verbose"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Argv:\n got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(Argv(got), got) {
		t.Fatalf("Argv not idempotent: %q", Argv(got))
	}
	if in[4] != "sk-secretsecretsecret" {
		t.Fatal("Argv modified its input")
	}
}

func TestValue(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"user":"bob","password":"hunter2","nested":{"apiKey":"k1","list":["Bearer abcdefgh1234"]},"authRequired":true,"n":3}`), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(Value(v))
	s := string(out)
	for _, secret := range []string{"hunter2", "k1", "abcdefgh1234"} {
		if strings.Contains(s, secret) {
			t.Errorf("Value kept %q: %s", secret, s)
		}
	}
	for _, kept := range []string{`"user":"bob"`, `"authRequired":true`, `"n":3`} {
		if !strings.Contains(s, kept) {
			t.Errorf("Value lost %s: %s", kept, s)
		}
	}
}

func FuzzText(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/redact/*.txt")
	more, _ := filepath.Glob("../../testdata/redact/corpus/*.txt")
	seeds = append(seeds, more...)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err == nil {
			for line := range strings.Lines(string(b)) {
				f.Add(line)
			}
		}
	}
	f.Add("password=hunter2")
	f.Add("Authorization: Bearer abc.def.ghi")
	f.Fuzz(func(t *testing.T, s string) {
		once := Text(s)
		if once != s && !strings.Contains(once, Marker) {
			t.Fatalf("changed without a marker:\n in   %q\n out  %q", s, once)
		}
		if twice := Text(once); twice != once {
			t.Fatalf("not idempotent:\n in   %q\n once %q\n twice %q", s, once, twice)
		}
		a := Argv(strings.Fields(s))
		if b := Argv(a); !reflect.DeepEqual(a, b) {
			t.Fatalf("Argv not idempotent: %q -> %q", a, b)
		}
	})
}

// corpus reads testdata/redact/NAME: one case per line, # comments.
func corpus(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "redact", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(line, "\n")
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// Every planted secret is caught by Text and by Argv; the result is
// idempotent, and a JSON line stays valid JSON with the same keys.
func TestPlantedSecrets(t *testing.T) {
	for _, c := range corpus(t, "planted.txt") {
		secret, in, ok := strings.Cut(c, "\t")
		if !ok {
			t.Fatalf("bad corpus line %q", c)
		}
		got := Text(in)
		if strings.Contains(got, secret) || !strings.Contains(got, Marker) {
			t.Errorf("Text(%q) = %q", in, got)
		}
		if Text(got) != got {
			t.Errorf("Text not idempotent on %q", got)
		}
		if strings.HasPrefix(in, "{") {
			sameJSONKeys(t, in, got)
			continue
		}
		if a := strings.Join(Argv(strings.Fields(in)), " "); strings.Contains(a, secret) && !strings.Contains(in, " is ") && !strings.Contains(in, " was ") {
			t.Errorf("Argv(%q) = %q", in, a)
		}
		if a := strings.Join(Argv([]string{"claude", "-p", in}), " "); strings.Contains(a, secret) {
			t.Errorf("Argv(claude -p %q) = %q", in, a)
		}
	}
}

// Look-alikes survive unchanged: counts, digests, ordinary flags, prose.
func TestLookalikesSurvive(t *testing.T) {
	for _, in := range corpus(t, "lookalikes.txt") {
		if got := Text(in); got != in {
			t.Errorf("Text(%q) = %q, want unchanged", in, got)
		}
		if f := strings.Fields(in); !reflect.DeepEqual(Argv(f), f) {
			t.Errorf("Argv(%q) = %q, want unchanged", f, Argv(f))
		}
	}
	if SensitiveKey("input_tokens") || SensitiveKey("output_tokens_details") || SensitiveKey("tokenCount") || !SensitiveKey("token") || !SensitiveKey("refresh_token") || !SensitiveKey("password_count_secret") {
		t.Error("SensitiveKey: counts vs secrets")
	}
}

// sameJSONKeys checks that out is valid JSON with the keys of in, in order.
func sameJSONKeys(t *testing.T, in, out string) {
	t.Helper()
	if !json.Valid([]byte(out)) {
		t.Fatalf("redacting %q broke JSON: %q", in, out)
	}
	if a, b := jsonKeys(in), jsonKeys(out); !reflect.DeepEqual(a, b) {
		t.Fatalf("keys changed: %q -> %q", a, b)
	}
}

// jsonKeys lists the object keys of a JSON document in order of appearance.
func jsonKeys(s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	var keys []string
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return true
		}
		for dec.More() {
			if d == '{' {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				keys = append(keys, k.(string))
			}
			if !walk() {
				return false
			}
		}
		_, err = dec.Token()
		return err == nil
	}
	walk()
	return keys
}

// FuzzJSON: redacting any JSON document keeps it valid JSON with the same
// keys, is idempotent, and never panics.
func FuzzJSON(f *testing.F) {
	f.Add(`{"input_tokens":12,"output_tokens_details":{"thinking_tokens":7}}`)
	f.Add(`{"password":"x","nested":{"apiKey":[1,"two",{"k":"v"}]},"note":"Bearer abcdefgh1234"}`)
	f.Add(`[{"token":null,"secret":true},"password=hunter2"]`)
	f.Add(`{"a\u0022b":"sk-abcdefghijklmnopqrstuvwxyz","t":"\ud83d\ude00 token=x"}`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out := Text(s)
		sameJSONKeys(t, s, out)
		if Text(out) != out {
			t.Fatalf("not idempotent: %q -> %q", out, Text(out))
		}
	})
}
