package observe

import (
	"slices"
	"strings"
)

// Requesters are the processes that asked for this command's work on one
// tree: custody's parent and the ancestors above it, from the parent up,
// for as long as each one's working directory is inside that tree. For an
// agent's hook that ends its own tree they are the shell the agent ran the
// hook command in and the agent itself (a hook that execs custody has only
// the agent); the first ancestor standing outside the tree (the person's
// shell that started the agent, a terminal, init) ends the chain, and
// nothing above it is excused.
//
// A requester is excused only for where it stands: its working directory,
// and a handle it holds open on that very directory (fish keeps one on
// the directory it is in). Its root, its executable and every other file
// it holds open inside the tree still make the tree in use, and every
// process that is not a requester (a server the agent started, another
// session, a person's shell) counts as it always does.
type Requesters struct {
	chain []int
}

// PIDs lists the requesters' process ids, custody's parent first.
func (r Requesters) PIDs() []int { return append([]int(nil), r.chain...) }

// Has reports whether pid is a requester.
func (r Requesters) Has(pid int) bool { return slices.Contains(r.chain, pid) }

// Excusing returns the scan without the working directories of the
// requesters r, and without a requester's open handle on exactly the
// directory it stands in; everything else of the scan is kept. The
// receiver is not changed.
func (p *Processes) Excusing(r Requesters) *Processes {
	if p == nil || len(r.chain) == 0 {
		return p
	}
	cwd := map[int]string{}
	for _, u := range p.uses {
		if u.Via == "cwd" && r.Has(u.PID) {
			cwd[u.PID] = u.Path
		}
	}
	out := &Processes{Err: p.Err, uses: make([]procUse, 0, len(p.uses))}
	for _, u := range p.uses {
		if !r.Has(u.PID) {
			out.uses = append(out.uses, u)
			continue
		}
		if where, ok := cwd[u.PID]; u.Via == "cwd" || ok && strings.HasPrefix(u.Via, "open file ") && u.Path == where {
			continue
		}
		out.uses = append(out.uses, u)
	}
	return out
}
