package redact_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/emit"
	"github.com/lcwrap/lcwrap/internal/event"
	"github.com/lcwrap/lcwrap/internal/redact"
)

// corpusCase is one line of testdata/redact/corpus/*.txt (README.md there).
type corpusCase struct {
	file    string
	line    int
	kind    byte // '+' command line, '*' other text, '=' look-alike
	secret  string
	text    string
	display string
}

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "redact", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var cases []corpusCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if l == "" || l[0] == '#' {
				continue
			}
			c := corpusCase{file: filepath.Base(f), line: i + 1, display: l}
			if len(l) < 3 || l[1] != ' ' || !strings.ContainsRune("+*=", rune(l[0])) {
				t.Fatalf("%s:%d: want '+ ', '* ' or '= ': %q", c.file, c.line, l)
			}
			c.kind, c.text = l[0], l[2:]
			if c.kind != '=' {
				var ok bool
				if c.secret, c.text, ok = strings.Cut(c.text, "\t"); !ok || c.secret == "" {
					t.Fatalf("%s:%d: want SECRET<TAB>TEXT", c.file, c.line)
				}
			}
			c.text = strings.ReplaceAll(c.text, `\n`, "\n")
			if c.kind != '=' && !strings.Contains(c.text, c.secret) {
				t.Fatalf("%s:%d: the text does not hold its secret", c.file, c.line)
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// shellSplit splits a command line as a shell does, into commands (at
// unquoted ; & | < > and newlines: a redirection's file is no argument) of
// words (quotes removed). It is written
// apart from the package's own word splitter on purpose.
func shellSplit(s string) [][]string {
	var cmds [][]string
	var cmd []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			cmd = append(cmd, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if len(cmd) > 0 {
			cmds = append(cmds, cmd)
			cmd = nil
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			endWord()
		case '\n', ';', '&', '|', '<', '>':
			endCmd()
		case '\\':
			if i+1 < len(s) {
				i++
				word.WriteByte(s[i])
				inWord = true
			}
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				word.WriteString(s[i:])
				i = len(s)
			} else {
				word.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// leaked returns the secret, or a run of four or more letters and digits
// of it that the text holds nowhere else, when out still holds it: a
// password cut at its @ leaks its tail.
func leaked(out, secret, text string) string {
	if strings.Contains(out, secret) {
		return secret
	}
	rest := strings.ReplaceAll(text, secret, " ")
	for _, part := range strings.FieldsFunc(secret, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) {
		if len(part) >= 4 && !strings.Contains(rest, part) && strings.Contains(out, part) {
			return part
		}
	}
	return ""
}

// position is one place a text can reach the journal by.
type position struct {
	name string
	// run returns what would be written, as strings to search; ok is false
	// when that is broken (a changed length, invalid JSON, changed keys).
	run func(text string) (out []string, unchanged bool, problem string)
}

func strs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			for k, e := range t {
				out = append(out, k)
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// jsonOut decodes redacted JSON and compares it with the original.
func jsonOut(orig any, raw []byte) ([]string, bool, string) {
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		return []string{string(raw)}, false, "invalid JSON: " + err.Error()
	}
	return append(strs(got), string(raw)), reflect.DeepEqual(normal(orig), got), ""
}

// normal is v as encoding/json would decode it.
func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func positions(kind byte, isJSON bool) []position {
	ps := []position{
		{"argv (one argument)", func(s string) ([]string, bool, string) {
			in := []string{"sh", "-c", s}
			out := redact.Argv(in)
			if len(out) != len(in) {
				return out, false, "length changed"
			}
			return out, slices.Equal(in, out), ""
		}},
		{"activity", func(s string) ([]string, bool, string) {
			out := redact.Text(s)
			if again := redact.Text(out); again != out {
				return []string{out}, false, "not idempotent: " + again
			}
			return []string{out}, out == s, ""
		}},
		{"details string (emit.EncodeDetails)", func(s string) ([]string, bool, string) {
			d := event.FreeDetails{"text": s, "argv": []any{"sh", "-c", s}}
			raw, err := emit.EncodeDetails(d) // as an event is built
			if err != nil {
				return nil, false, err.Error()
			}
			return jsonOut(map[string]any(d), raw)
		}},
		{"details JSON text (redact.Text of a line)", func(s string) ([]string, bool, string) {
			doc := map[string]any{"kind": "activity", "details": map[string]any{"note": s, "command": []any{"sh", "-c", s}}}
			return jsonOut(doc, []byte(redact.Text(string(marshal(doc)))))
		}},
	}
	if kind == '+' || kind == '=' && !isJSON {
		ps = append(ps, position{"argv (split as a shell does)", func(s string) ([]string, bool, string) {
			var all []string
			same := true
			for _, in := range shellSplit(s) {
				out := redact.Argv(in)
				if len(out) != len(in) {
					return out, false, "length changed"
				}
				same = same && slices.Equal(in, out)
				all = append(all, out...)
			}
			return all, same, ""
		}})
	}
	return ps
}

// jsonPositions are the places of a text that is itself one JSON value:
// an agent's payload kept as details.
func jsonPositions() []position {
	return []position{
		{"details value (emit.EncodeDetails payload)", func(s string) ([]string, bool, string) {
			var v any
			_ = json.Unmarshal([]byte(s), &v)
			d := event.FreeDetails{"payload": v}
			raw, err := emit.EncodeDetails(d) // as an event is built
			if err != nil {
				return nil, false, err.Error()
			}
			return jsonOut(map[string]any(d), raw)
		}},
		{"details value (redact.Value)", func(s string) ([]string, bool, string) {
			var v any
			_ = json.Unmarshal([]byte(s), &v)
			return jsonOut(v, marshal(redact.Value(v)))
		}},
		{"details JSON text (a payload in a line)", func(s string) ([]string, bool, string) {
			line := `{"kind":"activity","details":{"payload":` + s + `}}`
			var v any
			_ = json.Unmarshal([]byte(line), &v)
			return jsonOut(v, []byte(redact.Text(line)))
		}},
	}
}

// The corpus by category: every secret form gone and every look-alike
// intact, in every position; the figures go to the test log.
func TestCorpus(t *testing.T) {
	type tally struct{ forms, caught, lookalikes, intact int }
	byFile := map[string]*tally{}
	var files []string
	checks := 0
	for _, c := range readCorpus(t) {
		tl := byFile[c.file]
		if tl == nil {
			tl = &tally{}
			byFile[c.file] = tl
			files = append(files, c.file)
		}
		isJSON := json.Valid([]byte(c.text))
		ps := positions(c.kind, isJSON)
		if isJSON {
			ps = append(ps, jsonPositions()...)
		}
		ok := true
		for _, p := range ps {
			checks++
			out, unchanged, problem := p.run(c.text)
			fail := func(why string) {
				ok = false
				t.Errorf("%s:%d in %s: %s\n  line: %s\n  out:  %q", c.file, c.line, p.name, why, c.display, out)
			}
			switch {
			case problem != "":
				fail(problem)
			case c.kind == '=':
				if !unchanged {
					fail("a look-alike was changed")
				}
			default:
				joined := strings.Join(out, "\x00")
				if part := leaked(joined, c.secret, c.text); part != "" {
					fail("the secret, or its part " + strconv.Quote(part) + ", is still there")
				} else if !strings.Contains(joined, redact.Marker) {
					fail("no marker")
				}
			}
		}
		if c.kind == '=' {
			tl.lookalikes++
			if ok {
				tl.intact++
			}
		} else {
			tl.forms++
			if ok {
				tl.caught++
			}
		}
	}
	var total tally
	for _, f := range files {
		tl := byFile[f]
		t.Logf("%-20s secret forms caught %2d of %2d, look-alikes intact %2d of %2d", f, tl.caught, tl.forms, tl.intact, tl.lookalikes)
		total.forms += tl.forms
		total.caught += tl.caught
		total.lookalikes += tl.lookalikes
		total.intact += tl.intact
	}
	t.Logf("%-20s secret forms caught %2d of %2d, look-alikes intact %2d of %2d (%d checks: each line in every position)", "all", total.caught, total.forms, total.intact, total.lookalikes, checks)
}

// Item 9 of issue 23: the hook server's rejection counts are counts, not
// secrets, although a reason names a token.
func TestHookRejectionCountsSurvive(t *testing.T) {
	term := event.Terminal{Claim: "exited"}
	term.Extra.Set(agent.KeyHookRequestsRejected, agent.IntMap{"missing or wrong token": 2, "not a POST": 1})
	raw, err := emit.EncodeDetails(term) // as the run's terminal event is built
	if err != nil {
		t.Fatal(err)
	}
	if want := `"hookRequestsRejected":{"missing or wrong token":2,"not a POST":1}`; !strings.Contains(string(raw), want) {
		t.Fatalf("terminal details %s, want %s", raw, want)
	}
	if again := redact.Text(string(raw)); again != string(raw) {
		t.Fatalf("redacting the written line again changed it: %s", again)
	}
	// A number under a key that names a password stays hidden, spaces or
	// not, and so does anything under a sensitive key written as one word.
	for _, in := range []string{`{"db password":123456}`, `{"one time passcode":424242}`, `{"token":12345}`, `{"secret":{"missing or wrong token":2}}`} {
		if out := redact.Text(in); strings.ContainsAny(out, "0123456789") {
			t.Errorf("Text(%s) = %s, want the number hidden", in, out)
		}
	}
}
