package redact

//go:generate go run ./internal/gen

import (
	"math"
	"math/bits"
	"regexp"
	"strings"
	"sync"
)

// ruleKind says how a rule of rules.txt finds a secret.
type ruleKind uint8

const (
	// grammarRule wakes a part of lcwrap's own grammar (key/value pairs,
	// URLs, command lines); it has no pattern.
	grammarRule ruleKind = iota
	// tokenRule finds a secret by its shape anywhere in a text.
	tokenRule
	// assignRule hides a value given to a key named after a provider.
	assignRule
)

// rule is one line of rules.txt (see there).
type rule struct {
	id       string
	kind     ruleKind
	group    int      // tokenRule: the capture group that is the secret
	nameOnly bool     // assignRule: the key need not say it holds a secret
	names    []string // assignRule: one of them is in the key
	entropy  float64  // the least Shannon entropy of the secret, bits a byte
	pattern  string   // tokenRule: unanchored; assignRule: anchored
}

// keyword wakes rules[rule] when a text holds kw (any case).
type keyword struct {
	kw   string
	rule int
}

// hits holds one bit a rule: its keyword is in the text.
type hits [(numRules + 63) / 64]uint64

func (h *hits) set(r int)      { h[r>>6] |= 1 << (r & 63) }
func (h *hits) has(r int) bool { return h[r>>6]&(1<<(r&63)) != 0 }

func (h *hits) or(o *hits) {
	for i := range h {
		h[i] |= o[i]
	}
}

func (h *hits) empty() bool {
	for _, w := range h {
		if w != 0 {
			return false
		}
	}
	return true
}

// each calls f for every rule of kind k whose bit is set, in table order.
func (h *hits) each(k ruleKind, f func(r int)) {
	for i, w := range h {
		for w != 0 {
			r := i*64 + bits.TrailingZeros64(w)
			w &= w - 1
			if rules[r].kind == k {
				f(r)
			}
		}
	}
}

// pairHash places two bytes in keywordFilter's 1024 bits (the generator
// computes the same): a filter of 128 bytes, so that the first text a
// process redacts touches one cache line, not a table of pages.
func pairHash(c0, c1 byte) uint { return (uint(c0)*37 + uint(c1)) & 1023 }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with the lower-case ASCII kw, in
// any case.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if lower(s[i]) != kw[i] {
			return false
		}
	}
	return true
}

// scan is the pre-filter, one pass over s: which rules' keywords s holds
// (an assign rule's keyword wakes the key/value grammar too, which finds
// the pairs it checks), and whether s holds a run of exactly 40 base64
// characters (the shape of a bare AWS secret access key). A text that
// wakes nothing is returned as it is, and no pattern is compiled for it.
func scan(s string) (h hits, keyRun bool) {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isB64(c) {
			run++
		} else {
			keyRun = keyRun || run == 40
			run = 0
		}
		if i+1 == len(s) {
			break
		}
		c0, c1 := lower(c), lower(s[i+1])
		if hp := pairHash(c0, c1); keywordFilter[hp>>6]&(1<<(hp&63)) == 0 {
			continue
		}
		// The first keyword starting with c0 c1, by binary search.
		lo, hi := 0, len(keywords)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if k := keywords[m].kw; k[0] < c0 || k[0] == c0 && k[1] < c1 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		for j := lo; j < len(keywords) && keywords[j].kw[0] == c0 && keywords[j].kw[1] == c1; j++ {
			if hasPrefixFold(s[i:], keywords[j].kw) {
				r := keywords[j].rule
				h.set(r)
				if rules[r].kind == assignRule {
					h.set(ruleKeyValue)
				}
			}
		}
	}
	return h, keyRun || run == 40
}

// compiled holds each rule's pattern, compiled on its first use: a rule
// whose keywords never appear costs nothing.
var compiled [numRules]struct {
	once sync.Once
	re   *regexp.Regexp
}

func ruleRE(r int) *regexp.Regexp {
	c := &compiled[r]
	c.once.Do(func() { c.re = regexp.MustCompile(rules[r].pattern) })
	return c.re
}

// entropy is the Shannon entropy of s in bits a byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	e := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			e -= p * math.Log2(p)
		}
	}
	return e
}

// applyTokens replaces the secret of every match of the token rules that
// h woke.
func applyTokens(s string, h *hits) string {
	h.each(tokenRule, func(r int) {
		re, g := ruleRE(r), rules[r].group
		all := re.FindAllStringSubmatchIndex(s, -1)
		if all == nil {
			return
		}
		var b strings.Builder
		last := 0
		for _, loc := range all {
			from, to := loc[2*g], loc[2*g+1]
			if from < 0 || from == to || s[from:to] == Marker || entropy(s[from:to]) < rules[r].entropy {
				continue
			}
			b.WriteString(s[last:from])
			b.WriteString(Marker)
			last = to
		}
		if last > 0 {
			b.WriteString(s[last:])
			s = b.String()
		}
	})
	return s
}

// assignWords say that a key holds a secret, for the assign rules that
// need one (ADAFRUIT_IO_KEY, twitter_consumer_secret, sonar.login).
var assignWords = []string{"key", "token", "secret", "pass", "pwd", "auth", "cred", "private", "signing", "license", "login", "bearer", "access"}

// assignSecret reports whether value, given to key, is a secret by an
// assign rule: the key holds a rule's name (and, for most, a word saying
// it holds a secret), and the value has the rule's shape.
func assignSecret(key, value string) bool {
	if value == "" || value == Marker || len(value) > 512 {
		return false
	}
	h, _ := scan(key)
	found := false
	h.each(assignRule, func(r int) {
		if found || !rules[r].nameOnly && !saysSecret(withoutNames(key, rules[r].names)) {
			return
		}
		found = ruleRE(r).MatchString(value) && entropy(value) >= rules[r].entropy
	})
	return found
}

// mayAssign reports whether a key holds the name of an assign rule.
func mayAssign(key string) bool {
	h, _ := scan(key)
	found := false
	h.each(assignRule, func(int) { found = true })
	return found
}

// withoutNames is key, lower case, without a rule's names: the word that
// says a secret must not be part of the name (privateai).
func withoutNames(key string, names []string) string {
	k := strings.ToLower(key)
	for _, n := range names {
		k = strings.ReplaceAll(k, n, " ")
	}
	return k
}

func saysSecret(key string) bool {
	for _, w := range keyWords(key) {
		if w == "pat" {
			return true
		}
		for _, p := range assignWords {
			if strings.Contains(w, p) {
				return true
			}
		}
	}
	return false
}
