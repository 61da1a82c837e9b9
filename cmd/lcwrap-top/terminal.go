package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/lcwrap/lcwrap/internal/view/tui"
)

// terminal is the terminal top owns while it runs: keys in raw mode from
// in, the screen on out (the alternate screen, the cursor hidden,
// bracketed paste on). bubbletea runs without its renderer, so it neither
// sets the terminal up nor restores it: this does both.
type terminal struct {
	in, out *os.File
	opened  bool // in is /dev/tty, opened here
	state   *term.State
	once    sync.Once
}

// Escape sequences of the terminal's modes.
const (
	enterModes = "\x1b[?1049h\x1b[?25l\x1b[?2004h\x1b[H\x1b[2J" // alt screen, hide cursor, bracketed paste
	leaveModes = "\x1b[?2004l\x1b[?25h\x1b[?1049l"              // the same, undone
)

// openTerminal puts the terminal in raw mode and on the alternate screen.
// Keys come from stdin when it is a terminal, else from /dev/tty.
func openTerminal(out *os.File) (*terminal, error) {
	t := &terminal{in: os.Stdin, out: out}
	if !term.IsTerminal(int(t.in.Fd())) {
		f, err := os.Open("/dev/tty")
		if err != nil {
			return nil, fmt.Errorf("no terminal to read keys from: %w", err)
		}
		t.in, t.opened = f, true
	}
	st, err := term.MakeRaw(int(t.in.Fd()))
	if err != nil {
		t.close()
		return nil, fmt.Errorf("raw mode: %w", err)
	}
	t.state = st
	if _, err := t.out.WriteString(enterModes); err != nil {
		t.restore()
		return nil, err
	}
	return t, nil
}

// size is the terminal's size (80×24 when it cannot be read).
func (t *terminal) size() (width, height int) {
	w, h, err := term.GetSize(int(t.out.Fd()))
	if err != nil || w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}

// restore leaves the terminal as it was; it is safe to call more than
// once and from any goroutine. Errors are ignored: a terminal that hung
// up has nothing left to restore.
func (t *terminal) restore() {
	t.once.Do(func() {
		t.out.WriteString(leaveModes)
		if t.state != nil {
			term.Restore(int(t.in.Fd()), t.state)
		}
		t.close()
	})
}

func (t *terminal) close() {
	if t.opened {
		t.in.Close()
	}
}

// panicError is a panic turned into an error, with where it happened.
type panicError struct {
	what  string
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("%s: panic: %v", e.what, e.value) }

func recovered(what string, r any) *panicError {
	return &panicError{what: what, value: r, stack: debug.Stack()}
}

// drawn wraps top's model: after each message it draws the model's View
// on the screen, writing only what changed (tui.Screen), so that nothing
// is drawn, and nothing wakes up, while nothing changes; a key is drawn
// at once. A panic in the model or in one of its commands ends the program
// with the panic as its error (bubbletea's own catcher would print it
// over the screen and lose it when the screen is restored).
type drawn struct {
	inner tea.Model
	scr   *tui.Screen
	err   error // why the program ended: a panic, the screen unwritable
}

func (d *drawn) Init() (cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			d.err, cmd = recovered("top", r), tea.Quit
		}
	}()
	cmd = d.inner.Init()
	if err := d.scr.Draw(d.inner.View()); err != nil {
		d.err = fmt.Errorf("writing the screen: %w", err)
		return tea.Quit
	}
	return guard(cmd)
}

func (d *drawn) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	if d.err != nil {
		return d, tea.Quit
	}
	defer func() {
		if r := recover(); r != nil {
			d.err, cmd = recovered("top", r), tea.Quit
		}
	}()
	switch msg := msg.(type) {
	case panicMsg:
		d.err = msg.err
		return d, tea.Quit
	case tea.WindowSizeMsg:
		d.scr.Resize(msg.Height)
	}
	d.inner, cmd = d.inner.Update(msg)
	if err := d.scr.Draw(d.inner.View()); err != nil {
		d.err = fmt.Errorf("writing the screen: %w", err)
		return d, tea.Quit
	}
	return d, guard(cmd)
}

// View is empty: Update draws.
func (d *drawn) View() string { return "" }

// panicMsg carries a panic of a command to Update.
type panicMsg struct{ err error }

// guard makes a command's panic a panicMsg, the commands of a batch
// included. (top's model uses no tea.Sequence, whose commands it could not
// reach.)
func guard(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = panicMsg{recovered("top", r)}
			}
		}()
		msg = cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for i := range b {
				b[i] = guard(b[i])
			}
		}
		return msg
	}
}
