package machine

import (
	"fmt"
	"strings"
)

// AdminEntry is one of git's admin entries (<common>/worktrees/<key>)
// other than the tree's own whose gitdir file names the tree's path, in any
// spelling (a trailing slash, a symlinked parent, a relative path, with or
// without its /.git). git lists the path once for each such entry, and
// `git worktree prune` keeps only one of them: the tree's own entry, or the
// other, whichever key sorts first.
type AdminEntry struct {
	// Key is the entry's directory name; Dir its full path, in the
	// repository whose common dir is CommonDir.
	Key       string `json:"key"`
	Dir       string `json:"dir"`
	CommonDir string `json:"common_dir"`
	// Names is what its gitdir file holds, without trailing whitespace.
	Names string `json:"names,omitempty"`
	// Head is the commit a detached HEAD holds; Branch the local branch
	// (short name) HEAD names instead. Both "" when HEAD cannot be read.
	Head   string `json:"head,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Locked is true when the entry holds a locked file, LockReason its
	// content.
	Locked     bool   `json:"locked,omitempty"`
	LockReason string `json:"lock_reason,omitempty"`
	// Prunable is true when the location its gitdir names does not exist
	// (git worktree prune would drop it, and with it its HEAD).
	Prunable bool `json:"prunable,omitempty"`
	// Marker is the custody ready marker the entry holds (a record id),
	// "" when none.
	Marker string `json:"marker,omitempty"`
	// Unreadable says why the entry's gitdir file could not be read: then
	// the path it names is unknown, and it may be the tree's.
	Unreadable string `json:"unreadable,omitempty"`
}

// StrayEntriesDir is where a retry moves other admin entries aside, under
// the repository's custody directory: out of git's registry, every file
// they hold kept.
func StrayEntriesDir(commonDir string) string { return commonDir + "/custody/stray-entries" }

// otherEntriesShown bounds how many other entries one refusal's retry
// removes; the rest are named by the next plan.
const otherEntriesShown = 4

// OtherEntriesRefusal is the refusal of a tree at path whose path other
// admin entries also name: it is kept (a removal would leave them naming a
// gone path, and git worktree prune would then drop them with their HEADs),
// and the retry keeps each entry's detached HEAD under
// refs/custody/stray/<commit>, moves exactly those entries out of the
// registry into StrayEntriesDir (their index, reflog and refs kept as
// files), then runs then (custody plan, or custody resume for an
// interrupted removal). An entry whose gitdir or HEAD cannot be read, or
// that holds another record's ready marker, gets no command that moves it:
// what it is and what it holds is the person's to settle first.
func OtherEntriesRefusal(rec Record, others []AdminEntry, then string) Refusal {
	path := rec.Path
	if len(others) == 0 {
		return refuse(CodeDuplicateAdminEntry, path, then, "no other admin entry names %s", path)
	}
	first := others[0]
	desc := describeEntry(first)
	if len(others) > 1 {
		desc += fmt.Sprintf(", and %d more", len(others)-1)
	}
	steps := make([]string, 0, 2*min(len(others), otherEntriesShown)+1)
	for _, o := range others[:min(len(others), otherEntriesShown)] {
		switch {
		case o.Marker != "" && o.Marker != rec.ID:
			return refuse(CodeDuplicateAdminEntry, path, CommandOn([]string{"custody", "show"}, o.Marker),
				"git's admin entry %s, custody's entry of record %s, also names %s (%s); custody keeps the tree and moves no record's entry: which tree the entry is is yours to settle",
				o.Dir, o.Marker, path, desc)
		case o.Unreadable != "" || (o.Head == "" && o.Branch == ""):
			return refuse(CodeDuplicateAdminEntry, path, "git worktree list --porcelain",
				"git's admin entry %s may also name %s (%s); custody keeps the tree and gives no command that moves that entry: keep what it holds (its HEAD, under a ref), then move %s out of the registry and plan again",
				o.Dir, path, desc, QuoteArg(o.Dir))
		}
		if o.Head != "" {
			steps = append(steps, Command("git", "--git-dir="+o.CommonDir, "update-ref", "refs/custody/stray/"+o.Head, o.Head))
		}
		aside := StrayEntriesDir(o.CommonDir)
		steps = append(steps, Command("mkdir", "-p", "--", aside)+" && "+Command("mv", "--", o.Dir, aside+"/"+o.Key))
	}
	steps = append(steps, then)
	return refuse(CodeDuplicateAdminEntry, path, strings.Join(steps, " && "),
		"git's admin entry %s also names %s (%s), under another key than the tree's; it goes on registering the path once the tree is gone, and git worktree prune then drops it with its HEAD (while the tree is there, prune may drop the tree's own entry instead, and git worktree repair may hand the tree to it): the retry keeps its HEAD under refs/custody/stray/ and moves only that entry out of the registry, into %s",
		first.Dir, path, desc, StrayEntriesDir(first.CommonDir))
}

// describeEntry says what an other admin entry holds: its HEAD, lock and
// prunable state.
func describeEntry(o AdminEntry) string {
	var parts []string
	switch {
	case o.Unreadable != "":
		parts = append(parts, "its gitdir cannot be read: "+o.Unreadable)
	case o.Head != "":
		parts = append(parts, "detached HEAD "+o.Head)
	case o.Branch != "":
		parts = append(parts, "HEAD on branch "+o.Branch)
	default:
		parts = append(parts, "HEAD unreadable")
	}
	if o.Names != "" {
		parts = append(parts, "gitdir "+o.Names)
	}
	if o.Locked {
		parts = append(parts, "locked: "+orNone(o.LockReason))
	}
	if o.Prunable {
		parts = append(parts, "prunable")
	}
	return EscapeControl(strings.Join(parts, ", "))
}
