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
	// this repository holds.
	SharesHistory bool `json:"shares_history,omitempty"`
	// Record is the live custody record that holds the path, if any.
	Record string `json:"record,omitempty"`
}

// Discovered is one classified place.
type Discovered struct {
	LegacyFacts
	Class  MigrateClass `json:"class"`
	Reason string       `json:"reason"`
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
	case f.SharesHistory:
		return set(ClassClone, "an independent repository holding this repository's history; never removed by migration")
	}
	return set(ClassOtherRepository, "an independent repository with no history in common with this one")
}
