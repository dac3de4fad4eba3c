package machine

import (
	"errors"
	"strings"
	"testing"
)

func TestMigrateRefusals(t *testing.T) {
	t.Parallel()
	const (
		path   = "/w/repo-feature"
		head   = "1111111111111111111111111111111111111111"
		digest = "aa11"
	)
	c := MigrateCandidate{Audit: MigrateAudit{ID: "repo-feature", Path: path, Head: head}, Digest: digest,
		Proposal: MigrateProposal{Disposition: DispositionRetire, Reason: "its work is published"}}
	unproposed := c
	unproposed.Proposal = MigrateProposal{Reason: "it is locked"}
	checkRefusals(t, []refusalCase{
		{"wrong repository", MigrateWrongRepositoryRefusal("r-a", "/w/a/.git", "r-b", "/w/b/.git"), &Refusal{Code: CodeWrongRepository, Path: "/w/a/.git",
			Retry: "custody migrate plan -o migrate.json", Message: "the migrate plan is for repository r-a (/w/a/.git), not this one (r-b, /w/b/.git); nothing was done"}},
		{"not in plan, an id to quote", MigrateNotInPlanRefusal("a b"), &Refusal{Code: CodeMigrateNotCandidate, Retry: "custody migrate status",
			Message: "--only 'a b': the migrate plan has no candidate with that id; nothing was done"}},
		{"not disposed", NotDisposedRefusal(c), &Refusal{Code: CodeMigrateNotApproved, Path: path,
			Retry:   "custody migrate dispose --approve --disposition retire --digest aa11 repo-feature",
			Message: "no disposition of repo-feature is approved for this audit (proposed: retire — its work is published); only a person approves one"}},
		{"not disposed, nothing proposed", NotDisposedRefusal(unproposed), &Refusal{Code: CodeMigrateNotApproved, Path: path,
			Retry:   "custody migrate dispose --approve --disposition reject --digest aa11 repo-feature",
			Message: "no disposition of repo-feature is approved for this audit (proposed: nothing — it is locked); only a person approves one"}},
		{"intent pending", MigrateIntentPendingRefusal(Record{ID: "repo-feature", Path: path, Intent: &Intent{Kind: IntentRelocation}}), &Refusal{Code: CodeIntentPending,
			Path: path, Retry: "custody resume", Message: "repo-feature carries an interrupted relocation intent; resume settles it, then migrate apply again"}},
		{"no longer a candidate", MigrateNoLongerCandidateRefusal(path, ""), &Refusal{Code: CodeMigrateChanged, Path: path, Retry: "custody migrate plan -o migrate.json",
			Message: path + " is no longer a candidate of this repository (discovery no longer admits it); nothing was done"}},
		{"changed", MigrateChangedRefusal(c, "bb22", ""), &Refusal{Code: CodeMigrateChanged, Path: path, Retry: "custody migrate plan -o migrate.json",
			Message: "repo-feature changed since its disposition was approved (audit aa11, now bb22); the new audit is journaled and needs a new disposition; nothing was done"}},
		{"changed, its plan file named", MigrateChangedRefusal(c, "bb22", "plans/it's.json"), &Refusal{Code: CodeMigrateChanged, Path: path, Retry: "custody migrate plan -o 'plans/it'\\''s.json'",
			Message: "repo-feature changed since its disposition was approved (audit aa11, now bb22); the new audit is journaled and needs a new disposition; nothing was done"}},
		{"not removable", MigrateNotRemovableRefusal(Record{ID: "repo-feature", Path: path}), &Refusal{Code: CodeGuardFailed, Path: path, Retry: "custody plan",
			Message: "repo-feature is not removable"}},
		{"outside the root", MigrateExternalTreeRefusal("repo-feature", path, "/w/repo/.worktrees", DispositionArchive, ""), &Refusal{Code: CodeExternalTree, Path: path,
			Retry:   "custody migrate apply --allow-external-retirement --only repo-feature migrate.json",
			Message: path + " is outside the managed root /w/repo/.worktrees; the archive disposition removes it only when you confirm with --allow-external-retirement; it was left as it was"}},
		{"removal unrecorded", MigrateRemovalUnrecordedRefusal(c), &Refusal{Code: CodeResumeUnmatched, Path: path, Retry: "custody doctor",
			Message: "the journal records repo-feature removed, but the store holds no removed record of it; nothing was done"}},
		{"discovery incomplete", DiscoveryIncompleteRefusal(MigrateBounds{ScanDir: "/w", ScanLimit: 1}), &Refusal{Code: CodeDiscoveryIncomplete, Path: "/w",
			Retry: "custody migrate discover --scan-limit 4", Message: "/w holds more than the 1 entries the scan reads; an incomplete inventory is not one, so nothing was classified"}},
		{"stashes incomplete", StashesIncompleteRefusal("/w/repo/.git/logs/refs/stash", 1000), &Refusal{Code: CodeDiscoveryIncomplete, Path: "/w/repo/.git/logs/refs/stash",
			Retry: "git stash list", Message: "the repository holds more than 1000 stashes, more than an audit reads; drop the ones you no longer need and plan again"}},
		{"ambiguous admin entry", AmbiguousAdminEntryRefusal(path), &Refusal{Code: CodeAmbiguousRepository, Path: path, Retry: "git worktree list --porcelain",
			Message: "git registers " + path + " but no single admin entry names it; nothing was planned"}},
	})
}

func TestMigrateRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{MigrateApplyRetry("repo-feature", ""), "custody migrate apply --only repo-feature migrate.json"},
		{MigrateApplyRetry("-x", "my plan.json"), "custody migrate apply --only -x 'my plan.json'"},
		{MigrateApplyExternalRetry("a\nb", "m.json"), `custody migrate apply --allow-external-retirement --only "$(printf -- 'a\012b')" m.json`},
	} {
		if tc.got != tc.want {
			t.Errorf("retry %q, want %q", tc.got, tc.want)
		}
	}
}

