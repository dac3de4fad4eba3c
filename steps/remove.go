package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/steps/quarantine"
	"github.com/custody-sh/custody/store"
)

// fullScope observes status and proof against a fresh advertisement.
func (e *Env) fullScope(ctx context.Context) (observe.Scope, error) {
	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return observe.Scope{}, err
	}
	return e.AssessScope(view)
}

// AssessScope is everything an assessment observes: status, hidden state,
// proof against view, processes in use, and custody's own .env lines.
func (e *Env) AssessScope(view *proof.RemoteView) (observe.Scope, error) {
	env, err := e.envLines()
	if err != nil {
		return observe.Scope{}, err
	}
	disposable, err := e.Disposable()
	if err != nil {
		return observe.Scope{}, err
	}
	return observe.Scope{Status: true, Hidden: true, Proof: true, View: view, Procs: e.ScanProcesses(), EnvLines: env, Disposable: disposable,
		Hashes: e.hashCache()}, nil
}

// hashCache is the repository's content hash cache, read-only when the
// repository cannot be written (Env.Unwritable): its entries still spare
// reads, and nothing is saved.
func (e *Env) hashCache() *observe.HashCache {
	c := observe.NewHashCache(e.Repo)
	c.ReadOnly = e.Unwritable != nil
	return c
}

// asFinished is rec as plan assessed it: finished and carrying no intent.
func asFinished(rec machine.Record) machine.Record {
	rec.State = machine.StateFinished
	rec.Intent = nil
	return rec
}

// carryOutRemoval takes a removing record from its final observation to its
// end: the observation is repeated now, must still equal the intent's
// fingerprint and still hold a proof; only then is the tree moved into its
// quarantine and deleted there against its manifest. If the tree no longer
// permits removal and nothing was removed, the record retreats to finished.
// It is idempotent.
func carryOutRemoval(ctx context.Context, e *Env, rec machine.Record) (Outcome, error) {
	return carryOutRemovalAgainst(ctx, e, rec, nil, nil, nil)
}

// carryOutRemovalAgainst is carryOutRemoval proving against view, the
// advertisement this command already fetched (nil: fetch one now), with
// the heads known to be ancestors of its first tip (observe.Ancestors) and
// the tree ids of commits (quarantine.CommitTrees, nil: none known). Apply asks the
// remotes and the trees once for all its items; the repeated observation
// is still fresh for everything in the tree.
func carryOutRemovalAgainst(ctx context.Context, e *Env, rec machine.Record, view *proof.RemoteView, known map[string]bool, trees map[string]string) (Outcome, error) {
	var scope observe.Scope
	var err error
	if view == nil {
		scope, err = e.fullScope(ctx)
	} else {
		scope, err = e.AssessScope(view)
		scope.Ancestors = known
	}
	if err != nil {
		return Outcome{}, err
	}
	return carryOutRemovalIn(ctx, e, rec, scope, trees, false)
}

