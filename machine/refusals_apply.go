package machine

import (
	"fmt"
	"strings"
)

// The refusals of apply and of the removal it carries out, beyond the
// decisions of apply_decide.go: a plan for another repository, an --only
// the plan lacks, an adopted tree outside the root, a target removal must
// never touch, and a removal git refused or did not finish.

// WrongRepositoryRefusal refuses a whole plan made for the repository
// planID at planCommon, not this one (repoID at common).
func WrongRepositoryRefusal(planID, planCommon, repoID, common string) *Refusal {
	return &Refusal{Code: CodeWrongRepository, Path: planCommon, Retry: "custody plan -o plan.json",
		Message: fmt.Sprintf("the plan is for repository %s (%s), not this one (%s, %s); nothing was done",
			planID, planCommon, repoID, common)}
}

// NotInPlanRefusal refuses --only id, which names no item of the plan.
func NotInPlanRefusal(id string) *Refusal {
	return &Refusal{Code: CodeNotInPlan, Retry: "custody plan -o plan.json",
		Message: fmt.Sprintf("--only %s: the plan has no item with that id; nothing was done", id)}
}

// ExternalTreeRefusal refuses removing rec, an adopted tree outside the
// managed root root, that the person did not confirm: the retry applies
// planFile ("plan.json" when empty) again with the confirmation, for rec
// only.
func ExternalTreeRefusal(rec Record, root, planFile string) *Refusal {
	if planFile == "" {
		planFile = "plan.json"
	}
	return &Refusal{Code: CodeExternalTree, Path: rec.Path,
		Retry:   "custody apply --allow-external-retirement --only " + QuoteArg(rec.ID) + " " + QuoteArg(planFile),
		Message: fmt.Sprintf("%s is an adopted tree outside the managed root %s; custody removes it only when you confirm with --allow-external-retirement", rec.Path, root)}
}

// ProofGoneRefusal refuses a removal of the tree at path whose proof no
// longer covers commit, the one its intent proved.
func ProofGoneRefusal(path, commit string) *Refusal {
	return &Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("the proof no longer covers %s", commit)}
}

// unsafeRemovalRefusal refuses removing p, the tree of record id: the
// removal primitive's last check found it is no target to delete.
func unsafeRemovalRefusal(id, p, format string, args ...any) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: p, Retry: CommandOn([]string{"custody", "show"}, id), Message: fmt.Sprintf(format, args...)}
}

// RemovalRootRefusal refuses removing p (record id's tree), a filesystem
// root or a relative path.
func RemovalRootRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s is a filesystem root or not absolute", p)
}

// RemovalHomeRefusal refuses removing p (record id's tree), the home
// directory by name.
func RemovalHomeRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s is the home directory", p)
}

// RemovalEnclosesRepositoryRefusal refuses removing p (record id's tree),
// which contains the main checkout or the git directory by path.
func RemovalEnclosesRepositoryRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s contains the main checkout or the git directory", p)
}

// RemovalHomeIdentityRefusal refuses removing p (record id's tree), the
// home directory by device and inode.
func RemovalHomeIdentityRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s is the home directory (by device and inode)", p)
}

// RemovalEnclosesRepositoryIdentityRefusal refuses removing p (record
// id's tree), which contains the main checkout or the git directory by
// device and inode.
func RemovalEnclosesRepositoryIdentityRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s contains the main checkout or the git directory (by device and inode, through a symlink or bind mount)", p)
}

// RemovalNotPlainDirectoryRefusal refuses removing p (record id's tree),
// a symlink or not a directory.
func RemovalNotPlainDirectoryRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s is not a plain directory", p)
}

// RemovalUnreadableRefusal refuses removing p (record id's tree), which
// cannot be read.
func RemovalUnreadableRefusal(id, p string) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s cannot be read, so what removal would delete is unknown", p)
}

// RemovalOtherDirectoryRefusal refuses removing p (record id's tree),
// whose device and inode in obs are not the ones intent in recorded.
func RemovalOtherDirectoryRefusal(id, p string, obs WorktreeObservation, in Intent) *Refusal {
	return unsafeRemovalRefusal(id, p, "%s is another directory than the one observed at plan (device+inode %d:%d, intent %d:%d)", p, obs.Dev, obs.Ino, in.Dev, in.Ino)
}

