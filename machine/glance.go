package machine

import (
	"fmt"
	"strings"
	"time"
)

// Glance is what custody list reads of one tree, cheaply: at most one git
// process, and none for a tree git's own files show clean (decision 0249).
// It is never evidence for a removal: plan observes afresh.
type Glance struct {
	// PathState is what lstat says of the tree's path.
	PathState PathState `json:"path_state"`
	// Registered says git's worktree registry lists the path.
	Registered bool `json:"registered"`
	// Head is the commit the tree's HEAD names ("" when not registered).
	Head string `json:"head,omitempty"`
	// Branch is the branch checked out ("" when detached).
	Branch string `json:"branch,omitempty"`
	// Locked says the tree is locked (git worktree lock).
	Locked bool `json:"locked,omitempty"`
	// StatusKnown says whether Changes was observed: from git's files
	// (ObservedWith "files") or by git status.
	StatusKnown bool `json:"status_known"`
	// StatusErr says why the changes are not known.
	StatusErr string `json:"status_error,omitempty"`
	// Changes counts what git status reports.
	Changes GlanceChanges `json:"changes"`
	// ProvenClean says git's files alone show the tree exactly its HEAD:
	// every entry on disk a tracked file whose stat data the index holds,
	// the index HEAD's tree, nothing else on disk (no untracked or ignored
	// file), and no hidden state in its admin entry. Only then may list
	// say would-go.
	ProvenClean bool `json:"proven_clean"`
	// Hidden counts what the tree's admin entry keeps that plan refuses
	// (an operation in progress, a per-worktree ref, a lock file); read
	// only for a finished, proven clean tree.
	Hidden int `json:"hidden,omitempty"`
	// Upstream is the branch's upstream as git status names it
	// (origin/main), "" when the branch has none.
	Upstream string `json:"upstream,omitempty"`
	// UpstreamGone says the branch names an upstream whose ref does not
	// exist here: its commits are counted against every remote instead.
	UpstreamGone bool `json:"upstream_gone,omitempty"`
	// Counted says Ahead and Behind are known: against Upstream when it is
	// set, else Ahead is the commits no remote-tracking ref holds.
	Counted bool `json:"counted"`
	// Ahead counts the commits HEAD has that the upstream (or every
	// remote) does not.
	Ahead int `json:"ahead"`
	// Behind counts the upstream's commits HEAD does not have.
	Behind int `json:"behind"`
	// HasRemotes says the repository has a remote-tracking ref at all;
	// without one no commit can be pushed or unpushed.
	HasRemotes bool `json:"has_remotes"`
	// ObservedWith says how the tree was read: "files" (git's own files,
	// no process), "status" (one git status) or "rev-list" (the files
	// showed it clean; one git rev-list counted its commits).
	ObservedWith string `json:"observed_with"`
}

// GlanceChanges counts the entries git status reports.
type GlanceChanges struct {
	Changed   int `json:"changed"`
	Staged    int `json:"staged"`
	Untracked int `json:"untracked"`
	Unmerged  int `json:"unmerged"`
}

// Dirty reports whether git status reports anything.
func (c GlanceChanges) Dirty() bool {
	return c.Changed+c.Untracked+c.Unmerged > 0 || c.Staged > 0
}

// TreeStatus is the one word custody list says of a tree.
type TreeStatus string

// The words of list's STATUS column, in the order they win: a tree that
// fits two gets the first.
const (
	// TreeGone: the record is tombstoned (list --all).
	TreeGone TreeStatus = "gone"
	// TreePending: the record carries an intent an interrupted command
	// left (custody resume settles it) or one a running command holds.
	TreePending TreeStatus = "pending"
	// TreeMissing: nothing is at the tree's path.
	TreeMissing TreeStatus = "missing"
	// TreeLeased: a live session holds a lease on the tree.
	TreeLeased TreeStatus = "leased"
	// TreeUnknown: the tree could not be read (not registered, not a
	// directory, git failed).
	TreeUnknown TreeStatus = "unknown"
	// TreeDirty: git status reports changes, staged or not, or untracked
	// files.
	TreeDirty TreeStatus = "dirty"
	// TreeDiverged: HEAD and its upstream each have commits the other
	// lacks.
	TreeDiverged TreeStatus = "diverged"
	// TreeUnpushed: HEAD has commits its upstream (or, without one, every
	// remote) lacks.
	TreeUnpushed TreeStatus = "unpushed"
	// TreeBehind: the upstream has commits HEAD lacks, and HEAD none of
	// its own.
	TreeBehind TreeStatus = "behind"
	// TreeWouldGo: a finished tree that git's files show clean, unlocked,
	// with no hidden state, whose HEAD a remote-tracking ref holds: plan
	// would likely remove it (plan alone decides, against the remotes).
	TreeWouldGo TreeStatus = "would-go"
	// TreeClean: none of the above.
	TreeClean TreeStatus = "clean"
)