// carryOutRemovalIn is carryOutRemoval observing in scope, which apply
// shares with the observation it made right before the intent: the same
// advertisement, ancestry, .env lines, disposable patterns and process
// scan. The scan is not fresh for the final observation; the one that
// counts is taken again after the tree is moved into quarantine, where a
// process that came since is found (quarantineInUse). The tree itself
// (status, index, every file's bytes through the content hash cache) is
// observed again now.
//
// fresh says the caller committed rec's intent a moment ago and nothing
// acted on the tree since (apply): when the final observation runs out of
// time, the record then steps back over what can be known without the
// command that did (observeForRetreat). Resume cannot say so, and leaves
// the intent for a later resume.
func carryOutRemovalIn(ctx context.Context, e *Env, rec machine.Record, scope observe.Scope, trees map[string]string, fresh bool) (Outcome, error) {
	in := rec.Intent
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return Outcome{}, err
	}
	if obs.PathState == machine.PathAbsent {
		return settleRemoval(ctx, e, rec)
	}
	// The ids preserveWhatDies asked git about, so that settling, which
	// keeps what the admin entry holds once more right before it is
	// dropped, asks only about what came since.
	seen := map[string]bool{}
	v := e.Assess(ctx, asFinished(rec), obs, scope.View, e.Now())
	var why *machine.Refusal
	switch {
	case len(obs.TimedOut) > 0:
		why = v.Primary() // observation-timed-out, named first
	case machine.Fingerprint(obs) != in.Fingerprint:
		why = machine.StaleRefusal(rec, obs, in.Commit)
	case v.Action != machine.ActionRemove:
		why = v.Primary()
	case !v.Proof.Covers(in.Commit):
		why = machine.ProofGoneRefusal(rec.Path, in.Commit)
	}
	if why == nil {
		why = removalTargetRefusal(e, rec, obs)
	}
	var recovered []RecoveredRef
	if why == nil {
		if recovered, why, err = preserveWhatDies(ctx, e, rec, seen); err != nil {
			return Outcome{}, err
		}
	}
	if why != nil {
		retreat := obs
		if len(obs.TimedOut) > 0 {
			if !fresh {
				// Whether an earlier run removed part of the tree is
				// what the command that ran out of time would have
				// said: the intent stays, for a resume that can see.
				r := machine.TimedOutRefusal(rec.Path, obs.TimedOut[0], "resume")
				return refusedOutcome(rec.ID, &r, rec.State), nil
			}
			if retreat, err = observeForRetreat(ctx, e, rec); err != nil {
				return Outcome{}, err
			}
		}
		_, err := e.fire(ctx, rec, machine.TriggerRetreat, machine.Firing{Obs: retreat}, "retreat: "+string(why.Code))
		var guard *machine.Refusal
		if errors.As(err, &guard) && len(obs.Status.Deleted) > 0 {
			// Part of the tree is already gone (an interrupted removal):
			// custody neither steps back over it nor removes more.
			return Outcome{ID: rec.ID, Outcome: machine.OutcomeRefused, State: rec.State,
				Refusal: machine.PartlyRemovedRefusal(rec.Path, obs.Status.Deleted, why.Message)}, nil
		}
		if err != nil {
			return Outcome{}, err
		}
		return refusedOutcome(rec.ID, why, machine.StateFinished), nil
	}
	if in.Quarantine != "" {
		key := in.AdminKey
		if key == "" {
			key = rec.AdminKey
		}
		ref, err := quarantine.Remove(ctx, e.quarantineEnv(), rec, obs, quarantine.HeadTree{AdminKey: key, Trees: trees})
		if err != nil {
			return Outcome{}, err
		}
		failpoint.At("apply/after-remove")
		failpoint.Pause("apply/after-remove")
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitfiles.RegistryTimeout)
		defer cancel()
		if ref != nil {
			return quarantineRefused(ctx, e, rec, ref)
		}
		out, err := settleRemovalSeen(ctx, e, rec, seen)
		out.Recovered = append(recovered, out.Recovered...)
		return out, err
	}
	// An intent written before removals went through quarantine.
	_, rmErr := gitfiles.ChangeRegistry(ctx, e.Git, e.Repo, "worktree", "remove", "--", rec.Path)
	failpoint.At("apply/after-remove")
	failpoint.Pause("apply/after-remove")
	// The act is done: its verification and completion are part of it, and
	// an interrupt must not leave them for later.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitfiles.RegistryTimeout)
	defer cancel()
	if rmErr != nil {
		// git refused. If it left the tree exactly as the intent recorded,
		// nothing was removed: step back instead of retrying forever.
		again, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
		if err != nil {
			return Outcome{}, err
		}
		if _, err := e.fire(ctx, rec, machine.TriggerRetreat, machine.Firing{Obs: again}, "retreat: git worktree remove refused"); err == nil {
			return Outcome{ID: rec.ID, Outcome: machine.OutcomeRefused, State: machine.StateFinished,
				Refusal: machine.RemoveRefusedRefusal(rec.Path, rmErr)}, nil
		}
	}
	out, err := settleRemovalSeen(ctx, e, rec, seen)
	out.Recovered = append(recovered, out.Recovered...)
	if err == nil && out.Refusal != nil && rmErr != nil {
		machine.GitRemoveSaidRefusal(out.Refusal, rmErr)
	}
	return out, err
}

