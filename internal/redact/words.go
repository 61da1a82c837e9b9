package redact

import "strings"

// toolForm says where a tool's password option keeps the secret
// (tools.txt).
type toolForm uint8

const (
	formNext        toolForm = iota // the option's argument
	formGlued                       // only glued to the option: -pSECRET
	formPass                        // the argument after pass:
	formUserColon                   // the argument after its first :
	formUserPercent                 // the argument after its first %
	formUserComma                   // the argument after its first ,
	formLast                        // the command's last word
	formLogon                       // the first operand: user/SECRET@db
)

// toolFlag is one line of tools.txt.
type toolFlag struct {
	tool   string
	prefix bool   // tool is a prefix of the command's name (mysql*)
	sub    string // the line applies after this subcommand
	flag   string
	form   toolForm
}

func (t *toolFlag) matches(base string) bool {
	if t.prefix {
		return strings.HasPrefix(base, t.tool)
	}
	return base == t.tool
}

// span is the secret part of word: bytes [from, to) of it, to < 0 meaning
// its end.
type span struct{ word, from, to int }

// secretAfter returns the span of an option's argument held in word from
// byte off on, by form; ok is false when that argument holds no secret
// (openssl's env:VAR, curl -u user without a password).
func secretAfter(word string, off int, form toolForm) (span, bool) {
	v := word[off:]
	cut := func(sep string) (span, bool) {
		i := strings.Index(v, sep)
		if i < 0 || i+len(sep) == len(v) {
			return span{}, false
		}
		return span{from: off + i + len(sep), to: -1}, true
	}
	switch form {
	case formPass:
		if strings.HasPrefix(v, "pass:") && len(v) > len("pass:") {
			return span{from: off + len("pass:"), to: -1}, true
		}
		return span{}, false
	case formUserColon:
		return cut(":")
	case formUserPercent:
		return cut("%")
	case formUserComma:
		return cut(",")
	}
	if v == "" {
		return span{}, false
	}
	return span{from: off, to: -1}, true
}

