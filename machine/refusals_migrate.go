package machine

import "fmt"

// The refusals of migrate: a plan for another repository, a candidate no
// person approved or that changed since, a disposition the audit does not
// permit, a push for review that did not land, and an inventory or audit
// that could not be read whole.

// MigrateWrongRepositoryRefusal refuses a whole migrate plan made for the
// repository planID at planCommon, not this one (repoID at common).
func MigrateWrongRepositoryRefusal(planID, planCommon, repoID, common string) *Refusal {
	return &Refusal{Code: CodeWrongRepository, Path: planCommon, Retry: "custody migrate plan -o migrate.json",
		Message: fmt.Sprintf("the migrate plan is for repository %s (%s), not this one (%s, %s); nothing was done",
			planID, planCommon, repoID, common)}
}

// MigrateNotInPlanRefusal refuses --only id, which names no candidate of
// the migrate plan.
func MigrateNotInPlanRefusal(id string) *Refusal {
	return &Refusal{Code: CodeMigrateNotCandidate, Retry: "custody migrate status",
		Message: fmt.Sprintf("--only %s: the migrate plan has no candidate with that id; nothing was done", QuoteArg(id))}
}

// NotDisposedRefusal is the refusal of candidate c, no disposition of
// which a person approved: the retry approves what custody proposes (or
// reject, when it proposes nothing).
func NotDisposedRefusal(c MigrateCandidate) *Refusal {
	return &Refusal{Code: CodeMigrateNotApproved, Path: c.Audit.Path,
		Retry: MigrateDisposeRetry(c.Audit.ID, c.Digest, c.Proposal.Disposition),
		Message: fmt.Sprintf("no disposition of %s is approved for this audit (proposed: %s — %s); only a person approves one", c.Audit.ID,
			map[bool]string{true: "nothing", false: string(c.Proposal.Disposition)}[c.Proposal.Disposition == ""], c.Proposal.Reason)}
}

// MigrateIntentPendingRefusal refuses acting on a candidate whose record
// rec carries an interrupted intent.
func MigrateIntentPendingRefusal(rec Record) *Refusal {
	return &Refusal{Code: CodeIntentPending, Path: rec.Path, Retry: "custody resume",
		Message: fmt.Sprintf("%s carries an interrupted %s intent; resume settles it, then migrate apply again", rec.ID, rec.Intent.Kind)}
}

// MigrateNoLongerCandidateRefusal refuses the candidate at path, which
// discovery no longer admits; the retry plans afresh into planFile, the
// plan file being applied.
func MigrateNoLongerCandidateRefusal(path, planFile string) *Refusal {
	return &Refusal{Code: CodeMigrateChanged, Path: path, Retry: MigratePlanRetry(planFile),
		Message: fmt.Sprintf("%s is no longer a candidate of this repository (discovery no longer admits it); nothing was done", path)}
}

// MigrateChangedRefusal refuses candidate c, whose fresh audit (digest
// now) is not the one its disposition approved; the retry plans afresh
// into planFile, the plan file being applied.
func MigrateChangedRefusal(c MigrateCandidate, now, planFile string) *Refusal {
	return &Refusal{Code: CodeMigrateChanged, Path: c.Audit.Path, Retry: MigratePlanRetry(planFile),
		Message: fmt.Sprintf("%s changed since its disposition was approved (audit %s, now %s); the new audit is journaled and needs a new disposition; nothing was done", c.Audit.ID, c.Digest, now)}
}

// MigrateNotRemovableRefusal refuses retiring the adopted candidate rec,
// which its assessment does not find removable though it names no reason.
func MigrateNotRemovableRefusal(rec Record) *Refusal {
	return &Refusal{Code: CodeGuardFailed, Path: rec.Path, Retry: "custody plan", Message: rec.ID + " is not removable"}
}

// MigrateApplyRetry applies the migrate plan file planFile
// ("migrate.json" when empty) again, for candidate id only.
func MigrateApplyRetry(id, planFile string) string {
	return fmt.Sprintf("custody migrate apply --only %s %s", QuoteArg(id), QuoteArg(migratePlanFileOr(planFile)))
}

// MigratePlanRetry writes a fresh migrate plan to planFile (migrate.json
// when empty): the file the person applies from.
func MigratePlanRetry(planFile string) string {
	return Command("custody", "migrate", "plan", "-o", migratePlanFileOr(planFile))
}

// MigrateApplyExternalRetry is MigrateApplyRetry with the confirmation
// that retires a tree outside the managed root.
func MigrateApplyExternalRetry(id, planFile string) string {
	return fmt.Sprintf("custody migrate apply --allow-external-retirement --only %s %s", QuoteArg(id), QuoteArg(migratePlanFileOr(planFile)))
}