// removalTargetRefusal is the removal primitive's last check before git is
// asked to remove anything: never a filesystem root, the home directory, a
// path containing the main checkout or the common dir, a symlink, or a
// directory other than the one the intent recorded.
func removalTargetRefusal(e *Env, rec machine.Record, obs machine.WorktreeObservation) *machine.Refusal {
	p := filepath.Clean(rec.Path)
	home, _ := os.UserHomeDir()
	switch {
	case p == "/" || p == filepath.VolumeName(p)+string(os.PathSeparator) || !filepath.IsAbs(p):
		return machine.RemovalRootRefusal(rec.ID, p)
	case home != "" && p == filepath.Clean(home):
		return machine.RemovalHomeRefusal(rec.ID, p)
	case within(e.Repo.MainCheckout, p) || within(e.Repo.CommonDir, p):
		return machine.RemovalEnclosesRepositoryRefusal(rec.ID, p)
	case isHome(p):
		return machine.RemovalHomeIdentityRefusal(rec.ID, p)
	case identityMatch(hostio.Encloses, p, e.Repo.MainCheckout) || identityMatch(hostio.Encloses, p, e.Repo.CommonDir):
		return machine.RemovalEnclosesRepositoryIdentityRefusal(rec.ID, p)
	case obs.IsSymlink || !obs.IsDir:
		return machine.RemovalNotPlainDirectoryRefusal(rec.ID, p)
	case !readable(p):
		return machine.RemovalUnreadableRefusal(rec.ID, p)
	case obs.Dev != rec.Intent.Dev || obs.Ino != rec.Intent.Ino:
		return machine.RemovalOtherDirectoryRefusal(rec.ID, p, obs, *rec.Intent)
	}
	return nil
}

// isHome reports whether p is $HOME by device and inode (a symlink or bind
// mount of it too). An unreadable p counts as home; no readable home means
// no match.
func isHome(p string) bool {
	home, ok := hostio.HomeDir()
	if !ok {
		return false
	}
	id, err := hostio.IdentityOf(p)
	return err != nil || id == home
}

// identityMatch asks an identity question (observe.SameFile,
// hostio.Encloses) and counts an error as a match: unknown is never safe.
func identityMatch(ask func(a, b string) (bool, error), a, b string) bool {
	ok, err := ask(a, b)
	return ok || err != nil
}

// readable reports whether the directory can be opened and listed.
func readable(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == nil || errors.Is(err, io.EOF)
}

// within reports whether inner is dir itself or inside it.
func within(inner, dir string) bool {
	inner, dir = filepath.Clean(inner), filepath.Clean(dir)
	return inner == dir || strings.HasPrefix(inner, dir+string(os.PathSeparator))
}

// settleRemoval finishes a removal whose git step has run (or was never
// needed): it proves absence (lstat ENOENT and no registration), removes
// only the exact stale admin entry git may have left, settles the owned
// branch by compare-and-swap and completes the record. Another key's admin
// entry that still names the gone path is a duplicate-admin-entry refusal
// naming it, whose retry keeps its HEAD, removes it and resumes; anything
// else is a removal-failed refusal naming what was seen. Either way the
// intent stays for the retry.
func settleRemoval(ctx context.Context, e *Env, rec machine.Record) (Outcome, error) {
	return settleRemovalSeen(ctx, e, rec, nil)
}

