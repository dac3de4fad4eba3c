package observe

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// procUse is one path a process holds: its cwd, root, executable or an
// open file.
type procUse struct {
	PID     int
	Command string
	Via     string
	Path    string
}

// Processes is one scan of every process's cwd, root, executable and open
// files, shared by the observations of one command.
type Processes struct {
	uses []procUse
	// Err is set when processes could not be observed at all (no /proc):
	// every tree is then refused as in use, unknown never being idle.
	Err string
}

// ScanProcesses reads /proc once. Processes that vanish during the scan are
// skipped; processes whose links cannot be read (another user's) are
// skipped too, since custody cannot act on what it cannot see. The calling
// process is left out, and so are other processes of the same custody
// binary and their children (the git commands custody itself runs in a
// tree are not its users).
func ScanProcesses() *Processes {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return &Processes{Err: "processes cannot be observed on this system: " + err.Error()}
	}
	self := os.Getpid()
	stats := map[int]ProcStat{}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
				if st, err := ParseProcStat(b); err == nil {
					stats[pid] = st
				}
			}
		}
	}
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	isCustody := func(pid int) bool {
		t, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		return err == nil && exe != "" && cleanProcLink(t) == exe
	}
	p := &Processes{}
	for pid, st := range stats {
		if pid == self || st.PPID == self || isCustody(pid) || isCustody(st.PPID) {
			continue
		}
		base := filepath.Join("/proc", strconv.Itoa(pid))
		cmd := st.Command
		for _, via := range []string{"cwd", "root", "exe"} {
			if t, err := os.Readlink(filepath.Join(base, via)); err == nil {
				p.uses = append(p.uses, procUse{PID: pid, Command: cmd, Via: via, Path: cleanProcLink(t)})
			}
		}
		fds, err := os.ReadDir(filepath.Join(base, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if t, err := os.Readlink(filepath.Join(base, "fd", fd.Name())); err == nil && strings.HasPrefix(t, "/") {
				p.uses = append(p.uses, procUse{PID: pid, Command: cmd, Via: "open file " + fd.Name(), Path: cleanProcLink(t)})
			}
		}
	}
	return p
}

// cleanProcLink drops the " (deleted)" suffix the kernel adds.
func cleanProcLink(t string) string { return strings.TrimSuffix(t, " (deleted)") }

// Inside returns the processes using dir or anything below it, one entry per
// process (its first use found). A root "/" process is not inside a tree
// unless its root is the tree itself.
func (p *Processes) Inside(dir string) ([]machine.Process, error) {
	if p == nil {
		return nil, nil
	}
	if p.Err != "" {
		return nil, errors.New(p.Err)
	}
	seen := map[int]bool{}
	var out []machine.Process
	for _, u := range p.uses {
		if seen[u.PID] || !within(u.Path, dir) {
			continue
		}
		seen[u.PID] = true
		out = append(out, machine.Process{PID: u.PID, Command: u.Command, Via: u.Via})
	}
	return out, nil
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(os.PathSeparator))
}