// TreeStatuses lists every word in the order they win.
var TreeStatuses = []TreeStatus{TreeGone, TreePending, TreeMissing, TreeLeased, TreeUnknown, TreeDirty,
	TreeDiverged, TreeUnpushed, TreeBehind, TreeWouldGo, TreeClean}

// GlanceVerdict is list's word on a tree and the count it carries.
type GlanceVerdict struct {
	Status TreeStatus `json:"status"`
	// N is the count the word carries (unpushed 3, behind 2); 0 when it
	// carries none or the count is not known (Counted false).
	N int `json:"n,omitempty"`
	// Counted says N is known, for unpushed and behind.
	Counted bool `json:"-"`
}

// Word is the verdict as the STATUS column shows it: "unpushed 3",
// "behind 2", "unpushed" when the count is not known, else the word.
func (v GlanceVerdict) Word() string {
	switch v.Status {
	case TreeUnpushed, TreeBehind:
		if v.Counted {
			return fmt.Sprintf("%s %d", v.Status, v.N)
		}
	}
	return string(v.Status)
}

// JudgeGlance is list's one word on rec's tree from its glance g, the
// lease on it (nil: none) at now. It decides nothing custody acts on.
func JudgeGlance(rec Record, g Glance, lease *Lease, now time.Time) GlanceVerdict {
	switch {
	case rec.State == StateTombstoned:
		return GlanceVerdict{Status: TreeGone}
	case rec.Intent != nil:
		return GlanceVerdict{Status: TreePending}
	case g.PathState == PathAbsent:
		return GlanceVerdict{Status: TreeMissing}
	case lease.Live(now):
		return GlanceVerdict{Status: TreeLeased}
	case g.PathState != PathPresent || !g.Registered || !g.StatusKnown:
		return GlanceVerdict{Status: TreeUnknown}
	case g.Changes.Dirty():
		return GlanceVerdict{Status: TreeDirty}
	}
	ahead, behind := g.Ahead, g.Behind
	if !g.Counted {
		// Not counted: unpushed unless a remote-tracking ref is known to
		// hold HEAD (which counts it, 0) or there is no remote at all.
		if g.HasRemotes || g.Upstream != "" {
			return GlanceVerdict{Status: TreeUnpushed}
		}
		return GlanceVerdict{Status: TreeClean}
	}
	switch {
	case ahead > 0 && behind > 0:
		return GlanceVerdict{Status: TreeDiverged}
	case ahead > 0:
		return GlanceVerdict{Status: TreeUnpushed, N: ahead, Counted: true}
	case behind > 0 && g.Upstream != "":
		return GlanceVerdict{Status: TreeBehind, N: behind, Counted: true}
	case wouldGo(rec, g):
		return GlanceVerdict{Status: TreeWouldGo}
	}
	return GlanceVerdict{Status: TreeClean}
}

// wouldGo is the guard of would-go: a finished tree, unlocked, proven
// clean from git's files with no hidden state, whose HEAD a
// remote-tracking ref holds (counted: nothing ahead).
func wouldGo(rec Record, g Glance) bool {
	return rec.State == StateFinished && !g.Locked && g.ProvenClean && g.Hidden == 0 &&
		g.Counted && g.Ahead == 0 && (g.HasRemotes || g.Upstream != "")
}

// ShortAge is how long ago at is, from now, in one unit: "3d", "5h",
// "12m", "<1m" (a time in the future, from a clock set back, too).
func ShortAge(at, now time.Time) string {
	d := now.Sub(at)
	switch {
	case at.IsZero():
		return "-"
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return "<1m"
}

// ElideMiddle shortens s to at most width columns (runes) by replacing
// its middle with "…", keeping more of its end (a path's last elements
// say the most). s fits already when it is short enough; a width below 2
// gives s's first width runes.
func ElideMiddle(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 2 {
		return string(r[:max(0, width)])
	}
	head := (width - 1) / 3
	tail := width - 1 - head
	var b strings.Builder
	b.WriteString(string(r[:head]))
	b.WriteString("…")
	b.WriteString(string(r[len(r)-tail:]))
	return b.String()
}