// settleRemovalSeen is settleRemoval whose keeping of what the admin entry
// holds (preserveWhatDies, right before the entry is dropped) does not ask
// git again about the ids in seen.
func settleRemovalSeen(ctx context.Context, e *Env, rec machine.Record, seen map[string]bool) (Outcome, error) {
	var recovered []RecoveredRef
	drop := func() (*machine.Refusal, error) {
		refs, why, err := keepThenDropAdminEntry(ctx, e, rec, seen)
		recovered = append(recovered, refs...)
		return why, err
	}
	if ref, err := quarantine.Settle(ctx, e.quarantineEnv(), rec); err != nil {
		return Outcome{}, err
	} else if ref != nil {
		return quarantineRefused(ctx, e, rec, ref)
	}
	if key := rec.AdminKey; key != "" && hostio.Lstat(rec.Path).State == machine.PathAbsent &&
		hostio.Lstat(e.Repo.AdminDir(key)).State == machine.PathPresent {
		// The tree went through quarantine, behind git's back: its admin
		// entry goes first (only if it names this path), so one reading of
		// the registry verifies it all.
		if why, err := drop(); err != nil || why != nil {
			return adminKeptOutcome(rec, why, recovered, err)
		}
	}
	obs, inv, err := observeSettled(ctx, e, rec)
	if err != nil {
		return Outcome{}, err
	}
	if obs.PathState == machine.PathAbsent && (obs.Registered || obs.AdminPresent) {
		if why, err := drop(); err != nil || why != nil {
			return adminKeptOutcome(rec, why, recovered, err)
		}
		if obs, inv, err = observeSettled(ctx, e, rec); err != nil {
			return Outcome{}, err
		}
	}
	if obs.PathState == machine.PathAbsent && len(obs.OtherEntries) > 0 {
		// Another key's entry names the gone path: dropping the record's
		// own entry again would not settle it, and pruning would drop that
		// entry's HEAD. The intent stays until the person has kept it.
		r := machine.OtherEntriesRefusal(rec, obs.OtherEntries, "custody resume")
		return Outcome{ID: rec.ID, Outcome: machine.OutcomeFailed, State: rec.State, Refusal: &r}, nil
	}
	if obs.PathState != machine.PathAbsent || obs.Registered || obs.AdminPresent {
		left := ""
		if obs.PathState == machine.PathPresent {
			left = leftIn(rec.Path)
		}
		return Outcome{ID: rec.ID, Outcome: machine.OutcomeFailed, State: rec.State,
			Refusal: machine.RemovalUnfinishedRefusal(rec.Path, obs, left)}, nil
	}
	branchOutcome, reason := deleteOwnedBranch(ctx, e, rec, &inv)
	failpoint.At("apply/after-branch")
	// The tree is gone: an archive it was removed on is now the only copy.
	// Recorded while the removal intent still stands, so a run killed
	// around it settles the removal again and records it then.
	if err := e.archives().SoleCopy(ctx, e, rec); err != nil {
		return Outcome{}, err
	}
	failpoint.At("apply/before-complete")
	trigger, outcome, text := machine.TriggerRemoved, machine.OutcomeRemoved, string(machine.OutcomeRemoved)
	if s := settlementOf(rec); s != nil {
		trigger, outcome = machine.TriggerSettled, machine.OutcomeSettled
		text = settledText(rec, *s, branchOutcome, reason)
	}
	if _, err := e.fire(ctx, rec, trigger, machine.Firing{Obs: obs,
		Evidence: machine.Evidence{BranchOutcome: branchOutcome, BranchReason: reason}}, text); err != nil {
		return Outcome{}, err
	}
	dropHashCache(e, rec)
	res, err := e.resources().Teardown(ctx, e, rec.ID)
	return Outcome{ID: rec.ID, Outcome: outcome, State: machine.StateTombstoned, Resources: res,
		Branch: branchResult(rec, branchOutcome, reason), Recovered: recovered}, err
}

// adminKeptOutcome is the outcome of a removal whose tree is gone but
// whose admin entry was not dropped: err, or why (a member of the entry
// that keeps it, which appeared while the tree was being removed, or what
// could not be kept), with the recovery refs made so far. The intent
// stays: custody resume settles the removal once the person has dealt
// with the member.
func adminKeptOutcome(rec machine.Record, why *machine.Refusal, recovered []RecoveredRef, err error) (Outcome, error) {
	if err != nil {
		return Outcome{Recovered: recovered}, err
	}
	return Outcome{ID: rec.ID, Outcome: machine.OutcomeFailed, State: rec.State, Refusal: machine.AdminEntryKeptRefusal(why, rec.Path), Recovered: recovered}, nil
}