// migratePlanFileOr is p, or the migrate plan file's default name.
func migratePlanFileOr(p string) string {
	if p == "" {
		return "migrate.json"
	}
	return p
}

// MigrateExternalTreeRefusal refuses disposition d of candidate id, a
// tree at path outside the managed root root, that the person did not
// confirm; it was left as it was. The retry applies planFile again with
// the confirmation.
func MigrateExternalTreeRefusal(id, path, root string, d Disposition, planFile string) *Refusal {
	return &Refusal{Code: CodeExternalTree, Path: path, Retry: MigrateApplyExternalRetry(id, planFile),
		Message: fmt.Sprintf("%s is outside the managed root %s; the %s disposition removes it only when you confirm with --allow-external-retirement; it was left as it was", path, root, d)}
}

// landRefusal reports that pushing candidate c's HEAD to ref for review
// did not land; the tree was left as it was. With a destination dest the
// retry pushes again by hand.
func landRefusal(c MigrateCandidate, dest, ref, format string, args ...any) *Refusal {
	retry := "custody plan"
	if dest != "" {
		retry = Command("git", "push", dest, c.Audit.Head+":"+ref)
	}
	return &Refusal{Code: CodeLandFailed, Path: c.Audit.Path,
		Retry:   retry,
		Message: fmt.Sprintf(format, args...) + "; the tree was left as it was"}
}

// LandNoPushRefusal refuses landing candidate c: no push lands where a
// remote custody reads and proves from is read from (why). A remote a
// person adds changes the audit (its advice names the remotes), so the
// retry plans again into planFile, whose fresh audit is disposed of anew.
func LandNoPushRefusal(c MigrateCandidate, why, planFile string) *Refusal {
	return &Refusal{Code: CodeLandFailed, Path: c.Audit.Path, Retry: MigratePlanRetry(planFile),
		Message: fmt.Sprintf("no push of %s lands where a remote custody proves from is read from (%s); nothing was pushed and the tree was left as it was; configure a remote custody can read where your push lands (git remote add NAME URL), then plan again", c.Audit.Head, why)}
}

// LandForkRefusal refuses landing candidate c where remote t.Remote
// pushes: its push URL t.URL is read by no remote custody reads, so a
// push there could never be proven. The retry adds it as remote t.AddAs
// (which custody then reads) and plans again into planFile.
func LandForkRefusal(c MigrateCandidate, t PushTarget, planFile string) *Refusal {
	return &Refusal{Code: CodeLandFailed, Path: c.Audit.Path,
		Retry: CommandOn([]string{"git", "remote", "add"}, t.AddAs, t.URL) + " && " + MigratePlanRetry(planFile),
		Message: fmt.Sprintf("remote %s pushes to %s, which no remote custody reads is read from, so a push there could not be proven; nothing was pushed and the tree was left as it was; add it as remote %s and plan again",
			EscapeControl(t.Remote), EscapeControl(t.URL), EscapeControl(t.AddAs))}
}

// LandPushFailedRefusal reports that pushing candidate c's HEAD to ref at
// dest failed (err).
func LandPushFailedRefusal(c MigrateCandidate, dest, ref string, err error) *Refusal {
	return landRefusal(c, dest, ref, "pushing %s to %s %s failed: %v", c.Audit.Head, dest, ref, err)
}

// LandProverMissingRefusal reports that prover, the remote that was to
// advertise ref after the push of candidate c's HEAD to dest, is not in
// the view.
func LandProverMissingRefusal(c MigrateCandidate, dest, ref, prover string) *Refusal {
	return landRefusal(c, dest, ref, "remote %s, which was to advertise %s, is not in the view", prover, ref)
}

// LandProverSilentRefusal reports that prover did not answer (err, its
// credentials redacted) after the push of candidate c's HEAD to ref at
// dest.
func LandProverSilentRefusal(c MigrateCandidate, dest, ref, prover string, err error) *Refusal {
	return landRefusal(c, dest, ref, "%s did not answer after the push: %s", prover, RedactCredentials(err.Error()))
}

// LandUnparsedRefusal reports that prover's advertisement after the push
// of candidate c's HEAD to ref at dest does not parse (err).
func LandUnparsedRefusal(c MigrateCandidate, dest, ref, prover string, err error) *Refusal {
	return landRefusal(c, dest, ref, "%s's advertisement after the push does not parse: %v", prover, err)
}

// LandNotAdvertisedRefusal reports that prover does not advertise ref at
// candidate c's HEAD after the push to dest.
func LandNotAdvertisedRefusal(c MigrateCandidate, dest, ref, prover string) *Refusal {
	return landRefusal(c, dest, ref, "%s does not advertise %s at %s after the push", prover, ref, c.Audit.Head)
}