// optionLike reports whether a word is an option rather than an option's
// argument: --anything, or a one-letter -x. A value that starts with a
// dash and is longer (a password "-x7Yq") is taken as a value.
func optionLike(w string) bool {
	return strings.HasPrefix(w, "--") || len(w) == 2 && w[0] == '-' && isLetter(w[1])
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// optionWord reports whether w is an option: one or two dashes, then a
// name of letters, digits, _ . or -, and maybe =value ("-----BEGIN ...
// KEY-----" is not one).
func optionWord(w string) bool {
	name, _, _ := strings.Cut(w, "=")
	if !strings.HasPrefix(name, "-") {
		return false
	}
	name = strings.TrimPrefix(name, "-")
	name = strings.TrimPrefix(name, "-")
	if name == "" || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// cluster reports whether w is a cluster of one-letter options (-xvf).
func cluster(w string) bool {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if !isLetter(w[i]) {
			return false
		}
	}
	return true
}

func baseName(w string) string { return w[strings.LastIndexByte(w, '/')+1:] }

// commandSecrets finds the secrets of one command line given as its words
// (unquoted): the values of options named like a secret (--password X,
// --api-key=X, not --password-stdin), a value given to a key named after a
// provider (--adafruit-key X), and, when tools is set, the password
// options of the tools in tools.txt (redis-cli -a X, sqlplus user/X@db).
// It returns at most one span a word, in word order.
func commandSecrets(words []string, tools bool) []span {
	var out []span
	var (
		entries  []*toolFlag // the current tool's lines whose subcommand (if any) was seen
		waiting  []*toolFlag // its lines still waiting for their subcommand
		operands int         // operands since the current tool
		hideLast bool
		toolAt   = -1
	)
	add := func(i int, s span, ok bool) {
		if ok && s.from < len(words[i]) && words[i][s.from:] != Marker {
			s.word = i
			out = append(out, s)
		}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if tools {
			if es := toolEntries(baseName(w)); es != nil {
				entries, waiting = entries[:0], waiting[:0]
				for _, e := range es {
					if e.sub == "" {
						entries = append(entries, e)
					} else {
						waiting = append(waiting, e)
					}
				}
				operands, hideLast, toolAt = 0, false, i
				continue
			}
		}
		if !optionWord(w) {
			// An operand.
			if len(waiting) > 0 {
				for j := 0; j < len(waiting); j++ {
					if waiting[j].sub == w {
						entries = append(entries, waiting[j])
						waiting = append(waiting[:j], waiting[j+1:]...)
						j--
					}
				}
			}
			if operands == 0 && toolAt >= 0 {
				for _, e := range entries {
					if e.form == formLogon {
						if s, ok := logon(w); ok {
							add(i, s, true)
						}
					}
				}
			}
			operands++
			continue
		}
		// An option: the current tool's own first.
		if claimed, skip := toolOption(words, i, entries, add, &hideLast); claimed {
			i += skip
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		switch {
		case SensitiveKey(name):
			if hasVal {
				add(i, span{from: len(name) + 1, to: -1}, val != "")
			} else if i+1 < len(words) && !optionLike(words[i+1]) {
				add(i+1, span{to: -1}, true)
				i++
			}
		case hasVal:
			if assignSecret(name, val) {
				add(i, span{from: len(name) + 1, to: -1}, true)
			}
		case i+1 < len(words) && !optionLike(words[i+1]) && assignSecret(name, words[i+1]):
			add(i+1, span{to: -1}, true)
			i++
		}
	}
	if hideLast && toolAt >= 0 && toolAt < len(words)-1 {
		if w := words[len(words)-1]; len(w) > 0 && w[0] != '-' && (len(out) == 0 || out[len(out)-1].word != len(words)-1) {
			add(len(words)-1, span{to: -1}, true)
		}
	}
	return out
}

// toolOption applies the current tool's lines to the option words[i]:
// claimed says one of them took it, skip how many words after it were
// its argument.
func toolOption(words []string, i int, entries []*toolFlag, add func(int, span, bool), hideLast *bool) (claimed bool, skip int) {
	w := words[i]
	for _, e := range entries {
		f := e.flag
		if f == "" {
			continue
		}
		short := len(f) == 2 && f[1] != '-'
		switch e.form {
		case formLast:
			if w == f || short && cluster(w) && strings.IndexByte(w[1:], f[1]) >= 0 {
				*hideLast = true
				return true, 0
			}
			continue
		case formGlued:
			if short && len(w) > 2 && strings.HasPrefix(w, f) {
				add(i, span{from: 2, to: -1}, true)
				return true, 0
			}
			continue
		}
		switch {
		case w == f || short && cluster(w) && w[len(w)-1] == f[1]:
			// The argument is the next word.
			if i+1 < len(words) {
				s, ok := secretAfter(words[i+1], 0, e.form)
				add(i+1, s, ok)
				return true, 1
			}
			return true, 0
		case strings.HasPrefix(w, f+"="):
			s, ok := secretAfter(w, len(f)+1, e.form)
			add(i, s, ok)
			return true, 0
		case short && len(w) > 2 && strings.HasPrefix(w, f):
			s, ok := secretAfter(w, 2, e.form)
			add(i, s, ok)
			return true, 0
		}
	}
	return false, 0
}

// logon finds the password of an Oracle-style logon, user/SECRET@db or
// user/SECRET; "/" alone (/ as sysdba) has none.
func logon(w string) (span, bool) {
	i := strings.IndexByte(w, '/')
	if i <= 0 || strings.Contains(w, "://") {
		return span{}, false
	}
	to := strings.LastIndexByte(w, '@')
	if to < i {
		to = len(w)
	}
	if to == i+1 {
		return span{}, false
	}
	if to == len(w) {
		return span{from: i + 1, to: -1}, true
	}
	return span{from: i + 1, to: to}, true
}

// toolEntries returns the lines of tools.txt for a command name.
func toolEntries(base string) []*toolFlag {
	var es []*toolFlag
	for i := range toolFlags {
		if toolFlags[i].matches(base) {
			es = append(es, &toolFlags[i])
		}
	}
	return es
}

// shellWord is one word of a command line in a text: raw is s[start:end];
// inner is its content, without one layer of quotes around the whole of
// it (at s[start+off:]).
type shellWord struct {
	start, end, off int
	inner           string
}

// shellCommands splits a text into commands (at unquoted ; & | newlines,
// parentheses and redirections < >: what follows a redirection is a file,
// not an argument) and each command into words (at unquoted blanks). A
// quote opens a quoted part only at the start of a word or after = or :,
// and only when it is closed: the apostrophe of prose ("it's") is a
// letter.
func shellCommands(s string) [][]shellWord {
	var cmds [][]shellWord
	var cur []shellWord
	end := func() {
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\r':
			i++
			continue
		case '\n', ';', '&', '|', '(', ')', '<', '>':
			end()
			i++
			continue
		}
		start := i
		for i < len(s) {
			c := s[i]
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>' {
				break
			}
			if c == '\\' && i+1 < len(s) {
				i += 2
				continue
			}
			if (c == '\'' || c == '"') && (i == start || s[i-1] == '=' || s[i-1] == ':') {
				if j := strings.IndexByte(s[i+1:], c); j >= 0 {
					i += j + 2
					continue
				}
			}
			i++
		}
		w := shellWord{start: start, end: i, inner: s[start:i]}
		if r := w.inner; len(r) >= 2 && (r[0] == '\'' || r[0] == '"') && r[len(r)-1] == r[0] && strings.IndexByte(r[1:len(r)-1], r[0]) < 0 {
			w.off, w.inner = 1, r[1:len(r)-1]
		}
		cur = append(cur, w)
	}
	end()
	return cmds
}

// textCommandSecrets applies commandSecrets to every command in a text.
func textCommandSecrets(s string, tools bool) string {
	var b strings.Builder
	last := 0
	words := make([]string, 0, 16)
	for _, cmd := range shellCommands(s) {
		words = words[:0]
		for _, w := range cmd {
			words = append(words, w.inner)
		}
		for _, sp := range commandSecrets(words, tools) {
			w := cmd[sp.word]
			from, to := w.start+w.off+sp.from, w.start+w.off+len(w.inner)
			if sp.to >= 0 {
				to = w.start + w.off + sp.to
			}
			if from < last || from >= to {
				continue
			}
			v := s[from:to]
			b.WriteString(s[last:from])
			b.WriteString(quoteLike(v))
			last = to
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
