package observe

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/observe/safefile"
)

// EnvFileLimit bounds what custody reads of a tree's .env: a larger file is
// refused, never read whole.
const EnvFileLimit = 4 << 20

// statusArgs is the one status custody trusts: every untracked file, every
// ignored path, submodules never ignored, and configuration that could hide
// state (status.showUntrackedFiles, diff.ignoreSubmodules, an fsmonitor)
// overridden on the command line.
var statusArgs = []string{"-c", "core.fsmonitor=false", "-c", "status.showUntrackedFiles=all", "-c", "diff.ignoreSubmodules=none",
	"status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all", "--ignore-submodules=none"}

// Scope says how much of a worktree to observe.
type Scope struct {
	// Status runs git status when the tree is present and registered.
	Status bool
	// Hidden observes state git status does not report (HiddenState).
	Hidden bool
	// Proof looks for a proof of HEAD against View.
	Proof bool
	View  *proof.RemoteView
	// Procs, when set, is the process scan checked for users of the tree.
	Procs *Processes
	// EnvLines holds, by record id, the exact .env lines custody wrote
	// there; a .env of only those does not count as ignored files.
	EnvLines map[string]map[string]bool
	// Disposable are the [cleanup] disposable patterns of an approved
	// custody.toml (the zero value when it is not approved).
	Disposable machine.Patterns
	// Ancestors holds heads already known to be ancestors of View's first
	// tip (observe.Ancestors over that tip), so their proof asks git
	// nothing; nil knows none.
	Ancestors map[string]bool
	// Hashes, when set, is the content hash cache content accounting
	// reads and writes (HashCache); nil reads every file.
	Hashes *HashCache
	// HeadTrees holds, by commit id, the tree id of heads plan asked git
	// about once (CommitTrees): a tree that is exactly such a HEAD is
	// observed without git status (knownClean). Nil runs status always.
	HeadTrees map[string]string
	// Proofs holds the proofs of heads asked for a whole plan at once
	// (StartProofs); a head it holds is not proved again. Nil proves each
	// head alone.
	Proofs *proof.ProofSet
}

// Worktree observes rec's worktree: lstat identity, registration (from inv),
// the admin key git holds for the path (checked both ways), the ready marker,
// the owned branch's tip and, as scope asks, status and proof. Failures are
// recorded in the observation (unknown is never clean), not returned.
func Worktree(ctx context.Context, g *hostio.Git, repo hostio.Repo, inv gitfiles.Inventory, rec machine.Record, scope Scope) machine.WorktreeObservation {
	o := worktreeLocal(ctx, g, repo, inv, rec, scope)
	if scope.Proof {
		AttachProof(ctx, g, repo, rec, &o, scope)
	}
	return o
}

// AttachProof adds to o, rec's observation made without proof (scope.Proof
// false), what Worktree with scope.Proof finds: for a tree gone already,
// whether the commit custody last knew of is published; for a present,
// registered tree, whether its HEAD is. A plan observes its trees while
// the remotes are asked, and attaches their proofs after.
func AttachProof(ctx context.Context, g *hostio.Git, repo hostio.Repo, rec machine.Record, o *machine.WorktreeObservation, scope Scope) {
	var head string
	switch {
	case machine.Vanished(*o):
		// Gone already: the settlement asks about the tip of its branch
		// when that branch holds the last known commit, else about that
		// commit (machine.VanishedHead).
		o.BranchHoldsLastKnown = branchHolds(ctx, g, repo, rec, o.BranchTip)
		head = machine.VanishedHead(rec, *o)
	case o.PathState == machine.PathAbsent && !o.Registered && !o.AdminPresent && o.MovedTo == "":
		head = rec.EffectiveHead()
	case !o.Registered || o.PathState != machine.PathPresent || o.IsSymlink:
		return
	default:
		head = o.Head
	}
	o.Remote = scope.View.Evidence()
	g, notes := g.Noting()
	p, err := proveKnowing(ctx, g, repo, head, scope)
	if err != nil {
		o.ProofErr = err.Error()
	}
	o.Proof = p
	if p == nil && machine.Vanished(*o) && head != o.BranchTip && machine.IsFullCommit(head) {
		// Looked for on every remote and not found: whether git still
		// has the commit decides what settles the record.
		_, err := g.Observe(ctx, repo.MainCheckout, "cat-file", "-e", head) // exit 1: no such object
		var exit *hostio.ExitError
		o.LastKnownMissing = errors.As(err, &exit) && exit.Code == 1 && ctx.Err() == nil
	}
	// A proof asked for the whole plan at once ran on another Git: its
	// timeout reaches this tree as the error of its proof.
	notes.Note(err)
	o.TimedOut = appendTimedOut(o.TimedOut, notes.Taken())
}

