package redact

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// sampler writes a string that a pattern matches, picking random
// characters from its classes (so that entropy checks pass), the fewest
// repetitions and the shortest alternative; caps records where each
// capture group landed.
type sampler struct {
	rnd  *rand.Rand
	caps map[int][2]int
}

func (g *sampler) gen(re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(g.pick(re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture:
		from := b.Len()
		g.gen(re.Sub[0], b)
		g.caps[re.Cap] = [2]int{from, b.Len()}
	case syntax.OpPlus:
		g.gen(re.Sub[0], b)
	case syntax.OpRepeat:
		for range re.Min {
			g.gen(re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.gen(s, b)
		}
	case syntax.OpAlternate:
		// The shortest alternative: a boundary's \z rather than a character.
		best, bestLen := re.Sub[0], -1
		for _, s := range re.Sub {
			var t strings.Builder
			(&sampler{rnd: rand.New(rand.NewPCG(1, 2)), caps: map[int][2]int{}}).gen(s, &t)
			if bestLen < 0 || t.Len() < bestLen {
				best, bestLen = s, t.Len()
			}
		}
		g.gen(best, b)
	}
	// OpStar, OpQuest, empty matches and assertions write nothing.
}

// pick returns a random letter or digit of a class, else a printable
// ASCII character of it, else its first rune.
func (g *sampler) pick(ranges []rune) rune {
	var alnum, printable []rune
	for i := 0; i < len(ranges); i += 2 {
		for r := max(ranges[i], 0x21); r <= ranges[i+1] && r <= 0x7e; r++ {
			printable = append(printable, r)
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
				alnum = append(alnum, r)
			}
		}
	}
	switch {
	case len(alnum) > 0:
		return alnum[g.rnd.IntN(len(alnum))]
	case len(printable) > 0:
		return printable[g.rnd.IntN(len(printable))]
	}
	return ranges[0]
}

// sample returns a string the pattern matches and the text of capture
// group cap in it.
func sample(t *testing.T, pattern string, cap int, seed uint64) (string, string) {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	g := &sampler{rnd: rand.New(rand.NewPCG(seed, 7)), caps: map[int][2]int{}}
	var b strings.Builder
	g.gen(re.Simplify(), &b)
	s := b.String()
	if cap == 0 {
		return s, s
	}
	c, ok := g.caps[cap]
	if !ok {
		t.Fatalf("pattern %s: group %d not in the sample %q", pattern, cap, s)
	}
	return s, s[c[0]:c[1]]
}

// contextKeywords are token rules whose keyword is a word near the key,
// not part of its shape (gitleaks' facebook rule).
var contextKeywords = map[string]bool{"facebook-access-token": true}

// Every token rule catches a sample of its own shape, in text, JSON and
// argv; its keywords wake it (the pre-filter cannot skip a rule for a key
// it would have caught).
func TestTokenRulesCatchTheirShape(t *testing.T) {
	n := 0
	for r := range rules {
		rl := &rules[r]
		if rl.kind != tokenRule {
			continue
		}
		n++
		s, secret := sample(t, rl.pattern, rl.group, uint64(r))
		if !ruleRE(r).MatchString(s) {
			t.Fatalf("%s: the sample %q does not match %s", rl.id, s, rl.pattern)
		}
		held := slices.ContainsFunc(rl.keywords(), func(k string) bool { return strings.Contains(strings.ToLower(s), k) })
		switch {
		case !held && !contextKeywords[rl.id]:
			t.Errorf("%s: the sample %q holds none of its keywords %q: the pre-filter would skip it", rl.id, s, rl.keywords())
		case contextKeywords[rl.id]:
			s = rl.keywords()[0] + " " + s
		}
		text := "x " + s + " y"
		if h, _ := scan(text); !h.has(r) {
			t.Errorf("%s: scan(%q) does not wake it", rl.id, text)
		}
		doc, _ := json.Marshal(map[string]string{"v": text})
		for pos, out := range map[string]string{
			"text": Text(text),
			"json": Text(string(doc)),
			"argv": strings.Join(Argv([]string{"x", s, "y"}), " "),
		} {
			if strings.Contains(out, secret) {
				t.Errorf("%s in %s: %q kept %q", rl.id, pos, out, secret)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d token rules", n)
	}
}

// Every assign rule hides a value of its shape given to a key with its
// name (and a word saying it holds a secret), in every form of giving;
// the same value under a key that says it is an id stays.
func TestAssignRulesCatchTheirShape(t *testing.T) {
	n := 0
	for r := range rules {
		rl := &rules[r]
		if rl.kind != assignRule {
			continue
		}
		n++
		value, _ := sample(t, rl.pattern, 0, uint64(r))
		name := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(rl.names[0]))
		key := name + "_API_KEY"
		if rl.nameOnly {
			key = name
		}
		flag := "--" + strings.ToLower(strings.ReplaceAll(key, "_", "-"))
		if rl.nameOnly {
			flag = "--" + key // an environment variable's name, as a flag
		}
		doc, _ := json.Marshal(map[string]string{key: value})
		outs := map[string]string{
			"KEY=v":      Text("export " + key + "=" + value + " ok"),
			"key: v":     Text(strings.ToLower(key) + ": " + value),
			"--key v":    strings.Join(Argv([]string{"run", flag, value}), " "),
			"--key=v":    strings.Join(Argv([]string{"run", flag + "=" + value}), " "),
			"text --key": Text("run " + flag + " " + value),
			"json":       Text(string(doc)),
			"redact.Value": func() string {
				b, _ := json.Marshal(Value(map[string]any{key: value}))
				return string(b)
			}(),
		}
		for pos, out := range outs {
			if strings.Contains(out, value) {
				t.Errorf("%s in %s: %q kept %q", rl.id, pos, out, value)
			}
		}
		if rl.nameOnly {
			continue
		}
		id := name + "_ID=" + value
		if h, run := scan(id); !run && !strings.HasPrefix(value, "live_") {
			if got := text(id, &h, run); got != id {
				t.Errorf("%s: %q became %q: an id is no secret", rl.id, id, got)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d assign rules", n)
	}
}

// keywords lists a rule's keywords, from the generated index.
func (rl *rule) keywords() []string {
	var out []string
	for _, k := range keywords {
		if &rules[k.rule] == rl {
			out = append(out, k.kw)
		}
	}
	return out
}

// The generated keyword index is sorted and its pair filter complete, as
// scan's binary search assumes.
func TestKeywordIndex(t *testing.T) {
	if !slices.IsSortedFunc(keywords[:], func(a, b keyword) int { return strings.Compare(a.kw, b.kw) }) {
		t.Fatal("keywords are not sorted")
	}
	for _, k := range keywords {
		if h := pairHash(k.kw[0], k.kw[1]); keywordFilter[h>>6]&(1<<(h&63)) == 0 {
			t.Fatalf("keyword %q is missing from keywordFilter", k.kw)
		}
	}
	// A plain command line wakes nothing and compiles nothing.
	for _, s := range []string{"true", "make test", "go build ./...", "/usr/bin/env bash -c ls", "sleep 30"} {
		if h, run := scan(s); !h.empty() || run {
			t.Errorf("scan(%q) woke rules", s)
		}
	}
}

// Every key SensitiveKey hides wakes the key/value grammar: the
// pre-filter never skips a secret that the key names.
func TestSensitiveKeysWakeTheGrammar(t *testing.T) {
	keys := []string{"password", "--passwd", "passphrase", "PASSCODE", "client_secret", "GITHUB_TOKEN", "X-Api-Key",
		"Authorization", "authentication", "credentials", "Set-Cookie", "private_key", "AccessKey", "session_key",
		"bearer", "signature", "accountKey", "client_key", "masterKey", "signingKey", "encryption_key", "license_key",
		"auth", "pwd", "pass", "pw", "oauth", "jwt", "sig", "otp", "totp", "pat", "cred", "creds", "refresh_tokens",
		"refresh token", "client secret", "db password", "api key", "one time passcode"}
	for _, k := range keys {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = false", k)
		}
		if h, _ := scan(k); !h.has(ruleKeyValue) {
			t.Errorf("scan(%q) does not wake the key/value grammar", k)
		}
	}
	for _, k := range []string{"--password-stdin", "--password-file", "--ask-pass", "--no-password", "token_type",
		"secret_name", "auth_method", "--token-ttl", "POSTGRES_PASSWORD_FILE", "input_tokens", "max_tokens", "tokens",
		"missing or wrong token", "not a POST", "Bearer abcdefghijklmnop"} {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = true", k)
		}
	}
}

// RULES.md lists every rule id of the table with its origin.
func TestRulesDocumented(t *testing.T) {
	b, err := os.ReadFile("RULES.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	seen := map[string]bool{}
	for _, rl := range rules {
		if seen[rl.id] {
			continue
		}
		seen[rl.id] = true
		if !strings.Contains(doc, "`"+rl.id+"`") {
			t.Errorf("RULES.md does not name rule %s", rl.id)
		}
	}
}

func FuzzArgv(f *testing.F) {
	for _, c := range corpusLines(f) {
		f.Add(c)
	}
	f.Add("redis-cli\x00-a\x00pw\x00ping")
	f.Add("sqlplus\x00scott/tiger@db")
	f.Add("htpasswd\x00-cb\x00f\x00u\x00pw")
	f.Fuzz(func(t *testing.T, s string) {
		for _, args := range [][]string{strings.Split(s, "\x00"), strings.Fields(s)} {
			out := Argv(args)
			if len(out) != len(args) {
				t.Fatalf("Argv(%q) has length %d", args, len(out))
			}
			for i := range out {
				if out[i] != args[i] && !strings.Contains(out[i], Marker) {
					t.Fatalf("Argv(%q)[%d] = %q: changed without a marker", args, i, out[i])
				}
			}
			if again := Argv(out); !reflect.DeepEqual(again, out) {
				t.Fatalf("Argv not idempotent: %q -> %q", out, again)
			}
			for _, a := range args {
				if name, _, _ := strings.Cut(a, "="); optionWord(a) && SensitiveKey(name) {
					if h, _ := scan(name); !h.has(ruleKeyValue) {
						t.Fatalf("SensitiveKey(%q) but the pre-filter does not wake the grammar", name)
					}
				}
			}
		}
	})
}

// corpusLines are the texts of testdata/redact/corpus, for fuzz seeds.
func corpusLines(f *testing.F) []string {
	f.Helper()
	var out []string
	for _, name := range []string{"provider-keys", "tool-flags", "flag-values", "url-userinfo", "netrc", "private-keys", "prose", "azure", "sentry", "json-keys"} {
		b, err := os.ReadFile("../../testdata/redact/corpus/" + name + ".txt")
		if err != nil {
			f.Fatal(err)
		}
		for l := range strings.Lines(string(b)) {
			if len(l) > 2 && l[0] != '#' {
				_, text, ok := strings.Cut(l[2:], "\t")
				if !ok {
					text = l[2:]
				}
				out = append(out, strings.TrimSuffix(strings.ReplaceAll(text, `\n`, "\n"), "\n"))
			}
		}
	}
	return out
}
