package steps

import (
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Tree returns the record ref names (an id, a unique id prefix, a
// directory name or a path, resolved in dir as ResolveRecord does, a
// tombstoned record only when no live one fits). An unknown or ambiguous
// reference is its refusal, with retry as the command that lists what may
// be named. It only reads.
func Tree(e *Env, dir, ref, retry string) (machine.Record, error) {
	id, err := ResolveRecord(e, dir, ref, retry)
	if err != nil {
		return machine.Record{}, err
	}
	return e.Store.Get(id)
}

// SwitchTree is Tree for a shell about to change into the tree: it
// observes the tree's path now and returns machine.SwitchBlock's refusal
// unless a directory is there. It only reads.
func SwitchTree(e *Env, dir, ref string) (machine.Record, error) {
	rec, err := Tree(e, dir, ref, "custody list")
	if err != nil {
		return rec, err
	}
	pi := hostio.Lstat(rec.Path)
	if r := machine.SwitchBlock(rec, pi.State, pi.IsDir, pi.IsSymlink, pi.Err); r != nil {
		return rec, r
	}
	return rec, nil
}

// RecordIDs returns the ids of the worktree records, sorted: the live
// ones, and the tombstoned ones too when all is set. It only reads
// (shell completion offers them).
func RecordIDs(e *Env, all bool) ([]string, error) {
	recs, err := e.Store.List()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		if all || r.State != machine.StateTombstoned {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