// keepThenDropAdminEntry drops rec's admin entry (dropAdminEntry) after
// keeping, once more, what dies with it (preserveWhatDies, asking git only
// about ids not in seen): a member that came while the tree was being
// removed is kept too, or keeps the entry (a refusal). An entry that is
// not rec's (another record's marker, a gitdir naming another path) is
// dropAdminEntry's to leave alone.
func keepThenDropAdminEntry(ctx context.Context, e *Env, rec machine.Record, seen map[string]bool) ([]RecoveredRef, *machine.Refusal, error) {
	var refs []RecoveredRef
	if adminEntryIsRecords(e, rec) {
		var why *machine.Refusal
		var err error
		if refs, why, err = preserveWhatDies(ctx, e, rec, seen); err != nil || why != nil {
			return refs, why, err
		}
	}
	return refs, nil, dropAdminEntry(e, rec)
}

// adminEntryIsRecords reports whether rec's admin entry is there and is
// rec's: no other record's ready marker, and a gitdir (when it can be
// read) naming rec's path.
func adminEntryIsRecords(e *Env, rec machine.Record) bool {
	key := rec.AdminKey
	if key == "" || key != filepath.Base(key) || key == "." || key == ".." {
		return false
	}
	dir := e.Repo.AdminDir(key)
	if hostio.Lstat(dir).State != machine.PathPresent {
		return false
	}
	if m, err := gitfiles.ReadMarker(e.Repo, key); err == nil && m != "" && m != rec.ID {
		return false
	}
	b, err := safefile.Read(filepath.Join(dir, "gitdir"), 64<<10)
	return err != nil || filepath.Clean(strings.TrimSpace(string(b))) == filepath.Join(rec.Path, ".git")
}

// settledText is the journal's outcome of a settlement: what was proven of
// the vanished tree's commits, and what became of its branch.
func settledText(rec machine.Record, s machine.Settlement, branchOutcome, reason string) string {
	text := "settled: " + s.Summary
	switch {
	case rec.Branch == "" || branchOutcome == machine.BranchAbsent:
		text += "; it has no branch " + rec.Branch
	case branchOutcome == machine.BranchDeleted:
		text += fmt.Sprintf("; branch %s deleted (was %s)", rec.Branch, machine.Abbrev(s.Head, machine.ShortCommit))
	default:
		text += fmt.Sprintf("; branch %s kept at %s: %s", rec.Branch, machine.Abbrev(s.BranchTip, machine.ShortCommit), reason)
	}
	return text
}

// observeSettled observes rec to verify its removal: e.ObserveRecord, except
// that a tree whose path is gone is looked up in the whole registry read
// from git's files (gitfiles.TakeRegistryInventory; git's own listing when
// any entry is not the plain case), which also says which trees have the
// owned branch checked out. A tree still there is observed as e.ObserveRecord
// does.
func observeSettled(ctx context.Context, e *Env, rec machine.Record) (machine.WorktreeObservation, gitfiles.Inventory, error) {
	if hostio.Lstat(rec.Path).State != machine.PathAbsent {
		return e.ObserveRecord(ctx, rec, observe.Scope{})
	}
	inv, err := gitfiles.TakeRegistryInventory(ctx, e.Git, e.Repo, rec.Branch)
	if err != nil {
		return machine.WorktreeObservation{}, inv, err
	}
	obs := observe.Worktree(ctx, e.Git, e.Repo, inv, rec, observe.Scope{})
	leases, err := e.Store.Leases()
	if err != nil {
		return obs, inv, err
	}
	obs.Lease = leases[rec.ID]
	return obs, inv, nil
}

// dropHashCache deletes the content hash cache file of rec's removed tree:
// nothing will read it again. A failure leaves a file nobody trusts more
// than its keys allow.
func dropHashCache(e *Env, rec machine.Record) {
	key := rec.AdminKey
	if rec.Intent != nil && rec.Intent.AdminKey != "" {
		key = rec.Intent.AdminKey
	}
	if key == "" {
		key = rec.ID
	}
	if p := observe.NewHashCache(e.Repo).CachePath(key); p != "" {
		_ = os.Remove(p)
	}
}

