package claudecode

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/lcwrap/lcwrap/internal/agent"
	"github.com/lcwrap/lcwrap/internal/event"
)

// InterruptMarker starts the text Claude Code writes into a session's
// transcript when the user interrupts a turn (Esc): "[Request interrupted
// by user]", "[Request interrupted by user for tool use]". No hook fires
// for it (measured with 2.1.332).
const InterruptMarker = "[Request interrupted by user"

// transcriptLine is the part of a transcript line lcwrap reads: a user
// message's type, whether it belongs to a sub-agent's side chain, the
// interruption's message id, and the message's content, decoded only to
// find the marker (no text is kept but the marker itself).
type transcriptLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Interrupted string `json:"interruptedMessageId"`
	Message     *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// Interruption reads one transcript line and returns the interruption
// marker it records ("" when it records none). It never fails: a line it
// cannot read records nothing.
func Interruption(line []byte) string {
	if !bytes.Contains(line, []byte(InterruptMarker)) || !utf8.Valid(line) {
		return "" // the marker is the evidence: no line without it is decoded
	}
	var l transcriptLine
	if json.Unmarshal(line, &l) != nil || l.Type != "user" || l.IsSidechain || l.Message == nil {
		return ""
	}
	var s string
	if json.Unmarshal(l.Message.Content, &s) == nil {
		return marker(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return ""
	}
	for _, b := range blocks {
		if b.Type == "text" {
			if m := marker(b.Text); m != "" {
				return m
			}
		}
	}
	return ""
}

// marker is the interruption marker that text is, or "".
func marker(text string) string {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, InterruptMarker) || len(text) > 80 || !strings.HasSuffix(text, "]") {
		return ""
	}
	return text
}

// maxTranscriptRead bounds what one look at a transcript reads; a longer
// line than this is skipped (the lines that matter are short).
const maxTranscriptRead = 1 << 20

// transcripts follows the transcript of each session of a run from where
// it ended when the session was first named, for the one thing no hook
// says: an interrupted turn. It is used by one goroutine (the run's
// payload queue), so that what it reads is ordered with the hooks.
type transcripts struct {
	files map[string]*transcript // by session id
}

type transcript struct {
	path    string
	off     int64
	partial []byte // a line not yet ended
	skip    bool   // the partial line is over the bound: drop it to its end
}

// see notes session's transcript path; a transcript first seen is read
// from its current end (what came before it is not this run's).
func (ts *transcripts) see(session, path string) {
	if session == "" || path == "" || len(session) > agent.MaxID {
		return
	}
	if ts.files == nil {
		ts.files = map[string]*transcript{}
	}
	if f := ts.files[session]; f != nil && f.path == path {
		return
	}
	f := &transcript{path: path}
	if st, err := os.Stat(path); err == nil {
		f.off = st.Size()
	}
	ts.files[session] = f
}

// read reads what was appended to session's transcript since the last
// look and returns an observation for each interruption it records.
func (ts *transcripts) read(session string) []agent.Observation {
	f := ts.files[session]
	if f == nil {
		return nil
	}
	var obs []agent.Observation
	for _, line := range f.lines() {
		if m := Interruption(line); m != "" {
			obs = append(obs, agent.Observation{Kind: agent.Waiting, Session: session, WaitingFor: event.WaitUser,
				Native: "transcript: " + m, Summary: "the turn was interrupted"})
		}
	}
	return obs
}

// sessions lists the sessions followed.
func (ts *transcripts) sessions() []string {
	out := make([]string, 0, len(ts.files))
	for s := range ts.files {
		out = append(out, s)
	}
	return out
}

// lines returns the whole lines appended since the last look.
func (f *transcript) lines() [][]byte {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil
	}
	if st.Size() < f.off { // rewritten: start again from its end
		f.off, f.partial, f.skip = st.Size(), nil, false
		return nil
	}
	if st.Size() == f.off {
		return nil
	}
	buf := make([]byte, min(st.Size()-f.off, maxTranscriptRead))
	n, _ := io.ReadFull(io.NewSectionReader(fh, f.off, int64(len(buf))), buf)
	buf = buf[:n]
	f.off += int64(n)
	var out [][]byte
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			if f.skip || len(f.partial)+len(buf) > maxTranscriptRead {
				f.partial, f.skip = nil, true
			} else {
				f.partial = append(f.partial, buf...)
			}
			break
		}
		line := buf[:i]
		buf = buf[i+1:]
		if f.skip {
			f.skip = false
			continue
		}
		if len(f.partial) > 0 {
			line = append(f.partial, line...)
			f.partial = nil
		}
		out = append(out, line)
	}
	return out
}
