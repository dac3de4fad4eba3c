package observe

import (
	"context"
	"github.com/custody-sh/custody/observe/hostio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LsofScanner reads every process's cwd, root, program text and open
// files from `lsof -F` (used where there is no proc file system, as on
// darwin).
type LsofScanner struct {
	// Program is the lsof to run ("" is lsof on PATH).
	Program string
	// Runner runs it (nil: a Runner bounded by LsofDeadline).
	Runner *hostio.Runner
}

// LsofDeadline bounds one lsof run when the scanner's Runner does not.
const LsofDeadline = 2 * time.Minute

// lsofArgs are the arguments the scanner passes to lsof: no warnings, no
// host or port names, full command names, and the fields ParseLsof reads.
var lsofArgs = []string{"-w", "-n", "-P", "+c", "0", LsofFields}

// Scan runs lsof once over every process and reads what each one holds,
// leaving out the calling process, its children, and other processes of
// the same custody binary and their children, as ProcScanner does. An lsof
// that is missing, fails, prints what ParseLsof refuses, or does not list
// the calling process leaves Err set: who uses a tree is then unknown,
// never nobody.
func (s LsofScanner) Scan(ctx context.Context) *Processes {
	prog := s.Program
	if prog == "" {
		prog = "lsof"
	}
	r := s.Runner
	if r == nil {
		r = &hostio.Runner{Deadline: LsofDeadline}
	}
	if _, err := exec.LookPath(prog); err != nil {
		return &Processes{Err: "processes cannot be observed on this system: custody reads them with lsof, and " + prog +
			" cannot be run (" + err.Error() + "); install lsof, then plan again"}
	}
	res, err := r.Run(ctx, hostio.Cmd{Args: append([]string{prog}, lsofArgs...)})
	if err != nil {
		return &Processes{Err: "processes cannot be observed on this system: " + err.Error()}
	}
	procs, err := ParseLsof(res.Stdout)
	if err != nil {
		return &Processes{Err: "processes cannot be observed on this system: " + prog + " printed what custody cannot read: " + err.Error()}
	}
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return lsofUses(procs, os.Getpid(), exe)
}

// lsofUses turns lsof's process sets into the uses Inside looks through,
// leaving out self, its children, and the processes whose program is exe
// (and their children). A listing without self is unknown.
func lsofUses(procs []LsofProcess, self int, exe string) *Processes {
	program := map[int]string{}
	found := false
	for _, p := range procs {
		found = found || p.PID == self
		for _, f := range p.Files {
			if f.FD == "txt" {
				program[p.PID] = cleanProcLink(f.Name)
				break
			}
		}
	}
	if !found {
		return &Processes{Err: "processes cannot be observed on this system: lsof did not list custody's own process " +
			strconv.Itoa(self) + ", so who uses a tree is unknown"}
	}
	isCustody := func(pid int) bool { return exe != "" && program[pid] == exe }
	out := &Processes{}
	for _, p := range procs {
		if p.PID == self || p.PPID == self || isCustody(p.PID) || isCustody(p.PPID) {
			continue
		}
		text := 0
		for _, f := range p.Files {
			via := lsofVia(f.FD)
			if f.FD == "txt" {
				if text++; text > 1 {
					via = "program text" // a library: the first is the executable
				}
			}
			if !strings.HasPrefix(f.Name, "/") {
				continue // a socket, pipe or comment: no path
			}
			out.uses = append(out.uses, procUse{PID: p.PID, Command: p.Command, Via: via, Path: cleanProcLink(f.Name)})
		}
	}
	return out
}

// lsofVia names how a process holds a file, in the words ProcScanner uses.
func lsofVia(fd string) string {
	switch fd {
	case "cwd":
		return "cwd"
	case "rtd":
		return "root"
	case "txt":
		return "exe"
	case "mem":
		return "mapped file"
	}
	if _, err := strconv.Atoi(fd); err == nil {
		return "open file " + fd
	}
	return "file " + fd
}