// appendTimedOut adds to have the commands of more it does not hold yet.
func appendTimedOut(have, more []machine.TimedOut) []machine.TimedOut {
	for _, t := range more {
		if !slices.Contains(have, t) {
			have = append(have, t)
		}
	}
	return have
}

// branchHolds reports whether tip, the tip of rec's branch, has rec's last
// known commit as an ancestor (or is it). An answer git cannot give is no.
func branchHolds(ctx context.Context, g *hostio.Git, repo hostio.Repo, rec machine.Record, tip string) bool {
	k := rec.EffectiveHead()
	if tip == "" || !machine.IsFullCommit(k) {
		return false
	}
	if tip == k {
		return true
	}
	ok, err := proof.IsAncestor(ctx, g, repo, k, tip)
	return err == nil && ok
}

// worktreeLocal is Worktree without the proof: everything read from the
// tree, its admin entry and the registry. A command that runs out of time
// on the way is in the observation's TimedOut, whatever became of its
// error.
func worktreeLocal(ctx context.Context, g *hostio.Git, repo hostio.Repo, inv gitfiles.Inventory, rec machine.Record, scope Scope) machine.WorktreeObservation {
	g, notes := g.Noting()
	o := observeLocal(ctx, g, repo, inv, rec, scope)
	o.TimedOut = notes.Taken()
	return o
}