// quarantineRefused reports a removal that quarantine stopped: the tree is
// back at its path (or still in quarantine when its path was taken). A
// tree that is intact steps back to finished; one partly deleted keeps
// its intent and says how to restore it.
func quarantineRefused(ctx context.Context, e *Env, rec machine.Record, why *machine.Refusal) (Outcome, error) {
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{Status: true})
	if err != nil {
		return Outcome{}, err
	}
	if _, err := e.fire(ctx, rec, machine.TriggerRetreat, machine.Firing{Obs: obs}, "retreat: "+string(why.Code)); err == nil {
		return refusedOutcome(rec.ID, why, machine.StateFinished), nil
	}
	if len(obs.Status.Deleted) > 0 {
		machine.AlreadyDeletedRefusal(why, rec.Path, obs.Status.Deleted)
	}
	return Outcome{ID: rec.ID, Outcome: machine.OutcomeRefused, State: rec.State, Refusal: why}, nil
}

// dropAdminEntry removes exactly <common>/worktrees/<key> of a removed
// worktree whose path is absent, and only when its gitdir file names the
// record's path: never a repository-wide prune. An entry holding another
// record's ready marker is that record's and is left as it is.
func dropAdminEntry(e *Env, rec machine.Record) error {
	key := rec.AdminKey
	if key == "" || key != filepath.Base(key) || key == "." || key == ".." {
		return fmt.Errorf("refusing to drop admin entry %q of %s", key, rec.ID)
	}
	dir := e.Repo.AdminDir(key)
	if m, err := gitfiles.ReadMarker(e.Repo, key); err == nil && m != "" && m != rec.ID {
		// git gave the key to a tree recorded since (its marker is there):
		// the entry is that record's, and this one has none left to drop.
		return nil
	}
	b, err := safefile.Read(filepath.Join(dir, "gitdir"), 64<<10)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	if err == nil && filepath.Clean(strings.TrimSpace(string(b))) != filepath.Join(rec.Path, ".git") {
		return machine.AdminEntryElsewhereRefusal(dir, strings.TrimSpace(string(b)), rec.Path)
	}
	return os.RemoveAll(dir)
}

// deleteOwnedBranch deletes the record's branch by compare-and-swap, only if
// custody created it (machine.BranchOwned: the fact recorded at create),
// it still points at the commit the removal intent proved, and no worktree
// has it checked out.
// Otherwise the branch is kept and the reason returned. inv, when set, is
// the inventory the caller took just now (nil: take one); the delete itself
// is a compare-and-swap whatever the inventory says.
func deleteOwnedBranch(ctx context.Context, e *Env, rec machine.Record, inv *gitfiles.Inventory) (string, string) {
	if !machine.BranchOwned(rec, e.Policy) {
		return machine.BranchKept, machine.BranchNotCreated
	}
	if s := settlementOf(rec); s != nil && s.Branch != machine.SettleBranchDelete {
		// A settlement deletes the branch only when its tip is what was
		// proven; otherwise the branch may hold the only copy.
		if inv != nil {
			if _, ok := inv.Branches[rec.Branch]; !ok {
				return machine.BranchAbsent, "no such branch at completion"
			}
		}
		return machine.BranchKept, s.BranchReason
	}
	expect := provenHead(rec)
	outcome, reason := casDeleteBranchThen(ctx, e, inv, rec.Branch, expect, func() error {
		// Journaled beside the record's own history (record ""), which
		// lists only its transitions and what it kept.
		return e.Store.AppendEvent(store.Event{Kind: machine.KindWorktree, Event: EventBranchDeleting,
			At: e.Now().UTC(), Detail: branchDeleting{Record: rec.ID, Branch: rec.Branch, Commit: expect, Plan: planOf(rec)}, Actor: e.Actor})
	})
	if outcome == machine.BranchAbsent && deletedEarlier(e, rec, expect) {
		// A run killed after its compare-and-swap delete: the branch
		// went, by custody's hand.
		return machine.BranchDeleted, "deleted by an interrupted run"
	}
	return outcome, reason
}

