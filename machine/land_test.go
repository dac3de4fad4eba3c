package machine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestDecideLandTarget(t *testing.T) {
	const path, retry = "/r/.worktrees/a-1", "custody land --yes a-1"
	origin := &machine.PushTarget{Remote: "origin", Proves: "origin"}
	tips := []machine.LandTip{
		{Remote: "origin", Ref: "refs/heads/main", Commit: "c1", Default: true},
		{Remote: "origin", Ref: "refs/heads/dev", Commit: "c2"},
		{Remote: "backup", Ref: "refs/heads/trunk", Commit: "c3", Default: true},
	}
	for _, tc := range []struct {
		name     string
		push     *machine.PushTarget
		tips     []machine.LandTip
		failures []machine.RemoteFailure
		onto     string
		want     machine.LandTarget
		code     machine.Code
		says     string
	}{
		{name: "the proving remote's HEAD", push: origin, tips: tips, want: machine.LandTarget{Push: "origin", Remote: "origin", Ref: "refs/heads/main", Tip: "c1"}},
		{name: "pushed by URL, proven by name", push: &machine.PushTarget{URL: "/srv/o.git", Proves: "origin"}, tips: tips,
			want: machine.LandTarget{Push: "/srv/o.git", Remote: "origin", Ref: "refs/heads/main", Tip: "c1"}},
		{name: "onto a branch it advertises", push: origin, tips: tips, onto: "dev", want: machine.LandTarget{Push: "origin", Remote: "origin", Ref: "refs/heads/dev", Tip: "c2"}},
		{name: "onto a branch of another remote", push: origin, tips: tips, onto: "trunk", code: machine.CodeLandNoTarget, says: "advertises no branch trunk (it advertises main, dev)"},
		{name: "no push target", push: nil, tips: tips, code: machine.CodeLandNoTarget, says: "no remote is configured"},
		{name: "no push, with why", push: &machine.PushTarget{Why: "shallow"}, tips: tips, code: machine.CodeLandNoTarget, says: "(shallow)"},
		{name: "a fork's pushurl", push: &machine.PushTarget{Remote: "origin", URL: "/srv/fork.git", AddAs: "fork", Proves: "fork"}, tips: tips, code: machine.CodeLandNoTarget, says: "no remote custody reads"},
		{name: "the prover did not answer", push: origin, tips: tips, failures: []machine.RemoteFailure{{Remote: "origin", Error: "timeout"}}, code: machine.CodeLandNoTarget, says: "did not answer"},
		{name: "no default branch", push: origin, tips: tips[1:2], code: machine.CodeLandNoTarget, says: "ambiguous; name it with --onto BRANCH (it advertises dev)"},
		{name: "no default branch, many", push: origin, tips: []machine.LandTip{{Remote: "origin", Ref: "refs/heads/a"}, {Remote: "origin", Ref: "refs/heads/b c"},
			{Remote: "origin", Ref: "refs/heads/d"}, {Remote: "origin", Ref: "refs/heads/e"}, {Remote: "origin", Ref: "refs/heads/f"}, {Remote: "origin", Ref: "refs/heads/g"},
			{Remote: "origin", Ref: "refs/tags/v1"}, {Remote: "fork", Ref: "refs/heads/x"}}, code: machine.CodeLandNoTarget, says: "(it advertises a, 'b c', d, e, f and 1 more)"},
		{name: "no branch at all", push: origin, tips: []machine.LandTip{{Remote: "origin", Ref: "refs/tags/v1", Commit: "c"}}, code: machine.CodeLandNoTarget, says: "(it advertises no branch)"},
		{name: "HEAD names a tag", push: origin, tips: []machine.LandTip{{Remote: "origin", Ref: "refs/tags/v1", Commit: "c", Default: true}}, code: machine.CodeLandNoTarget, says: "names no default branch"},
		{name: "two defaults", push: origin, tips: []machine.LandTip{tips[0], {Remote: "origin", Ref: "refs/heads/master", Commit: "c4", Default: true}}, code: machine.CodeLandNoTarget, says: "more than one default branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r := machine.DecideLandTarget(tc.push, tc.tips, tc.failures, tc.onto, path, retry)
			if tc.code != "" {
				if r == nil || r.Code != tc.code || !strings.Contains(r.Message, tc.says) || r.Path != path || r.Retry == "" {
					t.Fatalf("got %+v %v; want %s saying %q", got, r, tc.code, tc.says)
				}
				return
			}
			if r != nil {
				t.Fatalf("refused: %v", r)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("target (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecideLand(t *testing.T) {
	target := machine.LandTarget{Push: "origin", Remote: "origin", Ref: "refs/heads/main", Tip: "1111111111111111"}
	retry := func(m machine.LandMethod) string { return "custody land --" + string(m) + " a-1" }
	ahead := machine.LandFacts{HeadHasTarget: true, Commits: 2}
	diverged := machine.LandFacts{Commits: 2}
	merges := machine.LandFacts{Commits: 3, Merges: 1}
	landed := machine.LandFacts{TargetHasHead: true}
	for _, tc := range []struct {
		name   string
		method machine.LandMethod
		facts  machine.LandFacts
		want   machine.LandMethod
		code   machine.Code
		retry  string
	}{
		{"default fast-forwards", "", ahead, machine.LandFastForward, "", ""},
		{"default refuses diverged", "", diverged, "", machine.CodeLandDiverged, "custody land --rebase a-1"},
		{"already in the target", "", landed, machine.LandNothing, "", ""},
		{"squash already in the target", machine.LandSquash, landed, machine.LandNothing, "", ""},
		{"squash ahead still squashes", machine.LandSquash, ahead, machine.LandSquash, "", ""},
		{"squash diverged", machine.LandSquash, diverged, machine.LandSquash, "", ""},
		{"rebase ahead fast-forwards", machine.LandRebase, ahead, machine.LandFastForward, "", ""},
		{"rebase diverged", machine.LandRebase, diverged, machine.LandRebase, "", ""},
		{"rebase over merges refused", machine.LandRebase, merges, "", machine.CodeLandDiverged, "custody land --merge a-1"},
		{"merge ahead makes a merge", machine.LandMerge, ahead, machine.LandMerge, "", ""},
		{"merge diverged", machine.LandMerge, merges, machine.LandMerge, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r := machine.DecideLand(tc.method, tc.facts, target, "/t", retry)
			if tc.code != "" {
				if r == nil || r.Code != tc.code || r.Retry != tc.retry {
					t.Fatalf("got %q %v; want %s retried by %q", got, r, tc.code, tc.retry)
				}
				return
			}
			if r != nil || got != tc.want {
				t.Fatalf("got %q %v; want %q", got, r, tc.want)
			}
		})
	}
}

func TestDecideLandResume(t *testing.T) {
	in := machine.LandIntent{Remote: "origin", Ref: "refs/heads/main", Old: "0ld", New: "n3w"}
	for _, tc := range []struct {
		name       string
		answered   bool
		advertised string
		holdsNew   bool
		want       machine.LandResumption
		why        string
	}{
		{"pushed, not recorded", true, "n3w", false, machine.LandResumeLanded, ""},
		{"pushed, then built on", true, "l4ter", true, machine.LandResumeLanded, ""},
		{"never pushed", true, "0ld", false, machine.LandResumeNotLanded, "the push did not happen"},
		{"moved elsewhere", true, "0ther", false, machine.LandResumeNotLanded, "does not hold"},
		{"ref gone", true, "", false, machine.LandResumeNotLanded, "no longer advertises"},
		{"no answer", false, "", false, machine.LandResumeUnknown, "did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := machine.DecideLandResume(in, tc.answered, tc.advertised, tc.holdsNew)
			if got != tc.want || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
				t.Errorf("got %q %q; want %q saying %q", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestPendingAndLastLanded(t *testing.T) {
	a := machine.LandIntent{Head: "h1", New: "n1"}
	b := machine.LandIntent{Head: "h2", New: "n2"}
	for _, tc := range []struct {
		name        string
		events      []string
		intents     []machine.LandIntent
		pending     bool
		landedHead  string
		wantLanded  bool
		wantPending machine.LandIntent
	}{
		{name: "nothing", pending: false},
		{name: "intent open", events: []string{machine.EventLandIntent}, intents: []machine.LandIntent{a}, pending: true, wantPending: a},
		{name: "intent landed", events: []string{machine.EventLandIntent, machine.EventLanded}, intents: []machine.LandIntent{a, a}, landedHead: "h1", wantLanded: true},
		{name: "landed another head", events: []string{machine.EventLandIntent, machine.EventLanded}, intents: []machine.LandIntent{a, a}, landedHead: "h2"},
		{name: "abandoned then open", events: []string{machine.EventLandIntent, machine.EventLandAbandoned, machine.EventLandIntent}, intents: []machine.LandIntent{a, a, b}, pending: true, wantPending: b},
		{name: "abandoned", events: []string{machine.EventLandIntent, machine.EventLandAbandoned}, intents: []machine.LandIntent{a, a}, landedHead: "h1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := machine.PendingLand(tc.events, tc.intents)
			if ok != tc.pending || p != tc.wantPending {
				t.Errorf("pending %v %+v; want %v %+v", ok, p, tc.pending, tc.wantPending)
			}
			if _, ok := machine.LastLanded(tc.events, tc.intents, tc.landedHead); ok != tc.wantLanded {
				t.Errorf("landed %v; want %v", ok, tc.wantLanded)
			}
		})
	}
}

func TestLandMessages(t *testing.T) {
	if got := machine.LandSquashMessage("custody/a-1", []string{"one\n\nbody\n"}); got != "one\n\nbody\n" {
		t.Errorf("one commit: %q", got)
	}
	want := "Squashed custody/a-1 (2 commits)\n\n* one\n* two\n"
	if got := machine.LandSquashMessage("refs/heads/custody/a-1", []string{"one\n\nbody\n", "two\n"}); got != want {
		t.Errorf("two commits: %q, want %q", got, want)
	}
	if got := machine.LandMergeMessage("custody/a-1", "refs/heads/main"); got != "Merge branch 'custody/a-1' into main\n" {
		t.Errorf("merge: %q", got)
	}
}

func TestLandBlocking(t *testing.T) {
	rs := []machine.Refusal{{Code: machine.CodeUnpushedCommits}, {Code: machine.CodeTrackedChanges}, {Code: machine.CodeDetachedHead}, {Code: machine.CodeInUse}, {Code: machine.CodeLeaseLive}}
	got := machine.LandBlocking(rs)
	want := []machine.Refusal{{Code: machine.CodeTrackedChanges}, {Code: machine.CodeInUse}, {Code: machine.CodeLeaseLive}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("blocking (-want +got):\n%s", d)
	}
}

func TestLandRefusalConstructors(t *testing.T) {
	const path = "/r/.worktrees/a 1"
	tgt := machine.LandTarget{Push: "origin", Remote: "origin", Ref: "refs/heads/main", Tip: "1111111111111111111111111111111111111111"}
	for _, tc := range []struct {
		name string
		got  *machine.Refusal
		code machine.Code
		says string
	}{
		{"conflict", machine.LandConflictRefusal(path, machine.LandSquash, "2222222222222222", tgt, []string{"a.txt", "b/c.txt"}, "custody land --squash --yes a"),
			machine.CodeLandConflict, "conflicts in 2 path(s): a.txt, b/c.txt; nothing was pushed; resolve them in the tree (git -C '/r/.worktrees/a 1' rebase 1111111111111111111111111111111111111111)"},
		{"raced", machine.LandRacedRefusal(path, tgt, "3333333333333333", "custody land --yes a"), machine.CodeLandRaced, "now at 333333333333); the push's lease refused it and nothing was pushed"},
		{"raced, ref gone", machine.LandRacedRefusal(path, tgt, "", "custody land --yes a"), machine.CodeLandRaced, "no longer advertised"},
		{"push", machine.LandPushRefusal(path, tgt, "4444444444444444", "rejected", "custody land --yes a"), machine.CodeLandPushFailed, "pushing 444444444444 to origin refs/heads/main did not land: rejected"},
		{"check", machine.LandCheckFailedRefusal(path, "make test", 2, "FAIL\x1b[0m", "custody land --yes a"), machine.CodeLandCheckFailed, `the pre-land check "make test" exited 2 in the tree; nothing was pushed: FAIL`},
		{"identity", machine.LandNoIdentityRefusal(path, errors.New("empty ident")), machine.CodeLandNoIdentity, "no identity"},
		{"removed", machine.LandRemovedRefusal(machine.Record{ID: "a", Path: path}), machine.CodeWrongState, "never landed"},
		{"wrong state", machine.LandWrongStateRefusal(machine.Record{ID: "a", Path: path, State: machine.StateRemoving}), machine.CodeWrongState, "a is removing"},
		{"head moved", machine.LandHeadMovedRefusal(path, "5555555555555555", "6666666666666666", "custody land --yes a"), machine.CodeStale, "moved from 555555555555 to 666666666666"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.Code != tc.code || !strings.Contains(tc.got.Message, tc.says) || tc.got.Path != path || tc.got.Retry == "" {
				t.Errorf("%+v; want %s saying %q at %q with a retry", tc.got, tc.code, tc.says, path)
			}
			if strings.ContainsAny(tc.got.Message, "\x1b\n") {
				t.Errorf("message holds a control character: %q", tc.got.Message)
			}
		})
	}
}
