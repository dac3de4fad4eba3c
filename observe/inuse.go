package observe

import (
	"errors"
	"os"
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
	// Err is set when processes could not be observed at all (no /proc,
	// no lsof, an unsupported system): every tree is then refused as in
	// use, unknown never being idle.
	Err string
}

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
