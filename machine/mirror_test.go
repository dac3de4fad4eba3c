package machine

import (
	"errors"
	"testing"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/google/go-cmp/cmp"
)

// mirrorCase is a mirror of entry x-1a2b3c/db of repository 0123abcd,
// once at /w/repo/.git.
func mirrorCase() Mirror {
	r := Resource{ID: "x-1a2b3c/db", Worktree: "x-1a2b3c", Path: "/w/repo/.worktrees/x-1a2b3c", Name: "db", Handle: "repo-x-1a2b3c-db",
		State: StateActive, Create: "createdb $CUSTODY_TOKEN_RESOURCE", Destroy: `dropdb --if-exists "$CUSTODY_TOKEN_RESOURCE"`,
		Ensure: "pg_isready", Env: map[string]string{"CUSTODY_TOKEN_RESOURCE": "repo-x-1a2b3c-db"}, GC: true,
		Evidence: ResourceEvidence{Outcome: "created", Output: "password=hunter2"}}
	return MirrorOf(MirrorRepository{ID: "0123abcd", CommonDir: "/w/repo/.git", MainCheckout: "/w/repo", Host: "here"}, r)
}

// TestMirrorOf: a mirror holds the destroy, handle and frozen values, and
// none of the create, the ensure or any command's output; it shares no
// map with the entry.
func TestMirrorOf(t *testing.T) {
	t.Parallel()
	m := mirrorCase()
	if m.Format != MirrorFormat || m.Resource.Create != "" || m.Resource.Ensure != "" || m.Resource.Evidence.Output != "" {
		t.Errorf("the mirror holds more than the destroy needs: %+v", m)
	}
	if m.Resource.Destroy == "" || m.Resource.Handle == "" || m.Resource.Env["CUSTODY_TOKEN_RESOURCE"] != "repo-x-1a2b3c-db" {
		t.Errorf("the mirror lost what the destroy needs: %+v", m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseMirror(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// TestParseMirrorRefuses: another format, malformed JSON, an entry without
// its ids or a relative common dir is not read.
func TestParseMirrorRefuses(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]string{
		"empty":           ``,
		"not json":        `{`,
		"other format":    `{"format":"custody.resource-mirror/2","repository":{"id":"a","common_dir":"/r/.git"},"resource":{"id":"x/db"}}`,
		"no repository":   `{"format":"custody.resource-mirror/1","repository":{"common_dir":"/r/.git"},"resource":{"id":"x/db"}}`,
		"no entry id":     `{"format":"custody.resource-mirror/1","repository":{"id":"a","common_dir":"/r/.git"},"resource":{}}`,
		"relative common": `{"format":"custody.resource-mirror/1","repository":{"id":"a","common_dir":"r/.git"},"resource":{"id":"x/db"}}`,
	} {
		if _, err := ParseMirror([]byte(b)); !errors.Is(err, ErrMirror) {
			t.Errorf("%s: %v, want ErrMirror", name, err)
		}
	}
}

// TestDecideGone: every rule of DecideGone, in its order.
func TestDecideGone(t *testing.T) {
	t.Parallel()
	m := mirrorCase()
	gone := GoneFacts{Host: "here", CommonDir: PathAbsent, Tree: PathAbsent, Parent: PathPresent}
	with := func(f func(*GoneFacts)) GoneFacts { g := gone; f(&g); return g }
	noGC := mirrorCase()
	noGC.Resource.GC = false
	token := mirrorCase()
	token.Resource.Destroy = "dropdb @prot@"
	for _, c := range []struct {
		name string
		m    Mirror
		f    GoneFacts
		want GoneVerdict
	}{
		{"gone: reclaim", m, gone, GoneVerdict{Reclaim: true}},
		{"another host", m, with(func(f *GoneFacts) { f.Host = "there"; f.CommonDir = PathPresent }), GoneVerdict{OtherHost: "here"}},
		{"present", m, with(func(f *GoneFacts) { f.CommonDir = PathPresent; f.HolderAlive = true }), GoneVerdict{Present: true}},
		{"common dir unknown", m, with(func(f *GoneFacts) { f.CommonDir = PathUnknown }), GoneVerdict{Refusal: &Refusal{Code: CodeObservationFailed, Path: "/w/repo/.git",
			Retry: GoneRetry, Message: "/w/repo/.git, the common dir of repository 0123abcd, could not be observed; its resources are kept"}}},
		{"moved", m, with(func(f *GoneFacts) { f.MovedTo = "/w/moved repo"; f.Unreadable = "/w/other/.git" }), GoneVerdict{MovedTo: "/w/moved repo"}},
		{"an indexed repository unreadable", m, with(func(f *GoneFacts) { f.Unreadable = "/w/other/.git" }), GoneVerdict{Refusal: &Refusal{Code: CodeObservationFailed,
			Path: "/w/repo/.git", Retry: GoneRetry, Message: "the repository id of /w/other/.git could not be read, and it may be repository 0123abcd moved; the resources of x-1a2b3c/db are kept"}}},
		{"the directory that held it absent", m, with(func(f *GoneFacts) { f.Parent = PathAbsent; f.HolderAlive = true }), GoneVerdict{Refusal: &Refusal{Code: CodeObservationFailed,
			Path: "/w/repo/.git", Retry: GoneRetry, Message: "/w, the directory that held repository 0123abcd, is not there either: a volume that is not mounted looks the same as a deleted directory, so the resources of x-1a2b3c/db are kept; mount it, or, when it was deleted, make the directory again (mkdir -p) and retry"}}},
		{"holder alive", m, with(func(f *GoneFacts) { f.HolderAlive = true }), GoneVerdict{Refusal: &Refusal{Code: CodeInProgress, Path: "/w/repo/.git", Retry: GoneRetry,
			Message: "resource x-1a2b3c/db is being acted on by a live custody process"}}},
		{"tree present", m, with(func(f *GoneFacts) { f.Tree = PathPresent }), GoneVerdict{Refusal: &Refusal{Code: CodeWorktreeLive, Path: "/w/repo/.worktrees/x-1a2b3c",
			Retry: "custody resource gc --gone-repos", Message: "/w/repo/.worktrees/x-1a2b3c, the worktree path of x-1a2b3c/db, is still present though its repository is gone; what stands there is yours to keep or move away, and the resource is reclaimed once nothing is there"}}},
		{"tree unknown", m, with(func(f *GoneFacts) { f.Tree = PathUnknown }), GoneVerdict{Refusal: &Refusal{Code: CodeObservationFailed, Path: "/w/repo/.worktrees/x-1a2b3c",
			Retry: GoneRetry, Message: "/w/repo/.worktrees/x-1a2b3c, the worktree path of x-1a2b3c/db, could not be observed"}}},
		{"gc = false", noGC, gone, GoneVerdict{Refusal: &Refusal{Code: CodeGCDisabled, Path: "/w/repo/.git", Retry: GoneRetry,
			Message: "the repository of resource x-1a2b3c/db is gone, but it has gc = false; destroy repo-x-1a2b3c-db yourself"}}},
		{"unexpanded token", token, gone, GoneVerdict{Refusal: &Refusal{Code: CodeUnexpandedToken, Path: "/w/repo/.git", Retry: GoneRetry,
			Message: "the frozen destroy command of x-1a2b3c/db still carries @prot@; it is never half-run"}}},
	} {
		if d := cmp.Diff(c.want, DecideGone(c.m, c.f)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

// TestGoneRefusals: the refusals of gc --gone-repos.
func TestGoneRefusals(t *testing.T) {
	t.Parallel()
	m := mirrorCase()
	checkRefusals(t, []refusalCase{
		{"destroy failed", GoneDestroyFailedRefusal(m, 2, "busy"), &Refusal{Code: CodeResourceFailed, Path: "/w/repo/.git", Retry: "custody resource gc --gone-repos",
			Message: "destroy of x-1a2b3c/db (repo-x-1a2b3c-db) of the gone repository 0123abcd exited 2: busy; the user-level ledger keeps it"}},
		{"unreadable", MirrorUnreadableRefusal("/s/custody/resources/a/b.json", errors.New("others than its owner may write it (mode -rw-rw-rw-)")), &Refusal{Code: CodeObservationFailed,
			Path: "/s/custody/resources/a/b.json", Retry: GoneRetry, Message: "/s/custody/resources/a/b.json is not a mirror custody runs: others than its owner may write it (mode -rw-rw-rw-)"}},
	})
}

// TestMirrorIntent: the destroy intent names the new holder and keeps the
// process group an interrupted run recorded, so it is ended first.
func TestMirrorIntent(t *testing.T) {
	t.Parallel()
	m := mirrorCase()
	m.Resource.Intent = &ResourceIntent{Kind: IntentResourceDestroy, Command: m.Resource.Destroy, Holder: Holder{PID: 7, Host: "h"}, Group: &Holder{PID: 8, Host: "h"}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := MirrorIntent(m, Holder{PID: 9, Host: "h"}, now)
	want := &ResourceIntent{Kind: IntentResourceDestroy, Command: m.Resource.Destroy, Holder: Holder{PID: 9, Host: "h"}, At: now, Group: &Holder{PID: 8, Host: "h"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	got.Group.PID = 1
	if m.Resource.Intent.Group.PID != 8 {
		t.Error("the new intent shares its group with the old")
	}
}
