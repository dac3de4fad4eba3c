package machine

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// refusalCase is one constructor call and the refusal it must build.
type refusalCase struct {
	name string
	got  *Refusal
	want *Refusal
}

// checkRefusals compares each case's refusal with the one it must build,
// field for field.
func checkRefusals(t *testing.T, cases []refusalCase) {
	t.Helper()
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	expires := time.Date(2099, 1, 1, 0, 0, 0, 0, time.FixedZone("east", 3600))
	const leaseTail = "a session works in it and renews the lease while it does; it ends when that session ends or the lease runs out. To finish it now, end the lease as the session's end would"
	checkRefusals(t, []refusalCase{
		{"no record", NoRecordRefusal("nosuch-123456"), &Refusal{Code: CodeUnknownRecord, Retry: "custody list",
			Message: `no worktree record "nosuch-123456" in this repository`}},
		{"no record, odd bytes quoted the Go way", NoRecordRefusal("a\nb\xff \"c\""), &Refusal{Code: CodeUnknownRecord, Retry: "custody list",
			Message: `no worktree record "a\nb\xff \"c\"" in this repository`}},
		{"no record to show", NoRecordToShowRefusal("nosuch"), &Refusal{Code: CodeUnknownRecord, Retry: "custody list --all",
			Message: `no worktree record "nosuch" in this repository`}},
		{"not in a managed worktree", NotInManagedWorktreeRefusal("/w/repo"), &Refusal{Code: CodeNotInWorktree, Path: "/w/repo", Retry: "custody list",
			Message: "/w/repo is not inside a managed worktree; name the worktree id"}},
		{"leased, expiry in UTC", LeasedRefusal(id, path, Lease{Holder: "agent-7", Expires: expires}), &Refusal{Code: CodeLeaseLive, Path: path,
			Retry:   "custody -C " + path + " hook session-end --session=agent-7 && custody finish " + id,
			Message: id + " is leased by agent-7 until 2098-12-31T23:00:00Z: " + leaseTail}},
		{"leased, an id and a session that read as flags", LeasedRefusal("-x", path, Lease{Holder: "-h 'q'", Expires: expires}), &Refusal{Code: CodeLeaseLive, Path: path,
			Retry:   "custody -C " + path + ` hook session-end --session='-h '\''q'\''' && custody finish -- -x`,
			Message: "-x is leased by -h 'q' until 2098-12-31T23:00:00Z: " + leaseTail}},
		{"no remote", NoRemoteRefusal("/w/repo"), &Refusal{Code: CodeNoRemote, Path: "/w/repo", Retry: "custody plan",
			Message: "the repository at /w/repo has no remote, so no finished worktree's commits can be proven published and none could be removed; nothing was changed. Add the remote your work is pushed to (git remote add origin URL)"}},
	})
}

