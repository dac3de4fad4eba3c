package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestAdminMemberOf: every member git puts in a linked worktree's admin
// entry has its fate; a lock file, a name the catalogue does not know (one
// git may add later) and a known name of another type keep the tree.
func TestAdminMemberOf(t *testing.T) {
	t.Parallel()
	file := func(n string) machine.AdminFile { return machine.AdminFile{Name: n, Type: machine.AdminRegular} }
	dir := func(n string) machine.AdminFile { return machine.AdminFile{Name: n, Type: machine.AdminDir} }
	other := func(n string) machine.AdminFile { return machine.AdminFile{Name: n, Type: machine.AdminOther} }
	keeps := func(c machine.Code) string { return "keeps " + string(c) }
	tests := []struct {
		f    machine.AdminFile
		want string
	}{
		{file("gitdir"), "dies"},
		{file("commondir"), "dies"},
		{file("HEAD"), "dies"},
		{file("index"), "dies"},
		{file("locked"), "dies"},
		{file("custody-ready"), "dies"},
		{file("COMMIT_EDITMSG"), "dies"},
		{file("sharedindex.0123abcd"), "dies"},
		{dir("logs"), "dies"},
		{dir("logs/refs/worktree"), "dies"},
		{dir("refs"), "dies"},
		{dir("info"), "dies"},
		{file("ORIG_HEAD"), "objects"},
		{file("FETCH_HEAD"), "objects"},
		{file("AUTO_MERGE"), "objects"},
		{file("REBASE_HEAD"), "objects"},
		{file("MERGE_AUTOSTASH"), "objects"},
		{other("ORIG_HEAD"), "objects"}, // read at removal: recovery-failed then
		{file("logs/HEAD"), "reflog"},
		{file("logs/refs/worktree/x"), "reflog"},
		{other("logs/refs/bisect/bad"), "reflog"},
		{file("config.worktree"), "copied"},
		{file("info/sparse-checkout"), "copied"},
		{file("MERGE_MSG"), "copied"},
		{file("SQUASH_MSG"), "copied"},
		{file("MERGE_HEAD"), keeps(machine.CodeOperationInProgress)},
		{file("CHERRY_PICK_HEAD"), keeps(machine.CodeOperationInProgress)},
		{file("REVERT_HEAD"), keeps(machine.CodeOperationInProgress)},
		{file("BISECT_LOG"), keeps(machine.CodeOperationInProgress)},
		{file("BISECT_EXPECTED_REV"), keeps(machine.CodeOperationInProgress)},
		{dir("rebase-merge"), keeps(machine.CodeOperationInProgress)},
		{file("rebase-apply"), keeps(machine.CodeOperationInProgress)},
		{dir("sequencer"), keeps(machine.CodeOperationInProgress)},
		{file("refs/worktree/x"), keeps(machine.CodePerWorktreeRef)},
		{file("refs/bisect/bad"), keeps(machine.CodePerWorktreeRef)},
		{file("refs/heads/stray"), keeps(machine.CodePerWorktreeRef)},
		{dir("modules"), keeps(machine.CodeSubmodules)},
		{file("HEAD.lock"), keeps(machine.CodeAdminLockFile)},
		{file("index.lock"), keeps(machine.CodeAdminLockFile)},
		{file("logs/HEAD.lock"), keeps(machine.CodeAdminLockFile)},
		{file("refs/worktree/x.lock"), keeps(machine.CodeAdminLockFile)},
		{file("FUTURE_HEAD"), keeps(machine.CodeUnknownAdminFile)},
		{dir("reftable"), keeps(machine.CodeUnknownAdminFile)},
		{file("info/exclude"), keeps(machine.CodeUnknownAdminFile)},
		{file("logs"), keeps(machine.CodeUnknownAdminFile)},
		{dir("HEAD"), keeps(machine.CodeUnknownAdminFile)},
		{other("gitdir"), keeps(machine.CodeUnknownAdminFile)},
		{dir("info/sparse-checkout"), "copied"}, // read at removal: recovery-failed then
		{file("sharedindex.x/y"), keeps(machine.CodeUnknownAdminFile)},
	}
	for _, tt := range tests {
		m := machine.AdminMemberOf(tt.f)
		got := string(m.Fate)
		if m.Fate == machine.FateKeeps {
			got += " " + string(m.Code)
		}
		if got != tt.want {
			t.Errorf("%s (%s): %s, want %s", tt.f.Name, tt.f.Type, got, tt.want)
		}
	}
}

