package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/store"
)

// Env is what every workflow needs, built once per command by
// custody.NewEnv (steps/custody), for cmd/custody and for programs that
// embed custody.
type Env struct {
	Repo   hostio.Repo
	Git    *hostio.Git
	Store  *store.Store
	Policy machine.Policy
	// Config is the project configuration (custody.toml).
	Config machine.Config
	// ConfigSource is where Config was read from and the digest of its
	// bytes; RequireTrusted checks that digest against the approvals.
	ConfigSource observe.ConfigSource
	// Root is the managed worktree root (canonical).
	Root string
	// Now is the injected clock.
	Now func() time.Time
	// Actor names who acts, for the journal.
	Actor string
	// Holder identifies this process in intents.
	Holder machine.Holder
	// Wait bounds how long apply waits for another live process's intent.
	Wait time.Duration
	// Progress receives progress reports; nil means none.
	Progress Progress
	// Processes scans every process for the in-use checks (a tree a
	// process stands in or holds a file of is in use, and kept); nil is
	// observe.ScanProcesses, the system's processes. A program that
	// embeds custody may give its own scan (steps/custody).
	Processes func() *observe.Processes
	// Workflows are the kinds resume settles, in order; nil means
	// DefaultWorkflows. custody.Register (steps/custody) registers every
	// feature's kind here.
	Workflows []Resumer
	// Resources is the resource feature the worktree lifecycle provisions
	// and tears down through (package steps/resource, registered by
	// custody.Register); nil refuses whatever would need it.
	Resources Resources
	// Archives is the archive feature removal asks for proof kind archive
	// (package steps/archive, registered by custody.Register); nil proves
	// nothing by archive.
	Archives Archives
	// Unwritable, when set, says why the repository cannot be written (a
	// read-only file system), for a command that only reads: what it
	// would write as derived data (the content hash cache) it then does
	// without. A command that writes never runs with it set.
	Unwritable error
	// Requesters are the processes that asked for this command's work on
	// one tree (an agent's hook ending its own tree: the hook's shell and
	// the agent, observe.RequesterChain); where they stand inside that
	// tree is not a use of it. Empty for every other command.
	Requesters observe.Requesters
	// UserLedger is the directory of the user-level ledger of resources
	// ($XDG_STATE_HOME/custody/resources): every ledger entry's frozen
	// destroy is mirrored there before its create runs and removed once
	// its destroy is settled, so it outlives the repository (decision
	// 0256). Empty when there is no state home: nothing is mirrored.
	UserLedger string
}

// ScanProcesses scans every process for the in-use checks, with the
// working directories of e.Requesters excused.
func (e *Env) ScanProcesses() *observe.Processes {
	return e.scanAll().Excusing(e.Requesters)
}

// scanAll scans every process through e.Processes, else the system's.
func (e *Env) scanAll() *observe.Processes {
	if e.Processes != nil {
		return e.Processes()
	}
	return observe.ScanProcesses()
}

// Progress receives reports of long work. Implementations must be cheap.
type Progress interface {
	Step(done, total int, what string)
}

func (e *Env) progress(done, total int, what string) {
	if e.Progress != nil {
		e.Progress.Step(done, total, what)
	}
}

// DefaultRoot returns the managed root of repo: <main-checkout>/.worktrees.
func DefaultRoot(repo hostio.Repo) string { return filepath.Join(repo.MainCheckout, ".worktrees") }

// ResolveRoot returns the managed root: raw ("" for the default) relative to
// the main checkout, canonicalized through its nearest existing ancestor.
// An ancestor that is a symlink (so the root would resolve elsewhere than it
// reads) or a '..' component is refused, and so is a root in the main
// checkout whose name holds a newline (no exclude line can name it).
func ResolveRoot(repo hostio.Repo, raw string) (string, error) {
	root := DefaultRoot(repo)
	if raw != "" {
		root = raw
		if !filepath.IsAbs(root) {
			root = filepath.Join(repo.MainCheckout, raw)
		}
	}
	root = filepath.Clean(root)
	existing, rest := root, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", machine.RootUnresolvedRefusal(root, err)
	}
	if real != existing {
		return "", machine.RootUnderSymlinkRefusal(root, existing, real)
	}
	root = filepath.Join(real, rest)
	if rel, ok := belowCheckout(repo, root); ok {
		if _, ok := machine.IgnorePattern(filepath.ToSlash(rel)); !ok {
			return "", machine.RootNotExcludableRefusal(root)
		}
	}
	return root, nil
}

// belowCheckout is root relative to repo's main checkout, when root lies
// below it (a directory named "..x" there does).
func belowCheckout(repo hostio.Repo, root string) (string, bool) {
	rel, err := filepath.Rel(repo.MainCheckout, root)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// StatePath returns the state file of repo.
func StatePath(repo hostio.Repo) string { return filepath.Join(repo.StateDir(), store.FileName) }

// ObserveRecord observes rec with a fresh inventory: the tree's own registry
// entry read from its admin files in the plain case, git's registry
// otherwise (gitfiles.TakeTreeInventory), so one tree's observation costs
// what the tree holds, not what the repository does.
func (e *Env) ObserveRecord(ctx context.Context, rec machine.Record, scope observe.Scope) (machine.WorktreeObservation, gitfiles.Inventory, error) {
	key := rec.AdminKeyOrID()
	inv, err := gitfiles.TakeTreeInventory(ctx, e.Git, e.Repo, rec.Path, key, rec.Branch)
	if err != nil {
		return machine.WorktreeObservation{}, inv, err
	}
	obs := observe.Worktree(ctx, e.Git, e.Repo, inv, rec, scope)
	leases, err := e.Store.Leases()
	if err != nil {
		return obs, inv, err
	}
	obs.Lease = leases[rec.ID]
	return obs, inv, nil
}

// ExcludeRoot adds the managed root to <common>/info/exclude (never to a
// tracked file) when it lies inside the main checkout. It reports whether
// it added the line.
func (e *Env) ExcludeRoot() (bool, error) {
	rel, ok := belowCheckout(e.Repo, e.Root)
	if !ok {
		return false, nil // outside the checkout: nothing to exclude
	}
	line, ok := machine.IgnorePattern(filepath.ToSlash(rel))
	if !ok {
		return false, machine.RootNotExcludableRefusal(e.Root)
	}
	return AppendExclude(e.Repo.CommonDir, line, "custody's managed worktrees")
}

// EnsureRoot makes the managed root if needed and refuses one that is a
// symlink or not a directory.
func (e *Env) EnsureRoot() error {
	fi, err := os.Lstat(e.Root)
	if err == nil {
		if fi.Mode()&os.ModeSymlink != 0 || !fi.IsDir() {
			return machine.RootNotDirectoryRefusal(e.Root)
		}
		return nil
	}
	if !os.IsNotExist(err) {
		return fmt.Errorf("managed root %s: %w", e.Root, err)
	}
	return os.MkdirAll(e.Root, 0o755)
}
