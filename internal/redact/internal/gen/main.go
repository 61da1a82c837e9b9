// Command gen turns internal/redact's rule table (rules.txt) and tool
// table (tools.txt) into rules_gen.go. `go generate ./internal/redact` runs
// it in that directory; its test fails when rules_gen.go is stale.
//
// It checks what a table can get wrong: an unknown kind or form, a pattern
// that does not compile, a secret group the pattern lacks, a keyword that
// is not lower case or shorter than two bytes.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	rules, err := os.ReadFile("rules.txt")
	if err != nil {
		return err
	}
	tools, err := os.ReadFile("tools.txt")
	if err != nil {
		return err
	}
	out, err := generate(rules, tools)
	if err != nil {
		return err
	}
	return os.WriteFile("rules_gen.go", out, 0o644)
}

// rule is one line of rules.txt.
type rule struct {
	line     int
	kind     string // token, assign, grammar
	id       string
	from     string
	group    int  // token
	nameOnly bool // assign
	entropy  float64
	keywords []string
	pattern  string
}

// tool is one line of tools.txt.
type tool struct {
	name, sub, flag, form string
}

var forms = map[string]string{
	"next": "formNext", "glued": "formGlued", "pass:": "formPass", "user:": "formUserColon",
	"user%": "formUserPercent", "user,": "formUserComma", "last": "formLast", "logon": "formLogon",
}

// fields splits a line into n-1 space-separated fields and the rest.
func fields(line string, n int) []string {
	var out []string
	for len(out) < n-1 {
		line = strings.TrimLeft(line, " \t")
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			if line != "" {
				out = append(out, line)
			}
			return out
		}
		out = append(out, line[:i])
		line = line[i:]
	}
	if rest := strings.TrimSpace(line); rest != "" {
		out = append(out, rest)
	}
	return out
}

func lines(data []byte) func(yield func(int, string) bool) {
	return func(yield func(int, string) bool) {
		for i, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if !yield(i+1, l) {
				return
			}
		}
	}
}

func parseRules(data []byte) ([]rule, error) {
	var rules []rule
	for n, l := range lines(data) {
		f := fields(l, 7)
		if len(f) != 7 {
			return nil, fmt.Errorf("rules.txt:%d: want 7 fields (kind id from secret entropy keywords pattern), have %d", n, len(f))
		}
		r := rule{line: n, kind: f[0], id: f[1], from: f[2], pattern: f[6]}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("rules.txt:%d: %s: %s", n, r.id, fmt.Sprintf(format, a...))
		}
		switch r.from {
		case "gitleaks", "tuned", "lcwrap":
		default:
			return nil, bad("from is %q, want gitleaks, tuned or lcwrap", r.from)
		}
		if f[4] != "-" {
			e, err := strconv.ParseFloat(f[4], 64)
			if err != nil || e <= 0 || e > 8 {
				return nil, bad("entropy %q is not a number of bits in (0, 8]", f[4])
			}
			r.entropy = e
		}
		for _, k := range strings.Split(f[5], ",") {
			if len(k) < 2 || k != strings.ToLower(k) {
				return nil, bad("keyword %q: want lower case, at least 2 bytes", k)
			}
			r.keywords = append(r.keywords, k)
		}
		switch r.kind {
		case "grammar":
			if f[3] != "-" || r.entropy != 0 || r.pattern != "-" {
				return nil, bad("a grammar line has only keywords")
			}
			r.pattern = ""
		case "token":
			g, err := strconv.Atoi(f[3])
			if err != nil || g < 0 {
				return nil, bad("secret %q is not a capture group", f[3])
			}
			re, err := regexp.Compile(r.pattern)
			if err != nil {
				return nil, bad("%v", err)
			}
			if g > re.NumSubexp() {
				return nil, bad("secret group %d, the pattern has %d", g, re.NumSubexp())
			}
			r.group = g
		case "assign":
			switch f[3] {
			case "word":
			case "name":
				r.nameOnly = true
			default:
				return nil, bad("secret %q, want word or name", f[3])
			}
			r.pattern = `^(?:` + r.pattern + `)$`
			if _, err := regexp.Compile(r.pattern); err != nil {
				return nil, bad("%v", err)
			}
		default:
			return nil, bad("kind %q, want token, assign or grammar", r.kind)
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, errors.New("rules.txt: no rules")
	}
	return rules, nil
}

