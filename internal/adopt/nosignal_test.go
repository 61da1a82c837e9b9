package adopt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden names every way Go code could send a signal or run something
// that does: calls, system call numbers, raw system calls, process
// handles, and packages that start processes or reach past the type
// system.
var forbidden = map[string]bool{
	"Kill": true, "Killpg": true, "Signal": true, "Tgkill": true, "Tkill": true,
	"PidfdSendSignal": true, "PidFDSendSignal": true, "Sigqueue": true, "SendSignal": true,
	"Terminate": true, "Suspend": true, "Resume": true,
	"SYS_KILL": true, "SYS_TKILL": true, "SYS_TGKILL": true, "SYS_PIDFD_SEND_SIGNAL": true,
	"SYS_RT_SIGQUEUEINFO": true, "SYS_RT_TGSIGQUEUEINFO": true,
	"Syscall": true, "Syscall6": true, "RawSyscall": true, "RawSyscall6": true,
	"SyscallNoError": true, "RawSyscallNoError": true,
	"FindProcess": true, "StartProcess": true, "ForkExec": true, "Exec": true,
}

var forbiddenImports = map[string]bool{
	"os/exec": true, "os/signal": true, "unsafe": true,
	"github.com/shirou/gopsutil/v4/process": true,
}

// signalCode lists where src could signal a process.
func signalCode(fset *token.FileSet, f *ast.File) []string {
	var found []string
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); forbiddenImports[path] {
			found = append(found, fset.Position(imp.Pos()).String()+": imports "+path)
		}
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				found = append(found, fset.Position(c.Pos()).String()+": go:linkname")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && forbidden[id.Name] {
			found = append(found, fset.Position(id.Pos()).String()+": "+id.Name)
		}
		return true
	})
	return found
}

// The adopt package holds no code that can send a signal.
func TestNoSignalCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, where := range signalCode(fset, f) {
			t.Errorf("adopt must never signal: %s", where)
		}
		scanned++
	}
	if scanned < 2 { // adopt.go and doc.go (pidfds are internal/pidfd's; calling Signal on one is caught above)
		t.Fatalf("scanned %d source files; the package has more", scanned)
	}
}

// The scanner finds each way in.
func TestNoSignalCodeFinds(t *testing.T) {
	src := `package x
import (
	"os"
	"os/exec"
	"syscall"
	"golang.org/x/sys/unix"
)
//go:linkname kill syscall.kill
func f(p *os.Process, fd int) {
	p.Signal(os.Interrupt)
	p.Kill()
	syscall.Kill(1, 9)
	unix.PidfdSendSignal(fd, 9, nil, 0)
	unix.Syscall(unix.SYS_KILL, 1, 9, 0)
	unix.Tgkill(1, 1, 9)
	exec.Command("kill", "1").Run()
	os.FindProcess(1)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(signalCode(fset, f), "\n")
	for _, want := range []string{"imports os/exec", "go:linkname", "Signal", "Kill", "PidfdSendSignal", "Syscall", "SYS_KILL", "Tgkill", "FindProcess"} {
		if !strings.Contains(got, want) {
			t.Errorf("scanner missed %s; found:\n%s", want, got)
		}
	}
}
