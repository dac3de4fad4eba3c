package observe

import (
	"github.com/custody-sh/custody/observe/hostio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcScanner reads every process's cwd, root, executable and open files
// from a Linux proc file system.
type ProcScanner struct {
	// Root is where the proc file system is mounted ("" is /proc). Tests
	// point it at a fake tree.
	Root string
}

// Scan reads the proc file system once. Processes that vanish during the
// scan are skipped; processes whose links cannot be read (another user's)
// are skipped too, since custody cannot act on what it cannot see. The
// calling process is left out, and so are other processes of the same
// custody binary and their children (the git commands custody itself runs
// in a tree are not its users).
//
// A proc file system that cannot be listed, or that has no entry for the
// calling process, or whose self link names another pid (not mounted,
// another pid namespace's, or one that hides processes), is unknown: Err is set and every tree is refused as in use,
// never reported as having nobody inside.
func (s ProcScanner) Scan() *Processes {
	root := s.Root
	if root == "" {
		root = "/proc"
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return &Processes{Err: "processes cannot be observed on this system: " + err.Error()}
	}
	self := os.Getpid()
	stats := map[int]hostio.ProcStat{}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if b, err := os.ReadFile(filepath.Join(root, e.Name(), "stat")); err == nil {
				if st, err := hostio.ParseProcStat(b); err == nil {
					stats[pid] = st
				}
			}
		}
	}
	// The kernel answers <root>/self with the caller's pid as the mount's
	// pid namespace numbers it: another number (or none) is another
	// namespace's listing, whose pids are not ours.
	me, _ := os.Readlink(filepath.Join(root, "self"))
	if _, ok := stats[self]; !ok || me != strconv.Itoa(self) {
		return &Processes{Err: "processes cannot be observed on this system: " + root + " has no readable entry for custody's own process " +
			strconv.Itoa(self) + " (it is not mounted, belongs to another pid namespace, or hides processes), so who uses a tree is unknown"}
	}
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	isCustody := func(pid int) bool {
		t, err := os.Readlink(filepath.Join(root, strconv.Itoa(pid), "exe"))
		return err == nil && exe != "" && cleanProcLink(t) == exe
	}
	p := &Processes{}
	for pid, st := range stats {
		if pid == self || st.PPID == self || isCustody(pid) || isCustody(st.PPID) {
			continue
		}
		base := filepath.Join(root, strconv.Itoa(pid))
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