// settlementOf is the settlement rec's intent carries (nil for a removal).
func settlementOf(rec machine.Record) *machine.Settlement {
	if rec.Intent == nil {
		return nil
	}
	return rec.Intent.Settlement
}

// EventBranchDeleting names the journal event written right before custody
// deletes an owned branch (machine.EventBranchDeleting).
const EventBranchDeleting = machine.EventBranchDeleting

// branchDeleting is the detail of an EventBranchDeleting event.
type branchDeleting = machine.BranchDeletingDetail

// planOf is the plan rec's intent came from ("" without one).
func planOf(rec machine.Record) string {
	if rec.Intent == nil {
		return ""
	}
	return rec.Intent.PlanID
}

// deletedEarlier reports whether the journal says custody was deleting
// rec's branch at expect under rec's current intent.
func deletedEarlier(e *Env, rec machine.Record, expect string) bool {
	found := false
	_ = e.Store.Journal("", func(_ []byte, en store.Entry) error {
		var d branchDeleting
		if en.Event == EventBranchDeleting && json.Unmarshal(en.Detail, &d) == nil && d.Record == rec.ID &&
			d.Branch == rec.Branch && d.Commit == expect && d.Plan == planOf(rec) {
			found = true
		}
		return nil
	})
	return found
}

// casDeleteBranch deletes refs/heads/branch only if it points at expect and
// nothing has it checked out.
func casDeleteBranch(ctx context.Context, e *Env, branch, expect string) (string, string) {
	return casDeleteBranchThen(ctx, e, nil, branch, expect, nil)
}

// casDeleteBranchThen is casDeleteBranch over inv (nil: an inventory taken
// now) that runs before (when set) right before the delete; its error
// keeps the branch.
func casDeleteBranchThen(ctx context.Context, e *Env, inv *gitfiles.Inventory, branch, expect string, before func() error) (string, string) {
	if inv == nil {
		taken, err := gitfiles.TakeInventoryOf(ctx, e.Git, e.Repo, branch)
		if err != nil {
			return machine.BranchKept, "branch state unreadable: " + err.Error()
		}
		inv = &taken
	}
	tip, ok := inv.Branches[branch]
	switch {
	case !ok:
		return machine.BranchAbsent, "no such branch at completion"
	case tip != expect:
		return machine.BranchKept, fmt.Sprintf("moved to %s since %s was proven", tip, expect)
	case inv.CheckedOut(branch):
		return machine.BranchKept, "checked out in another worktree"
	}
	if before != nil {
		if err := before(); err != nil {
			return machine.BranchKept, "not deleted: " + err.Error()
		}
	}
	if _, err := e.Git.Mutate(ctx, e.Repo.MainCheckout, "update-ref", "-d", "refs/heads/"+branch, expect); err != nil {
		return machine.BranchKept, "compare-and-swap delete failed: " + err.Error()
	}
	return machine.BranchDeleted, ""
}

// leftIn says what a removal left at path: how many entries, naming a
// few, so a partial removal says what is left.
func leftIn(path string) string {
	ents, err := os.ReadDir(path)
	if err != nil {
		return fmt.Sprintf("entries that cannot be listed (%v)", err)
	}
	if len(ents) == 0 {
		return "nothing (an empty directory)"
	}
	names := make([]string, 0, 3)
	for _, d := range ents[:min(3, len(ents))] {
		names = append(names, d.Name())
	}
	more := ""
	if len(ents) > 3 {
		more = fmt.Sprintf(" and %d more", len(ents)-3)
	}
	return fmt.Sprintf("%d entries: %s%s", len(ents), strings.Join(names, ", "), more)
}

// observeForRetreat observes rec's tree for a step back after its final
// observation ran out of time, moments after this command committed the
// removal intent and before it acted: registration, identity and HEAD,
// without git status (the command that hung), so the guard judges the
// same directory at the same commit. Nothing was removed in between; the
// step back removes nothing either.
func observeForRetreat(ctx context.Context, e *Env, rec machine.Record) (machine.WorktreeObservation, error) {
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	return obs, err
}