// observeLocal is worktreeLocal before the commands that timed out are
// added.
func observeLocal(ctx context.Context, g *hostio.Git, repo hostio.Repo, inv gitfiles.Inventory, rec machine.Record, scope Scope) machine.WorktreeObservation {
	o := machine.WorktreeObservation{Path: rec.Path}
	pi := hostio.Lstat(rec.Path)
	o.PathState, o.PathError, o.IsDir, o.IsSymlink, o.Dev, o.Ino = pi.State, pi.Err, pi.IsDir, pi.IsSymlink, pi.Dev, pi.Ino
	if e, ok := inv.Entry(rec.Path); ok {
		o.Registered = true
		o.Head = e.Head
		o.Branch = strings.TrimPrefix(e.Branch, "refs/heads/")
		o.Detached = e.Detached
		o.Locked, o.LockReason = e.Locked, e.LockReason
		o.Prunable = e.Prunable
	}
	key := rec.AdminKeyOrID()
	if o.PathState == machine.PathPresent && !o.IsSymlink {
		o.AdminKey = gitfiles.AdminKeyOf(repo, rec.Path)
	}
	o.OtherEntries = inv.OtherEntries(rec.Path, key, o.AdminKey, o.PathState == machine.PathPresent && !o.IsSymlink, hostio.Identity{Dev: o.Dev, Ino: o.Ino}, scope.Status)
	if !o.Registered {
		for _, e := range inv.Entries[min(1, len(inv.Entries)):] {
			if e.Path != rec.Path && gitfiles.AdminKeyOf(repo, e.Path) == key {
				o.MovedTo = e.Path
			}
		}
	}
	o.AdminPresent = hostio.Lstat(repo.AdminDir(key)).State != machine.PathAbsent
	if b, err := safefile.Read(filepath.Join(repo.AdminDir(key), gitfiles.MarkerName), gitfiles.SmallFileLimit); err == nil {
		o.Marker = strings.TrimSpace(string(b))
	}
	if o.PathState == machine.PathAbsent && o.Marker != "" && o.Marker != rec.ID {
		// The admin entry holds another record's marker: git gave the key
		// of this gone tree to a tree custody recorded since. It is not
		// this tree moved, and not this tree's entry.
		o.MovedTo, o.AdminPresent = "", false
	}
	if rec.Branch != "" {
		o.BranchTip = inv.Branches[rec.Branch]
	}
	if !o.Registered || o.PathState != machine.PathPresent || o.IsSymlink {
		return o
	}
	idx, known := knownClean(ctx, g, repo, rec.Path, o.AdminKey, o.Head, scope, &o)
	ents := idx.Ents
	if known {
		// Status is known to be empty, and the tree was observed.
	} else if scope.Status && o.AdminKey == "" {
		// git run in a tree whose .git does not lead back to its admin
		// entry (deleted, or naming another repository) would find the
		// repository around it and report that one's files as the tree's.
		o.StatusErr = filepath.Join(rec.Path, ".git") + " does not lead to the tree's admin entry (it is missing, or names another repository), so git cannot observe the tree"
	} else if scope.Status {
		out, err := g.Observe(ctx, rec.Path, statusArgs...)
		if err != nil {
			o.StatusErr = err.Error()
		} else if st, err := ParseStatus(out); err != nil {
			o.StatusErr = err.Error()
		} else {
			o.Status = st
			o.Status.Ignored, o.EnvOwn = dropOwnEnv(rec.Path, st.Ignored, scope.EnvLines[rec.ID])
		}
	}
	if scope.Status && o.StatusErr == "" && !known {
		var lsErr error
		if ents == nil {
			ents, lsErr = ReadIndex(ctx, g, repo, rec.Path, o.AdminKey)
		}
		o.Hidden = append(o.Hidden, gitfiles.StaleIndexView(rec.Path, idx, ents, o.Status, scope.HeadTrees[o.Head])...)
		if !scope.Hidden {
			o.Content, o.Discarded = ContentCached(rec.Path, scope.Hashes, o.AdminKey, o.Status, o.EnvOwn, false, ents, lsErr, scope.Disposable)
		} else {
			// One walk of the tree serves content accounting and the
			// nested .git search of the hidden-state check.
			var nested func(string, []string) []machine.Hidden
			o.Content, o.Discarded, nested = contentAndNested(rec.Path, scope.Hashes, o.AdminKey, o.Status, o.EnvOwn, ents, lsErr, scope.Disposable)
			o.Hidden = append(o.Hidden, hiddenStateWith(ctx, g, repo, rec.Path, o.AdminKey, o.Status, ents, lsErr, nested)...)
		}
	}
	if scope.Procs != nil {
		ps, err := scope.Procs.Inside(rec.Path)
		if err != nil {
			o.Hidden = append(o.Hidden, machine.Hidden{Code: machine.CodeInUse, Path: rec.Path, Detail: err.Error()})
		}
		o.InUse = ps
	}
	return o
}

// dropOwnEnv removes ".env" from the ignored paths when the file holds
// nothing but lines custody wrote there (own, exactly) and blank lines: it is
// custody's own state and does not keep an otherwise removable tree. Any
// other line is the user's and keeps it.
func dropOwnEnv(dir string, ignored []string, own map[string]bool) ([]string, bool) {
	i := slices.Index(ignored, ".env")
	if i < 0 || len(own) == 0 {
		return ignored, false
	}
	b, err := safefile.Read(filepath.Join(dir, ".env"), EnvFileLimit)
	if err != nil {
		return ignored, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" && !own[l] {
			return ignored, false
		}
	}
	return slices.Delete(slices.Clone(ignored), i, i+1), true
}