func TestDisposeRefusals(t *testing.T) {
	t.Parallel()
	const path = "/w/repo-feature"
	p := MigrateProposal{Disposition: DispositionRetire, Reason: "its work is published", Allowed: []Disposition{DispositionRetire, DispositionArchive}}
	checkRefusals(t, []refusalCase{
		{"no candidate", MigrateNoCandidateRefusal("nosuch"), &Refusal{Code: CodeMigrateNotCandidate, Retry: "custody migrate status",
			Message: "nosuch is no candidate any migrate plan audited; nothing was recorded"}},
		{"no candidate, an id to quote", MigrateNoCandidateRefusal("it's"), &Refusal{Code: CodeMigrateNotCandidate, Retry: "custody migrate status",
			Message: `'it'\''s' is no candidate any migrate plan audited; nothing was recorded`}},
		{"digest mismatch", MigrateDigestMismatchRefusal("repo-feature", path, "aa11", "bb22"), &Refusal{Code: CodeMigrateDigestMismatch, Path: path,
			Retry:   "custody migrate status",
			Message: "--digest aa11 is not repo-feature's newest audit (bb22): a disposition binds the exact audit a person reviewed; read the newest one in the plan file and dispose again. Nothing was recorded"}},
		{"not allowed", DispositionNotAllowedRefusal("repo-feature", path, "aa11", DispositionLand, p), &Refusal{Code: CodeDispositionNotAllowed, Path: path,
			Retry:   "custody migrate dispose --approve --disposition retire --digest aa11 repo-feature",
			Message: `repo-feature's audit does not permit disposition "land" (it permits [retire archive]): its work is published. Nothing was recorded`}},
		{"not allowed, none permitted", DispositionNotAllowedRefusal("-r", path, "aa11", DispositionRetire, MigrateProposal{Reason: "it is in use"}), &Refusal{
			Code: CodeDispositionNotAllowed, Path: path, Retry: "custody migrate dispose --approve --disposition reject --digest aa11 -- -r",
			Message: `-r's audit does not permit disposition "retire" (it permits []): it is in use. Nothing was recorded`}},
	})
}

func TestMigrateGoneRefusal(t *testing.T) {
	t.Parallel()
	r := MigrateGoneRefusal("/w/repo gone")
	if r.Code != CodeWorktreeMissing || r.Retry != "git worktree remove '/w/repo gone'" || r.Path != "/w/repo gone" || strings.Contains(r.Retry, "prune") {
		t.Errorf("MigrateGoneRefusal = %+v", r)
	}
}

func TestLandRefusals(t *testing.T) {
	t.Parallel()
	const (
		path = "/w/repo-feature"
		head = "1111111111111111111111111111111111111111"
		ref  = "refs/heads/custody/review/repo-feature"
	)
	c := MigrateCandidate{Audit: MigrateAudit{ID: "repo-feature", Path: path, Head: head}}
	push := "git push origin '" + head + ":" + ref + "'"
	land := func(retry, msg string) *Refusal {
		return &Refusal{Code: CodeLandFailed, Path: path, Retry: retry, Message: msg + "; the tree was left as it was"}
	}
	checkRefusals(t, []refusalCase{
		{"no push", LandNoPushRefusal(c, "no remote has a push URL", "m.json"), &Refusal{Code: CodeLandFailed, Path: path,
			Retry:   "custody migrate plan -o m.json",
			Message: "no push of " + head + " lands where a remote custody proves from is read from (no remote has a push URL); nothing was pushed and the tree was left as it was; configure a remote custody can read where your push lands (git remote add NAME URL), then plan again"}},
		{"pushurl no remote reads", LandForkRefusal(c, PushTarget{Remote: "origin", URL: "/srv/fork x.git", AddAs: "fork", Proves: "fork"}, ""), &Refusal{Code: CodeLandFailed, Path: path,
			Retry:   "git remote add fork '/srv/fork x.git' && custody migrate plan -o migrate.json",
			Message: "remote origin pushes to /srv/fork x.git, which no remote custody reads is read from, so a push there could not be proven; nothing was pushed and the tree was left as it was; add it as remote fork and plan again"}},
		{"push failed", LandPushFailedRefusal(c, "origin", ref, errors.New("rejected")), land(push, "pushing "+head+" to origin "+ref+" failed: rejected")},
		{"push failed, a URL to quote", LandPushFailedRefusal(c, "https://h/x y.git", ref, errors.New("rejected")),
			land("git push 'https://h/x y.git' '"+head+":"+ref+"'", "pushing "+head+" to https://h/x y.git "+ref+" failed: rejected")},
		{"prover missing", LandProverMissingRefusal(c, "origin", ref, "mirror"), land(push, "remote mirror, which was to advertise "+ref+", is not in the view")},
		{"prover silent, credentials redacted", LandProverSilentRefusal(c, "origin", ref, "mirror", errors.New("fatal: unable to access 'https://user:secret@h/x.git/'")),
			land(push, "mirror did not answer after the push: "+RedactCredentials("fatal: unable to access 'https://user:secret@h/x.git/'"))},
		{"unparsed", LandUnparsedRefusal(c, "origin", ref, "mirror", errors.New("line 1: no tab")), land(push, "mirror's advertisement after the push does not parse: line 1: no tab")},
		{"not advertised", LandNotAdvertisedRefusal(c, "origin", ref, "mirror"), land(push, "mirror does not advertise "+ref+" at "+head+" after the push")},
	})
}