// PartlyRemovedRefusal refuses stepping back from a removal of the tree at
// path that no longer matches its intent (why) after part of it is gone:
// deleted lists the tracked files missing (at least one). The retry
// restores them, then resumes.
func PartlyRemovedRefusal(path string, deleted []string, why string) *Refusal {
	return &Refusal{
		Code: CodeResumeUnmatched, Path: path, Retry: RestoreRetry(path, Command("custody", "resume")),
		Message: fmt.Sprintf("%s was partly removed (%d tracked files gone, e.g. %s) and no longer matches its removal intent (%s); restore the deleted files, then resume",
			path, len(deleted), deleted[0], why)}
}

// RestoreRetry checks out again, from the index, only the tracked files
// missing from the tree at path (a person's later edits stay), then runs
// then.
func RestoreRetry(path, then string) string {
	return Command("git", "-C", path, "ls-files", "-z", "--deleted") + " | " + Command("git", "-C", path, "checkout-index", "-z", "--stdin") + " && " + then
}

// RemoveRefusedRefusal reports that git worktree remove refused the tree
// at path (err) and removed nothing; the record stepped back.
func RemoveRefusedRefusal(path string, err error) *Refusal {
	return &Refusal{
		Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("git worktree remove refused %s and removed nothing: %v", path, err)}
}

// RemovalUnfinishedRefusal reports that the removal of the tree at path
// did not finish, as obs shows it: its path state (and why it is not
// known), what is left in it when present (left), and whether git still
// registers it.
func RemovalUnfinishedRefusal(path string, obs WorktreeObservation, left string) *Refusal {
	what := fmt.Sprintf("path %s", obs.PathState)
	if obs.PathError != "" {
		what += " (" + obs.PathError + ")"
	}
	if obs.PathState == PathPresent {
		what += ", holding " + left
	}
	if obs.Registered || obs.AdminPresent {
		what += ", still registered with git"
	}
	return &Refusal{
		Code: CodeRemovalFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("removal of %s did not finish: %s", path, what)}
}

// AdminEntryElsewhereRefusal refuses dropping the admin entry dir of the
// removed tree at path: its gitdir file names named instead.
func AdminEntryElsewhereRefusal(dir, named, path string) *Refusal {
	return &Refusal{Code: CodeRemovalFailed, Path: dir, Retry: "git worktree list",
		Message: fmt.Sprintf("admin entry %s names %s, not %s; custody leaves it alone", dir, named, path)}
}

// The amendments below add to a refusal in place what a removal that got
// further than the refusal's maker saw: each returns r.

// GitRemoveSaidRefusal adds to r, the refusal of a removal git worktree
// remove failed for, what git said (err).
func GitRemoveSaidRefusal(r *Refusal, err error) *Refusal {
	r.Message += " (git worktree remove said: " + err.Error() + ")"
	return r
}

// AdminEntryKeptRefusal amends why, the refusal of a removal whose tree at
// path is gone but whose admin entry is kept: resume, not plan, settles
// it once the person has dealt with what why names.
func AdminEntryKeptRefusal(why *Refusal, path string) *Refusal {
	why.Retry = strings.Replace(why.Retry, "custody plan", "custody resume", 1)
	if why.Retry == "" {
		why.Retry = "custody resume"
	}
	why.Message += fmt.Sprintf("; the tree at %s is already gone, and its admin entry is kept until this is settled", path)
	return why
}

// AlreadyDeletedRefusal amends why, the refusal of a removal through
// quarantine whose tree at path could not step back: deleted lists the
// tracked files already gone (at least one), and the retry restores them,
// then resumes.
func AlreadyDeletedRefusal(why *Refusal, path string, deleted []string) *Refusal {
	why.Message += fmt.Sprintf("; %d tracked files were already deleted (each identical to HEAD), e.g. %s", len(deleted), deleted[0])
	why.Retry = RestoreRetry(path, Command("custody", "resume"))
	return why
}