// TestAdminHidden: what keeps the tree is named once per operation (by the
// file git tests, when it is there), once per ref, lock file and unknown
// member; what dies or is kept gives nothing; AdminKeptOf sorts the rest.
func TestAdminHidden(t *testing.T) {
	t.Parallel()
	const admin, tree = "/r/.git/worktrees/k", "/r/.worktrees/k"
	files := []machine.AdminFile{
		{Name: "BISECT_LOG", Type: machine.AdminRegular},
		{Name: "BISECT_START", Type: machine.AdminRegular},
		{Name: "BISECT_TERMS", Type: machine.AdminRegular},
		{Name: "FETCH_HEAD", Type: machine.AdminRegular},
		{Name: "HEAD", Type: machine.AdminRegular},
		{Name: "HEAD.lock", Type: machine.AdminRegular},
		{Name: "NEW_THING", Type: machine.AdminRegular},
		{Name: "ORIG_HEAD", Type: machine.AdminRegular},
		{Name: "config.worktree", Type: machine.AdminRegular},
		{Name: "info", Type: machine.AdminDir},
		{Name: "info/sparse-checkout", Type: machine.AdminRegular},
		{Name: "logs", Type: machine.AdminDir},
		{Name: "logs/HEAD", Type: machine.AdminRegular},
		{Name: "logs/refs", Type: machine.AdminDir},
		{Name: "logs/refs/bisect", Type: machine.AdminDir},
		{Name: "logs/refs/bisect/bad", Type: machine.AdminRegular},
		{Name: "modules", Type: machine.AdminDir},
		{Name: "refs", Type: machine.AdminDir},
		{Name: "refs/bisect", Type: machine.AdminDir},
		{Name: "refs/bisect/bad", Type: machine.AdminRegular},
	}
	got := machine.AdminHidden(admin, tree, files)
	want := []machine.Hidden{
		{Code: machine.CodeOperationInProgress, Path: tree, Detail: "a bisect is in progress (BISECT_START)"},
		{Code: machine.CodeAdminLockFile, Path: admin + "/HEAD.lock", Admin: admin,
			Detail: "HEAD.lock is a git lock file: a git process is writing the tree's state now, or died doing it"},
		{Code: machine.CodeUnknownAdminFile, Path: admin + "/NEW_THING", Admin: admin,
			Detail: "NEW_THING (file) is not a member custody knows git keeps in a worktree's admin entry; what it holds would die with the tree"},
		{Code: machine.CodeSubmodules, Path: admin + "/modules",
			Detail: "the worktree holds submodule repositories; git removes it only by force, which custody never uses (push their commits, then remove the tree yourself)"},
		{Code: machine.CodePerWorktreeRef, Path: tree, Detail: "refs/bisect/bad exists only in this worktree"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("AdminHidden (-want +got):\n%s", d)
	}
	wantKept := machine.AdminKept{
		Objects: []string{"FETCH_HEAD", "ORIG_HEAD"},
		Reflogs: []string{"logs/HEAD", "logs/refs/bisect/bad"},
		Copies:  []string{"config.worktree", "info/sparse-checkout"},
	}
	if d := cmp.Diff(wantKept, machine.AdminKeptOf(files)); d != "" {
		t.Errorf("AdminKeptOf (-want +got):\n%s", d)
	}
	if got := machine.AdminHidden(admin, tree, files[3:6:6]); len(got) != 1 || got[0].Code != machine.CodeAdminLockFile {
		t.Errorf("FETCH_HEAD, HEAD, HEAD.lock: %+v, want only the lock file", got)
	}
}

// TestUnknownAdminFileRetry: the retry of an unknown member moves it, as it
// is, into custody's directory beside the admin entry, keeping its place
// below the entry; a lock file's is a new plan.
func TestUnknownAdminFileRetry(t *testing.T) {
	t.Parallel()
	const admin = "/r/.git/worktrees/k"
	rec, obs := removableRecord(), removableObs()
	for _, tt := range []struct {
		h    machine.Hidden
		want string
	}{
		{machine.Hidden{Code: machine.CodeUnknownAdminFile, Path: admin + "/NEW_THING", Admin: admin},
			"mkdir -p -- /r/.git/custody/admin-files/k && mv -n -- /r/.git/worktrees/k/NEW_THING /r/.git/custody/admin-files/k/NEW_THING && custody plan"},
		{machine.Hidden{Code: machine.CodeUnknownAdminFile, Path: admin + "/info/exclude", Admin: admin},
			"mkdir -p -- /r/.git/custody/admin-files/k/info && mv -n -- /r/.git/worktrees/k/info/exclude /r/.git/custody/admin-files/k/info/exclude && custody plan"},
		{machine.Hidden{Code: machine.CodeAdminLockFile, Path: admin + "/HEAD.lock", Admin: admin}, "custody plan"},
	} {
		obs.Hidden = []machine.Hidden{tt.h}
		v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
		r := v.Primary()
		if v.Action != machine.ActionKeep || r == nil || r.Code != tt.h.Code || r.Path != tt.h.Path || r.Retry != tt.want {
			t.Errorf("%s: %s %+v, want keep %s at %s with retry %q", tt.h.Path, v.Action, r, tt.h.Code, tt.h.Path, tt.want)
		}
	}
	if got := machine.AdminFilesAside("/r/.git/worktrees/k"); got != "/r/.git/custody/admin-files/k" {
		t.Errorf("AdminFilesAside = %q", got)
	}
}
