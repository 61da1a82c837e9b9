package view

// A state's symbol reads without colour; its colour is an ANSI SGR
// sequence used only on a terminal and never under NO_COLOR.
type look struct {
	symbol string
	color  string
}

// The ANSI SGR sequences of the table and of top.
const (
	sgrReset   = "\x1b[0m"
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrBlue    = "\x1b[34m"
	sgrMagenta = "\x1b[35m"
	sgrCyan    = "\x1b[36m"
	sgrDim     = "\x1b[2m"
	sgrWaiting = "\x1b[1;30;43m" // bold black on yellow: someone is wanted
	sgrReverse = "\x1b[7m"
	sgrBold    = "\x1b[1m"
)

// lookOf is each displayed state's look; false for another word. A
// switch rather than a map: package initialisation is on every process's
// start-up path.
func lookOf(display string) (look, bool) {
	switch display {
	case "created":
		return look{"○", sgrBlue}, true
	case "starting":
		return look{"◐", sgrBlue}, true
	case "running":
		return look{"●", sgrGreen}, true
	case "waiting":
		return look{"◆", sgrWaiting}, true
	case "observed":
		return look{"◎", sgrCyan}, true
	case "completed":
		return look{"■", sgrDim}, true
	case "failed":
		return look{"✕", sgrRed}, true
	case "cancelled":
		return look{"⊘", sgrMagenta}, true
	case "lost":
		return look{"◌", sgrRed}, true
	case "unknown":
		return look{"?", sgrDim}, true
	}
	return look{}, false
}

// States lists the displayed states in the order a legend shows them.
var States = []string{"running", "waiting", "starting", "created", "observed", "unknown", "completed", "failed", "cancelled", "lost"}

// Symbol returns the symbol of a displayed state (ChildView.Display).
func Symbol(display string) string {
	if l, ok := lookOf(display); ok {
		return l.symbol
	}
	return "?"
}

// Color returns the ANSI colour of a displayed state, "" for none.
func Color(display string) string {
	l, _ := lookOf(display)
	return l.color
}
