package machine

import "fmt"

// MigrateClass is what discovery found at one place: the classes are told
// apart by git's metadata and filesystem identity, never by names.
type MigrateClass string

// The classes of migrate discover. Only linked and missing are candidates
// (admitted: their git common dir is this repository's, by device and
// inode); every other class is reported and never touched.
const (
	// ClassLinked is a registered linked worktree of this repository whose
	// tree exists and whose .git file and admin entry name each other.
	ClassLinked MigrateClass = "linked"
	// ClassMissing is a registered linked worktree whose tree is gone.
	ClassMissing MigrateClass = "missing"
	// ClassInCustody is a linked worktree a live custody record holds.
	ClassInCustody MigrateClass = "in-custody"
	// ClassUnregistered is a directory whose .git names this repository
	// while git registers no worktree there (a missing registration).
	ClassUnregistered MigrateClass = "unregistered"
	// ClassContradictory is a place whose identities disagree: a .git
	// file and an admin entry that do not name each other, a registered
	// path whose .git names another repository, an unreadable .git.
	ClassContradictory MigrateClass = "contradictory"
	// ClassClone is an independent repository (its own git dir) that
	// holds this repository's history: a clone.
	ClassClone MigrateClass = "independent-clone"
	// ClassOtherRepository is an independent repository with no history
	// in common with this one, or a linked worktree of another repository.
	ClassOtherRepository MigrateClass = "other-repository"
	// ClassOrdinary is a directory (or file) with no .git at all.
	ClassOrdinary MigrateClass = "ordinary"
	// ClassSymlink is a symbolic link; discovery never follows one.
	ClassSymlink MigrateClass = "symlink"
	// ClassMoved is a linked worktree moved without git (plain mv): its
	// .git file names an admin entry of this repository whose gitdir
	// names the tree's old path, gone. Both places, the old registration
	// and the tree at its new path, are this class: the tree is known by
	// that identity, not by a path, and git worktree repair re-registers
	// it where it is, with its index. Never a candidate until repaired.
	ClassMoved MigrateClass = "moved"
	// ClassRemote is a bare repository a remote of this repository reads.
	ClassRemote MigrateClass = "remote"
)

// Admitted reports whether a class is a migration candidate.
func (c MigrateClass) Admitted() bool { return c == ClassLinked || c == ClassMissing }

// GitEntry is what a place's .git is.
type GitEntry string

// The kinds of .git a place can hold.
const (
	GitNone       GitEntry = "none"
	GitFile       GitEntry = "file"
	GitDir        GitEntry = "dir"
	GitUnreadable GitEntry = "unreadable"
)

// LegacyFacts is what observe read about one discovered place: the
// registry's view of it and the filesystem's, with the identities that
// decide whether it belongs to this repository.
type LegacyFacts struct {
	Path string `json:"path"`
	// Registered says git's worktree registry lists Path; AdminKey is the
	// admin entry's name when the .git file and the entry name each other.
	Registered bool   `json:"registered"`
	AdminKey   string `json:"admin_key,omitempty"`
	Prunable   bool   `json:"prunable,omitempty"`
	// Scanned says the bounded scan of the main checkout's parent found it.
	Scanned   bool      `json:"scanned,omitempty"`
	PathState PathState `json:"path_state"`
	IsDir     bool      `json:"is_dir,omitempty"`
	IsSymlink bool      `json:"is_symlink,omitempty"`
	Git       GitEntry  `json:"git"`
	// GitError says why .git could not be read (Git is unreadable).
	GitError string `json:"git_error,omitempty"`
	// SameCommon says the git common dir .git resolves to is this
	// repository's by device and inode; CommonKnown says it resolved.
	SameCommon  bool `json:"same_common,omitempty"`
	CommonKnown bool `json:"common_known,omitempty"`
	// SharesHistory says an independent repository's HEAD commit is one
	// this repository holds, or that HEAD's history reaches one (Ahead
	// then counts HEAD's commits this repository does not hold).
	SharesHistory bool `json:"shares_history,omitempty"`
	// Ahead counts an independent repository's HEAD commits this
	// repository does not hold, when their histories meet (at most
	// CloneWalkBound; more is CloneWalkBound+1).
	Ahead int `json:"ahead,omitempty"`
	// Bare says an independent repository is bare (no work tree).
	Bare bool `json:"bare,omitempty"`
	// Remotes names the remotes of this repository that read this place.
	Remotes []string `json:"remotes,omitempty"`
	// MovedTo is, for a registration whose tree is gone, where the tree
	// is now: a scanned directory whose .git file names its admin entry.
	// MovedFrom is, for that directory, the path git registers it at.
	MovedTo   string `json:"moved_to,omitempty"`
	MovedFrom string `json:"moved_from,omitempty"`
	// Record is the live custody record that holds the path, if any.
	Record string `json:"record,omitempty"`
}

