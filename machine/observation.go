package machine

// PathState is what lstat said about a path.
type PathState string

// The outcomes of observing a path. Only ENOENT is PathAbsent; every other
// error (EACCES, EIO, …) is PathUnknown.
const (
	PathPresent PathState = "present"
	PathAbsent  PathState = "absent"
	PathUnknown PathState = "unknown"
)

// WorktreeObservation is one fresh observation of a worktree: git's
// registration, the filesystem, status, ownership marker, lease and remote
// proof. It is a value; observe builds it, machine reads it.
type WorktreeObservation struct {
	Path      string    `json:"path"`
	PathState PathState `json:"path_state"`
	PathError string    `json:"path_error,omitempty"`
	IsDir     bool      `json:"is_dir"`
	IsSymlink bool      `json:"is_symlink,omitempty"`
	Dev       uint64    `json:"dev,omitempty"`
	Ino       uint64    `json:"ino,omitempty"`

	// MovedTo is where git now registers the record's admin key, when the
	// tree was moved away from Path (`git worktree move`).
	MovedTo string `json:"moved_to,omitempty"`
	// Registered is true when `git worktree list` lists Path.
	Registered bool   `json:"registered"`
	AdminKey   string `json:"admin_key,omitempty"`
	// AdminPresent is true when <common>/worktrees/<record id> exists.
	AdminPresent bool   `json:"admin_present"`
	Head         string `json:"head,omitempty"`
	Branch       string `json:"branch,omitempty"`
	Detached     bool   `json:"detached,omitempty"`
	Locked       bool   `json:"locked,omitempty"`
	LockReason   string `json:"lock_reason,omitempty"`
	Prunable     bool   `json:"prunable,omitempty"`
	// OtherEntries lists git's admin entries other than the tree's own
	// (neither the record's key nor the one Path/.git names) whose gitdir
	// names Path (AdminEntry).
	OtherEntries []AdminEntry `json:"other_entries,omitempty"`

	// Marker is the content of the ready marker in the admin entry, "" when
	// absent.
	Marker string `json:"marker,omitempty"`
	// BranchTip is the commit refs/heads/<record branch> points at, "" when
	// the branch does not exist.
	BranchTip string `json:"branch_tip,omitempty"`
	// BranchHoldsLastKnown is true when BranchTip has the record's last
	// known commit as an ancestor (or is it). It is observed only for a
	// tree that vanished: the branch then carries the tree's work past
	// what custody last knew (VanishedHead).
	BranchHoldsLastKnown bool `json:"branch_holds_last_known,omitempty"`
	// LastKnownMissing is true when git no longer has the commit a
	// vanished tree's settlement asks about (VanishedHead), its branch not
	// holding it, after the proof search looked for it on every remote: no
	// ref here can hold it, and no remote that answered did. It is observed
	// only for a tree that vanished.
	LastKnownMissing bool `json:"last_known_missing,omitempty"`

	Status Status `json:"status"`
	// EnvOwn is true when the tree's .env holds nothing but the lines
	// custody wrote: custody's own state, dropped from Status.Ignored.
	EnvOwn    bool   `json:"env_own,omitempty"`
	StatusErr string `json:"status_error,omitempty"`
	// Content lists what walking the tree on the filesystem found that HEAD
	// does not hold byte for byte and status did not already report
	// (AccountContent). It is filled whenever status is observed.
	Content []Unaccounted `json:"content,omitempty"`
	// Discarded lists the untracked or ignored directories recognised as
	// regenerable build output (ClassifyBuildOutput): what is below them
	// does not keep the tree, and a removal deletes them with it.
	Discarded []DiscardedDir `json:"discarded,omitempty"`

	Lease *Lease `json:"lease,omitempty"`

	Remote   RemoteEvidence `json:"remote"`
	Proof    *Proof         `json:"proof,omitempty"`
	ProofErr string         `json:"proof_error,omitempty"`

	// Hidden lists state that `git status` does not report but removal
	// would destroy (a seam filled by later observers).
	Hidden []Hidden `json:"hidden,omitempty"`
	// InUse lists processes found inside the tree.
	InUse []Process `json:"in_use,omitempty"`
	// TimedOut lists the commands that ran out of their deadline while
	// the tree was observed: what they would have said is unknown, so
	// the tree is kept (observation-timed-out).
	TimedOut []TimedOut `json:"timed_out,omitempty"`
}

