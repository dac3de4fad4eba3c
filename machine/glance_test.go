package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

// TestJudgeGlance: list's one word for every kind of tree, each word's
// guard at its edge, and the order in which the words win.
func TestJudgeGlance(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	active := machine.Record{ID: "a-1", State: machine.StateActive}
	finished := machine.Record{ID: "f-1", State: machine.StateFinished}
	// clean is a tree git's files show clean, its HEAD on a remote.
	clean := machine.Glance{PathState: machine.PathPresent, Registered: true, Head: "h", StatusKnown: true,
		ProvenClean: true, Counted: true, HasRemotes: true, ObservedWith: "files"}
	with := func(f func(g *machine.Glance)) machine.Glance {
		g := clean
		f(&g)
		return g
	}
	live := &machine.Lease{Record: "a-1", Holder: "agent", Expires: now.Add(time.Hour)}
	expired := &machine.Lease{Record: "a-1", Holder: "agent", Expires: now}
	for _, tt := range []struct {
		name  string
		rec   machine.Record
		g     machine.Glance
		lease *machine.Lease
		want  machine.GlanceVerdict
		word  string
	}{
		{"tombstoned", machine.Record{State: machine.StateTombstoned}, machine.Glance{}, nil, machine.GlanceVerdict{Status: machine.TreeGone}, "gone"},
		{"an intent wins over everything live", machine.Record{State: machine.StateRemoving, Intent: &machine.Intent{Kind: machine.IntentRemoval}},
			with(func(g *machine.Glance) { g.Changes.Changed = 1 }), live, machine.GlanceVerdict{Status: machine.TreePending}, "pending"},
		{"nothing at the path", active, machine.Glance{PathState: machine.PathAbsent}, live, machine.GlanceVerdict{Status: machine.TreeMissing}, "missing"},
		{"a live lease wins over dirty", active, with(func(g *machine.Glance) { g.Changes.Untracked = 2 }), live, machine.GlanceVerdict{Status: machine.TreeLeased}, "leased"},
		{"an expired lease is no lease", active, clean, expired, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"not registered", active, with(func(g *machine.Glance) { g.Registered = false }), nil, machine.GlanceVerdict{Status: machine.TreeUnknown}, "unknown"},
		{"a path that cannot be read", active, with(func(g *machine.Glance) { g.PathState = machine.PathUnknown }), nil, machine.GlanceVerdict{Status: machine.TreeUnknown}, "unknown"},
		{"git status failed", active, with(func(g *machine.Glance) { g.StatusKnown, g.StatusErr = false, "git status: exit 128" }), nil, machine.GlanceVerdict{Status: machine.TreeUnknown}, "unknown"},
		{"a changed file", active, with(func(g *machine.Glance) { g.Changes.Changed = 1 }), nil, machine.GlanceVerdict{Status: machine.TreeDirty}, "dirty"},
		{"a staged file", active, with(func(g *machine.Glance) { g.Changes.Staged = 1 }), nil, machine.GlanceVerdict{Status: machine.TreeDirty}, "dirty"},
		{"an untracked file", active, with(func(g *machine.Glance) { g.Changes.Untracked = 1 }), nil, machine.GlanceVerdict{Status: machine.TreeDirty}, "dirty"},
		{"an unmerged path", active, with(func(g *machine.Glance) { g.Changes.Unmerged = 1 }), nil, machine.GlanceVerdict{Status: machine.TreeDirty}, "dirty"},
		{"dirty wins over unpushed", active, with(func(g *machine.Glance) { g.Changes.Changed, g.Ahead = 1, 3 }), nil, machine.GlanceVerdict{Status: machine.TreeDirty}, "dirty"},
		{"ahead and behind", active, with(func(g *machine.Glance) { g.Upstream, g.Ahead, g.Behind = "origin/x", 2, 1 }), nil, machine.GlanceVerdict{Status: machine.TreeDiverged}, "diverged"},
		{"ahead of its upstream", active, with(func(g *machine.Glance) { g.Upstream, g.Ahead = "origin/x", 2 }), nil, machine.GlanceVerdict{Status: machine.TreeUnpushed, N: 2, Counted: true}, "unpushed 2"},
		{"commits no remote holds", active, with(func(g *machine.Glance) { g.Ahead = 3 }), nil, machine.GlanceVerdict{Status: machine.TreeUnpushed, N: 3, Counted: true}, "unpushed 3"},
		{"not counted, remotes exist", active, with(func(g *machine.Glance) { g.Counted = false }), nil, machine.GlanceVerdict{Status: machine.TreeUnpushed}, "unpushed"},
		{"not counted, an upstream", active, with(func(g *machine.Glance) { g.Counted, g.HasRemotes, g.Upstream = false, false, "main" }), nil, machine.GlanceVerdict{Status: machine.TreeUnpushed}, "unpushed"},
		{"not counted, no remote at all", active, with(func(g *machine.Glance) { g.Counted, g.HasRemotes = false, false }), nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"behind its upstream", active, with(func(g *machine.Glance) { g.Upstream, g.Behind = "origin/x", 4 }), nil, machine.GlanceVerdict{Status: machine.TreeBehind, N: 4, Counted: true}, "behind 4"},
		{"finished, proven clean, on a remote", finished, clean, nil, machine.GlanceVerdict{Status: machine.TreeWouldGo}, "would-go"},
		{"finished, behind its upstream, would go", finished, with(func(g *machine.Glance) { g.Behind = 2 }), nil, machine.GlanceVerdict{Status: machine.TreeWouldGo}, "would-go"},
		{"finished, behind its named upstream, is behind", finished, with(func(g *machine.Glance) { g.Upstream, g.Behind = "origin/x", 2 }), nil, machine.GlanceVerdict{Status: machine.TreeBehind, N: 2, Counted: true}, "behind 2"},
		{"finished, clean by git status only", finished, with(func(g *machine.Glance) { g.ProvenClean, g.ObservedWith = false, "status" }), nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"finished, locked", finished, with(func(g *machine.Glance) { g.Locked = true }), nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"finished, an operation in progress", finished, with(func(g *machine.Glance) { g.Hidden = 1 }), nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"finished, no remote at all", finished, with(func(g *machine.Glance) { g.HasRemotes = false }), nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
		{"finished, leased", finished, clean, live, machine.GlanceVerdict{Status: machine.TreeLeased}, "leased"},
		{"active, proven clean, on a remote", active, clean, nil, machine.GlanceVerdict{Status: machine.TreeClean}, "clean"},
	} {
		got := machine.JudgeGlance(tt.rec, tt.g, tt.lease, now)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: verdict (-want +got):\n%s", tt.name, diff)
		}
		if w := got.Word(); w != tt.word {
			t.Errorf("%s: word %q, want %q", tt.name, w, tt.word)
		}
	}
}