func parseTools(data []byte) ([]tool, error) {
	var tools []tool
	for n, l := range lines(data) {
		f := strings.Fields(l)
		if len(f) != 4 {
			return nil, fmt.Errorf("tools.txt:%d: want 4 fields (tool subcommand flag form), have %d", n, len(f))
		}
		t := tool{name: f[0], sub: f[1], flag: f[2], form: f[3]}
		if t.sub == "-" {
			t.sub = ""
		}
		if t.flag == "-" {
			t.flag = ""
		}
		if _, ok := forms[t.form]; !ok {
			return nil, fmt.Errorf("tools.txt:%d: form %q is not one of next, glued, pass:, user:, user%%, user,, last, logon", n, t.form)
		}
		if (t.flag == "") != (t.form == "logon") {
			return nil, fmt.Errorf("tools.txt:%d: only the logon form has no flag", n)
		}
		if t.flag != "" && !strings.HasPrefix(t.flag, "-") {
			return nil, fmt.Errorf("tools.txt:%d: flag %q does not start with -", n, t.flag)
		}
		if len(strings.TrimSuffix(t.name, "*")) < 2 {
			return nil, fmt.Errorf("tools.txt:%d: tool name %q is shorter than 2 bytes", n, t.name)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// constName is the Go constant of a grammar rule ("url-userinfo" ->
// ruleURLUserinfo).
func constName(id string) string {
	var b strings.Builder
	b.WriteString("rule")
	for _, w := range strings.Split(id, "-") {
		if w == "url" {
			b.WriteString("URL")
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

func generate(rulesTxt, toolsTxt []byte) ([]byte, error) {
	rules, err := parseRules(rulesTxt)
	if err != nil {
		return nil, err
	}
	tools, err := parseTools(toolsTxt)
	if err != nil {
		return nil, err
	}
	// The tool table wakes the tool-flags grammar rule: a tool's name, or
	// its subcommand when a line has one (login rather than oc or az, whose
	// two bytes are in many words).
	tr := rule{kind: "grammar", id: "tool-flags", from: "lcwrap"}
	for _, t := range tools {
		k := strings.ToLower(strings.TrimSuffix(t.name, "*"))
		if t.sub != "" {
			k = strings.ToLower(t.sub)
		}
		if !slices.Contains(tr.keywords, k) {
			tr.keywords = append(tr.keywords, k)
		}
	}
	// Grammar rules first, so their constants are small and stable.
	var all []rule
	for _, r := range rules {
		if r.kind == "grammar" {
			all = append(all, r)
		}
	}
	all = append(all, tr)
	for _, r := range rules {
		if r.kind != "grammar" {
			all = append(all, r)
		}
	}

	var b bytes.Buffer
	b.WriteString("// Code generated by \"go run ./internal/gen\" from rules.txt and tools.txt; DO NOT EDIT.\n\npackage redact\n\n")
	b.WriteString("// Grammar rules: their indices in rules.\nconst (\n")
	for i, r := range all {
		if r.kind == "grammar" {
			fmt.Fprintf(&b, "%s = %d\n", constName(r.id), i)
		}
	}
	b.WriteString(")\n\n")
	fmt.Fprintf(&b, "// numRules is the number of rules.\nconst numRules = %d\n\n", len(all))
	b.WriteString("var rules = [numRules]rule{\n")
	for _, r := range all {
		fmt.Fprintf(&b, "{id: %q, kind: %sRule", r.id, r.kind)
		switch r.kind {
		case "token":
			fmt.Fprintf(&b, ", group: %d, pattern: %s", r.group, quote(r.pattern))
		case "assign":
			fmt.Fprintf(&b, ", nameOnly: %t, names: %#v, pattern: %s", r.nameOnly, r.keywords, quote(r.pattern))
		}
		if r.entropy != 0 {
			fmt.Fprintf(&b, ", entropy: %s", strconv.FormatFloat(r.entropy, 'g', -1, 64))
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n")

	type kw struct {
		k string
		r int
	}
	var kws []kw
	for i, r := range all {
		for _, k := range r.keywords {
			kws = append(kws, kw{k, i})
		}
	}
	slices.SortFunc(kws, func(a, b kw) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return a.r - b.r
	})
	kws = slices.Compact(kws)
	b.WriteString("// keywords wake the rules, sorted by keyword.\nvar keywords = [...]keyword{\n")
	var filter [16]uint64
	for _, k := range kws {
		fmt.Fprintf(&b, "{%q, %d},\n", k.k, k.r)
		h := pairHash(k.k[0], k.k[1])
		filter[h>>6] |= 1 << (h & 63)
	}
	b.WriteString("}\n\n")
	b.WriteString("// keywordFilter has bit pairHash(c0, c1) set when a keyword starts with the bytes c0 c1.\nvar keywordFilter = [16]uint64{\n")
	for _, w := range filter {
		fmt.Fprintf(&b, "%#016x,\n", w)
	}
	b.WriteString("}\n\n")

	b.WriteString("var toolFlags = [...]toolFlag{\n")
	for _, t := range tools {
		name, prefix := strings.CutSuffix(t.name, "*")
		fmt.Fprintf(&b, "{tool: %q, prefix: %t, sub: %q, flag: %q, form: %s},\n", name, prefix, t.sub, t.flag, forms[t.form])
	}
	b.WriteString("}\n")

	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the generated code: %w", err)
	}
	return out, nil
}

// pairHash places the first two bytes of a keyword in keywordFilter's
// 1024 bits; internal/redact's scan computes the same.
func pairHash(c0, c1 byte) uint { return (uint(c0)*37 + uint(c1)) & 1023 }

// quote writes s as a raw string literal when it can.
func quote(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}
