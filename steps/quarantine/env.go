package quarantine

import (
	"context"
	"io/fs"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// Env is what a quarantine needs of the command that removes a tree: the
// repository and its git, and three things the steps core supplies
// (steps.Env.QuarantineEnv) so this layer imports nothing of steps/.
type Env struct {
	Repo hostio.Repo
	Git  *hostio.Git
	// Disposable returns the approved [cleanup] disposable patterns, read
	// again each time (steps.Env.Disposable).
	Disposable func() (machine.Patterns, error)
	// Contents lists what a tree removed on the archive proof p may hold
	// (the registered archive feature, steps.Archives).
	Contents func(ctx context.Context, p *machine.Proof) (Manifest, error)
	// WriteFile writes a file durably (steps.WriteFile).
	WriteFile func(path string, data []byte, perm fs.FileMode) error
	// Processes scans every process for the in-use check of a quarantine
	// (steps.Env.ScanProcesses); nil is observe.ScanProcesses.
	Processes func() *observe.Processes
}

// scanProcesses is e.Processes, or a plain scan without it.
func (e *Env) scanProcesses() *observe.Processes {
	if e.Processes != nil {
		return e.Processes()
	}
	return observe.ScanProcesses()
}

// dedupe is ids without repeats, in first-seen order.
func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