func TestAbandonRefusals(t *testing.T) {
	t.Parallel()
	const (
		id     = "x-1a2b3c"
		path   = "/r/.worktrees/x-1a2b3c"
		commit = "1111111111111111111111111111111111111111"
		head   = "2222222222222222222222222222222222222222"
	)
	checkRefusals(t, []refusalCase{
		{"not the last commit", AbandonNotLastCommitRefusal(id, path, commit, head), &Refusal{Code: CodeGuardFailed, Path: path, Retry: "custody show " + id,
			Message: commit + " is not " + id + "'s last commit (" + head + "): abandon acknowledges exactly the commit that is lost; nothing was changed"}},
		{"not the last commit, a commit with spaces and quotes", AbandonNotLastCommitRefusal(id, path, "it's a b", head), &Refusal{Code: CodeGuardFailed, Path: path,
			Retry:   "custody show " + id,
			Message: `'it'\''s a b' is not ` + id + "'s last commit (" + head + "): abandon acknowledges exactly the commit that is lost; nothing was changed"}},
		{"tree present", AbandonTreeNotGoneRefusal(id, path, PathPresent, false), &Refusal{Code: CodeWrongState, Path: path, Retry: "custody plan",
			Message: id + "'s tree is not gone (path present): abandon ends only a record whose tree no longer exists; plan decides what may happen to a tree; nothing was changed"}},
		{"tree registered", AbandonTreeNotGoneRefusal(id, path, PathAbsent, true), &Refusal{Code: CodeWrongState, Path: path, Retry: "custody plan",
			Message: id + "'s tree is not gone (path absent, registered with git): abandon ends only a record whose tree no longer exists; plan decides what may happen to a tree; nothing was changed"}},
		{"held by refs: the branch is pushed", AbandonHeldByRefsRefusal(path, commit, []string{"refs/stash", "refs/tags/t", "refs/heads/a b"}, RemoteEvidence{Remotes: []string{"up", "origin"}}),
			&Refusal{Code: CodeGuardFailed, Path: path, Retry: "git push origin 'refs/heads/a b'",
				Message: commit + " is not lost: refs/stash, refs/tags/t, refs/heads/a b holds it; publish it, and plan settles the record; nothing was changed"}},
		{"held by a tag: the tag is pushed where the remote is read from", AbandonHeldByRefsRefusal(path, commit, []string{"refs/tags/t"}, RemoteEvidence{Remotes: []string{"origin"}, Push: &PushTarget{Remote: "mirror", Proves: "origin"}}),
			&Refusal{Code: CodeGuardFailed, Path: path, Retry: "git push mirror refs/tags/t",
				Message: commit + " is not lost: refs/tags/t holds it; publish it, and plan settles the record; nothing was changed"}},
		{"held by refs, no remote: the refs are listed", AbandonHeldByRefsRefusal(path, commit, []string{"refs/heads/a"}, RemoteEvidence{}),
			&Refusal{Code: CodeGuardFailed, Path: path, Retry: "git for-each-ref --contains " + commit,
				Message: commit + " is not lost: refs/heads/a holds it; publish it, and plan settles the record; nothing was changed"}},
		{"held by a stash only", AbandonHeldByRefsRefusal(path, commit, []string{"refs/stash"}, RemoteEvidence{Remotes: []string{"origin"}}),
			&Refusal{Code: CodeGuardFailed, Path: path, Retry: "git for-each-ref --contains " + commit,
				Message: commit + " is not lost: refs/stash holds it; publish it, and plan settles the record; nothing was changed"}},
		{"a prefix too short", AbandonShortCommitRefusal(id, path, "22", head), &Refusal{Code: CodeAmbiguousReference, Path: path,
			Retry:   "custody abandon --acknowledge-unrecoverable " + head + " " + id,
			Message: "22 has fewer than 7 hex digits: too few to name " + id + "'s last commit (" + head + ") surely; name it whole; nothing was changed"}},
		{"an ambiguous prefix", AbandonAmbiguousCommitRefusal(id, path, "2222222", head, []string{"2222222f"}), &Refusal{Code: CodeAmbiguousReference, Path: path,
			Retry:   "custody abandon --acknowledge-unrecoverable " + head + " " + id,
			Message: "2222222 is ambiguous: besides " + id + "'s last commit " + head + ", git holds 1 other object(s) whose id begins with it (2222222f); name the commit whole; nothing was changed"}},
		{"remote unavailable", AbandonRemoteUnavailableRefusal(path, commit, RemoteFailure{Remote: "up stream", Error: "timed out"}), &Refusal{Code: CodeRemoteUnavailable, Path: path,
			Retry:   "git ls-remote --refs 'up stream'",
			Message: "remote up stream did not answer (timed out), so whether it holds " + commit + " is unknown; nothing was changed"}},
		{"advertised", AbandonAdvertisedRefusal(path, commit, "origin", "refs/heads/main"), &Refusal{Code: CodeGuardFailed, Path: path, Retry: "custody plan",
			Message: commit + " is not lost: remote origin advertises it as refs/heads/main; nothing was changed"}},
		{"proof failed", AbandonProofFailedRefusal(path, commit, errors.New("git rev-list: exit 128")), &Refusal{Code: CodeProofFailed, Path: path, Retry: "custody plan",
			Message: "whether a remote holds " + commit + " cannot be told (git rev-list: exit 128); nothing was changed"}},
		{"proven", AbandonProvenRefusal(path, commit, Proof{Kind: ProofAncestry, Remote: "origin", Ref: "refs/heads/main"}), &Refusal{Code: CodeGuardFailed, Path: path, Retry: "custody plan",
			Message: commit + " is not lost: origin refs/heads/main holds it (ancestry); nothing was changed"}},
	})
}

func TestIsCommitPrefix(t *testing.T) {
	t.Parallel()
	head := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		ack  string
		want bool
	}{
		{head, true},
		{head[:12], true},
		{"0123456789ABCDEF", true},
		{head[:7], true},
		{head[:6], false},
		{"", false},
		{"0123456789abcdee", false},
		{head + "0", false},
		{"0123456g", false},
	} {
		if got := IsCommitPrefix(tc.ack, head); got != tc.want {
			t.Errorf("IsCommitPrefix(%q) = %v, want %v", tc.ack, got, tc.want)
		}
	}
	if IsCommitPrefix("0123456", "0123456") {
		t.Error("a head that is no full commit id is never named by a prefix")
	}
}