// TestTreeStatusesEveryWord: TreeStatuses lists every word JudgeGlance
// gives once, so list's summary counts each.
func TestTreeStatusesEveryWord(t *testing.T) {
	t.Parallel()
	seen := map[machine.TreeStatus]bool{}
	for _, s := range machine.TreeStatuses {
		if seen[s] {
			t.Errorf("%s listed twice", s)
		}
		seen[s] = true
	}
	if len(seen) != 11 {
		t.Errorf("TreeStatuses has %d words, want the 11 JudgeGlance gives", len(seen))
	}
}

func TestShortAge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now, "<1m"},
		{now.Add(time.Minute), "<1m"}, // a clock set back
		{now.Add(-59 * time.Second), "<1m"},
		{now.Add(-time.Minute), "1m"},
		{now.Add(-12*time.Minute - 30*time.Second), "12m"},
		{now.Add(-time.Hour + time.Second), "59m"},
		{now.Add(-5*time.Hour - 59*time.Minute), "5h"},
		{now.Add(-24 * time.Hour), "1d"},
		{now.Add(-3*24*time.Hour - 5*time.Hour), "3d"},
		{now.Add(-400 * 24 * time.Hour), "400d"},
	} {
		if got := machine.ShortAge(tt.at, now); got != tt.want {
			t.Errorf("ShortAge(%v) = %q, want %q", now.Sub(tt.at), got, tt.want)
		}
	}
}

func TestElideMiddle(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s     string
		width int
		want  string
	}{
		{".worktrees/fix-1a2b3c", 30, ".worktrees/fix-1a2b3c"},
		{".worktrees/fix-1a2b3c", 21, ".worktrees/fix-1a2b3c"},
		{".worktrees/fix-1a2b3c", 13, ".wor…x-1a2b3c"},
		{"ünïcode/pâth/with/many/parts", 10, "ünï…/parts"},
		{"abcdef", 2, "…f"},
		{"abcdef", 1, "a"},
		{"abcdef", 0, ""},
	} {
		got := machine.ElideMiddle(tt.s, tt.width)
		if got != tt.want {
			t.Errorf("ElideMiddle(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
		if n := len([]rune(got)); n > max(tt.width, 0) && tt.width < len([]rune(tt.s)) {
			t.Errorf("ElideMiddle(%q, %d) is %d runes", tt.s, tt.width, n)
		}
		if tt.width >= 2 && len([]rune(tt.s)) > tt.width && !strings.Contains(got, "…") {
			t.Errorf("ElideMiddle(%q, %d) = %q elides without saying so", tt.s, tt.width, got)
		}
	}
}