// TimedOut is a command that was still running at its deadline while a
// tree was observed: it and every process it started (a filter, hook or
// helper git runs) were killed.
type TimedOut struct {
	// Command is the command line, each argument quoted as a shell takes
	// it back.
	Command string `json:"command"`
	// Dir is where it ran.
	Dir string `json:"dir,omitempty"`
	// Deadline is the time it was given, as a Go duration ("5m0s").
	Deadline string `json:"deadline"`
}

// Status is the parsed `git status --porcelain=v2` of a tree.
type Status struct {
	// Changed lists tracked paths with staged or unstaged changes.
	Changed []string `json:"changed,omitempty"`
	// Staged counts the changed entries whose index differs from HEAD.
	Staged int `json:"staged,omitempty"`
	// Unmerged lists paths with unresolved conflicts.
	Unmerged []string `json:"unmerged,omitempty"`
	// StagedDiffers lists changed paths whose staged content differs from
	// both HEAD and the working copy (both status columns set).
	StagedDiffers []string `json:"staged_differs,omitempty"`
	// Deleted lists tracked paths deleted from the index or the working
	// copy (what an interrupted removal leaves).
	Deleted []string `json:"deleted,omitempty"`
	// Submodules lists submodules status reports with changes.
	Submodules []string `json:"submodules,omitempty"`
	Untracked  []string `json:"untracked,omitempty"`
	Ignored    []string `json:"ignored,omitempty"`
}

// Clean reports whether status saw nothing at all.
func (s Status) Clean() bool {
	return len(s.Changed) == 0 && len(s.Unmerged) == 0 && len(s.Untracked) == 0 && len(s.Ignored) == 0
}

// RemoteEvidence says which remotes were asked and which did not answer.
type RemoteEvidence struct {
	Remotes     []string        `json:"remotes,omitempty"`
	Unavailable []RemoteFailure `json:"unavailable,omitempty"`
	// Push is where a retry pushes unpublished commits so that a remote
	// custody reads advertises them afterwards; nil when it was not
	// worked out (pushRemote's choice is used then).
	Push *PushTarget `json:"push,omitempty"`
}

// PushTarget is where a push lands so that a remote custody reads
// advertises it afterwards: the remote Remote by name (its push URLs
// include where Proves is read from), or the URL itself when no remote's
// push lands there from inside a tree (a relative URL, resolved; or a
// pushurl elsewhere), or, with AddAs, the remote Remote after its push URL
// URL is added as remote AddAs, which custody then reads. The zero value
// says no push custody can work out lands where a remote it reads
// advertises. It never holds credentials: a URL with any is never chosen.
type PushTarget struct {
	Remote string `json:"remote,omitempty"`
	URL    string `json:"url,omitempty"`
	AddAs  string `json:"add_as,omitempty"`
	// Proves names the remote whose advertisement holds the push.
	Proves string `json:"proves,omitempty"`
	// Why says, for the zero target, why no push is advised.
	Why string `json:"why,omitempty"`
}

// RemoteFailure is a remote that could not be read.
type RemoteFailure struct {
	Remote string `json:"remote"`
	Error  string `json:"error"`
}

// Hidden is one piece of state hidden from `git status`.
type Hidden struct {
	Code   Code   `json:"code"`
	Path   string `json:"path"`
	Detail string `json:"detail,omitempty"`
	// Admin is the admin entry holding Path, for a member of the tree's
	// admin entry named by its own path (unknown-admin-file,
	// admin-lock-file); "" otherwise.
	Admin string `json:"admin,omitempty"`
}

// Process is a process found using a tree.
type Process struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Via     string `json:"via"`
}