// Discovered is one classified place.
type Discovered struct {
	LegacyFacts
	Class  MigrateClass `json:"class"`
	Reason string       `json:"reason"`
	// Retry is the command that settles the place when it is neither a
	// candidate nor to be left alone as it is (a moved tree's repair).
	Retry string `json:"retry,omitempty"`
}

// CloneWalkBound bounds how many of an independent repository's HEAD
// commits discovery reads looking for history in common.
const CloneWalkBound = 1000

// RepairMovedRetry re-registers the linked worktree moved to path where it
// is now, keeping its admin entry (index, HEAD, per-worktree refs).
func RepairMovedRetry(path string) string {
	return Command("git", "worktree", "repair", path)
}

// Classify decides what a place is from its facts alone.
func Classify(f LegacyFacts) Discovered {
	d := Discovered{LegacyFacts: f}
	set := func(c MigrateClass, format string, args ...any) Discovered {
		d.Class, d.Reason = c, fmt.Sprintf(format, args...)
		return d
	}
	switch {
	case f.Record != "":
		return set(ClassInCustody, "custody already holds it as %s", f.Record)
	case f.IsSymlink:
		return set(ClassSymlink, "a symbolic link; discovery never follows one")
	case f.Registered && f.PathState == PathAbsent && f.MovedTo != "":
		d = set(ClassMoved, "moved without git to %s (its .git names admin entry %s); repair the registration, which keeps its index, then plan again", f.MovedTo, f.AdminKey)
		d.Retry = RepairMovedRetry(f.MovedTo)
		return d
	case !f.Registered && f.MovedFrom != "" && f.Git == GitFile && f.SameCommon:
		d = set(ClassMoved, "a linked worktree moved here without git from %s (admin entry %s); repair the registration, which keeps its index, then plan again", f.MovedFrom, f.AdminKey)
		d.Retry = RepairMovedRetry(f.Path)
		return d
	case f.Registered && f.PathState == PathAbsent:
		return set(ClassMissing, "git registers it but the tree is gone")
	case f.PathState == PathUnknown:
		return set(ClassContradictory, "the path cannot be observed")
	case f.Registered && f.Git == GitFile && f.SameCommon && f.AdminKey != "":
		return set(ClassLinked, "a linked worktree of this repository (admin entry %s)", f.AdminKey)
	case f.Registered:
		return set(ClassContradictory, "git registers it, but its .git (%s) and git's admin entry do not name each other", f.Git)
	case f.Git == GitUnreadable:
		return set(ClassContradictory, "its .git cannot be read: %s", f.GitError)
	case f.Git == GitNone || f.Git == "":
		return set(ClassOrdinary, "no .git: an ordinary directory")
	case f.Git == GitFile && !f.CommonKnown:
		return set(ClassContradictory, "its .git file names no git directory that exists")
	case f.Git == GitFile && f.SameCommon:
		return set(ClassUnregistered, "its .git names this repository, but git registers no worktree there")
	case f.Git == GitFile:
		return set(ClassOtherRepository, "a linked worktree of another repository")
	case f.SameCommon:
		return set(ClassContradictory, "its .git directory is this repository's common dir")
	case f.Bare && len(f.Remotes) > 0:
		return set(ClassRemote, "a bare repository this repository's remote %s reads; never touched by migration", f.Remotes[0])
	case f.SharesHistory && f.Ahead > CloneWalkBound:
		return set(ClassClone, "an independent %sclone whose HEAD is more than %d commits ahead of the history this repository holds; never touched by migration", bareWord(f.Bare), CloneWalkBound)
	case f.SharesHistory && f.Ahead > 0:
		return set(ClassClone, "an independent %sclone whose HEAD is %d commit(s) ahead of the history this repository holds (work only it has); never touched by migration", bareWord(f.Bare), f.Ahead)
	case f.SharesHistory:
		return set(ClassClone, "an independent %sclone whose HEAD is a commit this repository holds; never touched by migration", bareWord(f.Bare))
	}
	if f.Ahead > CloneWalkBound {
		return set(ClassOtherRepository, "an independent repository none of whose last %d commits this repository holds", CloneWalkBound)
	}
	return set(ClassOtherRepository, "an independent repository with no history in common with this one")
}

// bareWord is "bare " for a bare repository.
func bareWord(bare bool) string {
	if bare {
		return "bare "
	}
	return ""
}
