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

var looks = map[string]look{
	"created":   {"○", sgrBlue},
	"starting":  {"◐", sgrBlue},
	"running":   {"●", sgrGreen},
	"waiting":   {"◆", sgrWaiting},
	"observed":  {"◎", sgrCyan},
	"completed": {"■", sgrDim},
	"failed":    {"✕", sgrRed},
	"cancelled": {"⊘", sgrMagenta},
	"lost":      {"◌", sgrRed},
	"unknown":   {"?", sgrDim},
}

// States lists the displayed states in the order a legend shows them.
var States = []string{"running", "waiting", "starting", "created", "observed", "unknown", "completed", "failed", "cancelled", "lost"}

// Symbol returns the symbol of a displayed state (ChildView.Display).
func Symbol(display string) string {
	if l, ok := looks[display]; ok {
		return l.symbol
	}
	return "?"
}

// Color returns the ANSI colour of a displayed state, "" for none.
func Color(display string) string { return looks[display].color }