// MigrateRemovalUnrecordedRefusal refuses candidate c, which the journal
// records removed while the store holds no removed record of it.
func MigrateRemovalUnrecordedRefusal(c MigrateCandidate) *Refusal {
	return &Refusal{Code: CodeResumeUnmatched, Path: c.Audit.Path, Retry: "custody doctor",
		Message: fmt.Sprintf("the journal records %s removed, but the store holds no removed record of it; nothing was done", c.Audit.ID)}
}

// DiscoveryIncompleteRefusal refuses an inventory whose scan of b.ScanDir
// was cut short at b.ScanLimit entries: the retry scans four times as
// many.
func DiscoveryIncompleteRefusal(b MigrateBounds) *Refusal {
	return &Refusal{Code: CodeDiscoveryIncomplete, Path: b.ScanDir,
		Retry:   fmt.Sprintf("custody migrate discover --scan-limit %d", 4*b.ScanLimit),
		Message: fmt.Sprintf("%s holds more than the %d entries the scan reads; an incomplete inventory is not one, so nothing was classified", b.ScanDir, b.ScanLimit)}
}

// StashesIncompleteRefusal refuses an audit of a repository holding more
// than limit stashes (their reflog at log): it would not read them all.
func StashesIncompleteRefusal(log string, limit int) *Refusal {
	return &Refusal{Code: CodeDiscoveryIncomplete, Path: log, Retry: "git stash list",
		Message: fmt.Sprintf("the repository holds more than %d stashes, more than an audit reads; drop the ones you no longer need and plan again", limit)}
}

// AmbiguousAdminEntryRefusal refuses planning a migration in which git
// registers path, but no single admin entry names it.
func AmbiguousAdminEntryRefusal(path string) *Refusal {
	return &Refusal{Code: CodeAmbiguousRepository, Path: path, Retry: "git worktree list --porcelain",
		Message: fmt.Sprintf("git registers %s but no single admin entry names it; nothing was planned", path)}
}

// MigrateNoCandidateRefusal refuses disposing of id, which no migrate
// plan audited.
func MigrateNoCandidateRefusal(id string) *Refusal {
	return &Refusal{Code: CodeMigrateNotCandidate, Retry: "custody migrate status",
		Message: fmt.Sprintf("%s is no candidate any migrate plan audited; nothing was recorded", QuoteArg(id))}
}

// MigrateDigestMismatchRefusal refuses disposing of candidate id (at
// path) by digest, which is not its newest audit newest.
func MigrateDigestMismatchRefusal(id, path, digest, newest string) *Refusal {
	return &Refusal{Code: CodeMigrateDigestMismatch, Path: path, Retry: "custody migrate status",
		Message: fmt.Sprintf("--digest %s is not %s's newest audit (%s): a disposition binds the exact audit a person reviewed; read the newest one in the plan file and dispose again. Nothing was recorded", digest, id, newest)}
}

// DispositionNotAllowedRefusal refuses disposition d of candidate id (at
// path), which its audit's proposal p does not permit: the retry approves
// the first one it permits (reject when none) for the same digest.
func DispositionNotAllowedRefusal(id, path, digest string, d Disposition, p MigrateProposal) *Refusal {
	first := DispositionReject
	if len(p.Allowed) > 0 {
		first = p.Allowed[0]
	}
	return &Refusal{Code: CodeDispositionNotAllowed, Path: path,
		Retry:   CommandOn([]string{"custody", "migrate", "dispose", "--approve", "--disposition", string(first), "--digest", digest}, id),
		Message: fmt.Sprintf("%s's audit does not permit disposition %q (it permits %v): %s. Nothing was recorded", id, d, p.Allowed, p.Reason)}
}

// MigrateGoneRefusal is the audit's word on a candidate whose tree at path
// is gone while git registers it, in place of the ordinary
// worktree-missing advice (git worktree prune), which would drop every
// registration whose directory is gone, a tree moved without git among
// them, with its index. Discovery found no tree in its scan that names
// this registration; the retry removes this one registration only, which
// is safe once the candidate's HEAD is settled.
func MigrateGoneRefusal(path string) Refusal {
	return Refusal{Code: CodeWorktreeMissing, Path: path, Retry: Command("git", "worktree", "remove", path),
		Message: fmt.Sprintf("%s is gone, but git still registers it; if the tree was moved elsewhere, run git worktree repair with its new path instead (that keeps its index); else, once its HEAD is landed or released, this one registration goes with the retry (never git worktree prune, which drops every moved tree's registration too)", path)}
}
