// Package output holds the shapes custody prints: its exit codes, the
// --json envelopes, the hook envelope, and the result of each command
// whose result is custody's own type rather than another package's. package main writes
// them (under its own names, which alias these); the end-to-end tests
// below cmd/custody read the binary's output back into them.
package output

import (
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/store"
)

// EnvelopeVersion is the version of the --json envelope shape.
const EnvelopeVersion = 1

// Exit codes (documented in docs/exit-codes.md and every command's help).
const (
	// ExitOK is a command that did all its work.
	ExitOK = 0
	// ExitError is an error, including usage and bad input; nothing was
	// changed.
	ExitError = 1
	// ExitPlanned is plan --detailed-exitcode with removals planned.
	ExitPlanned = 2
	// ExitPending is a command that did its work but left something
	// refused or pending.
	ExitPending = 3
	// ExitHangup, ExitInterrupt and ExitTerminated are a command that an
	// interrupt stopped: 128 plus the number of the signal that arrived
	// (Interrupted), as a shell reports a process the signal ended.
	ExitHangup     = 129 // SIGHUP: the terminal closed
	ExitInterrupt  = 130 // SIGINT: Ctrl-C
	ExitTerminated = 143 // SIGTERM: kill's default
)

// Interrupted is the exit code of a command that the signal numbered
// signo interrupted: 128 + signo, so 129 for SIGHUP, 130 for SIGINT and
// 143 for SIGTERM.
func Interrupted(signo int) int { return 128 + signo }

// OKEnvelope is the --json envelope of a command that did its work, on
// stdout.
type OKEnvelope struct {
	Version int    `json:"version"`
	OK      bool   `json:"ok"`
	Command string `json:"command"`
	Result  any    `json:"result"`
}

// ErrEnvelope is the --json envelope of a command that failed, on stderr.
type ErrEnvelope struct {
	Version int       `json:"version"`
	OK      bool      `json:"ok"`
	Error   ErrorBody `json:"error"`
}

// ErrorBody is the one-paragraph body of an error: a stable code, what
// happened, the path it concerns and the command to retry with.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	Retry   string `json:"retry,omitempty"`
}

// ListEntry is one record in the result of list.
type ListEntry struct {
	ID     string          `json:"id"`
	Kind   machine.Kind    `json:"kind"`
	State  machine.State   `json:"state"`
	Path   string          `json:"path"`
	Branch string          `json:"branch"`
	Intent *machine.Intent `json:"intent"`
	// Status is list's one word on the tree (machine.TreeStatus).
	Status machine.TreeStatus `json:"status"`
	// StatusCount is the count the word carries (unpushed 3, behind 2),
	// null when it carries none or it was not counted.
	StatusCount *int `json:"status_count"`
	// CreatedAt is when the record was made; list's AGE counts from it.
	CreatedAt time.Time `json:"created_at"`
	// Lease is the lease on the tree, live or not (null: none).
	Lease *machine.Lease `json:"lease"`
	// Glance is what list read of the tree (null for a tombstoned record,
	// which is not looked at).
	Glance *machine.Glance `json:"glance"`
}

// ListResult is the result of list.
type ListResult struct {
	Records []ListEntry `json:"records"`
}

// RepositoriesResult is the result of list --all-repos.
type RepositoriesResult struct {
	// Index is the index of repositories that was read.
	Index        string              `json:"index"`
	Repositories []RepositorySummary `json:"repositories"`
}

// RepositorySummary is one repository of list --all-repos: its paths, and
// what list counts of its trees by state and by status.
type RepositorySummary struct {
	CommonDir    string `json:"common_dir"`
	MainCheckout string `json:"main_checkout"`
	// Outcome is "listed", "missing" (the repository is gone) or "error"
	// (Error says why it could not be listed).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Trees counts the live records.
	Trees int `json:"trees"`
	// States and Statuses count the live records by state and by
	// list's word.
	States   map[machine.State]int      `json:"states"`
	Statuses map[machine.TreeStatus]int `json:"statuses"`
}

// TreePathResult is the result of path and switch: the tree's id and its
// path, exactly the bytes of the record.
type TreePathResult struct {
	ID   string `json:"id"`
	Path string `json:"path"`
}

// WordsResult is the result of __complete: the words a shell's completion
// offers.
type WordsResult struct {
	Words []string `json:"words"`
}

// ShowResult is the result of show.
type ShowResult struct {
	machine.Record
	// Intent is always present (null when there is none), unlike in the
	// stored record.
	Intent      *machine.Intent              `json:"intent"`
	Observation *machine.WorktreeObservation `json:"observation,omitempty"`
	Verdict     *machine.Verdict             `json:"verdict,omitempty"`
	Journal     []store.Entry                `json:"journal"`
	Resources   []machine.Resource           `json:"resources"`
}

// ArchiveListResult is the result of archive list.
type ArchiveListResult struct {
	Root     string                 `json:"root"`
	Archives []archive.ArchiveCheck `json:"archives"`
}

// Pending reports whether an archive did not verify.
func (r ArchiveListResult) Pending() bool {
	for _, c := range r.Archives {
		if c.Pending() {
			return true
		}
	}
	return false
}

// FinishArchiveResult is what `custody finish --archive` did: each
// record's finish, then the archive of each tree that finished.
type FinishArchiveResult struct {
	steps.Outcomes
	Archives []archive.ArchiveCreated `json:"archives"`
}

// RemoveResult is the result of remove: what became of each tree named,
// in the order named.
type RemoveResult struct {
	Trees []RemoveTree `json:"trees"`
	// MainCheckout is the repository's main checkout, and CwdGone says
	// that the directory custody ran in went with a tree it removed: a
	// shell standing there goes to MainCheckout (the function custody
	// shell-init prints does).
	MainCheckout string `json:"main_checkout"`
	CwdGone      bool   `json:"cwd_gone"`
	// StoppedAt is the tree an interrupt stopped remove at (custody resume
	// settles what it left), and NotStarted the trees it did not begin.
	StoppedAt  string   `json:"stopped_at,omitempty"`
	NotStarted []string `json:"not_started,omitempty"`
}

// Pending reports whether a tree named stays (or a resource of a removed
// tree was refused), or remove was interrupted before it went through
// them all: exit 3.
func (r RemoveResult) Pending() bool {
	if r.StoppedAt != "" || len(r.NotStarted) > 0 {
		return true
	}
	for _, t := range r.Trees {
		if t.Pending() {
			return true
		}
	}
	return false
}

// RemoveTree is what remove did with one tree.
type RemoveTree struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	// Outcome is removed, settled (its directory was gone already) or
	// already-done (its record was tombstoned before) when the tree is
	// gone; kept when it stays.
	Outcome machine.Outcome `json:"outcome"`
	// State is the state a kept tree is left in: active again when it was
	// active, finished when it was finished.
	State machine.State `json:"state,omitempty"`
	// Proof is what let the tree go; Settlement what was proven of a
	// tree whose directory was gone.
	Proof      *machine.Proof      `json:"proof,omitempty"`
	Settlement *machine.Settlement `json:"settlement,omitempty"`
	// Branch is what the removal did with the tree's branch (a deleted
	// branch names the commit it pointed at), Recovered the recovery refs
	// it wrote and Resources the tree's resources it tore down.
	Branch    *steps.BranchResult     `json:"branch,omitempty"`
	Recovered []steps.RecoveredRef    `json:"recovered,omitempty"`
	Resources []steps.ResourceOutcome `json:"resources,omitempty"`
	// Archive is the archive remove --archive captured first: what proves
	// the tree, and what custody archive restore rebuilds it from.
	Archive *steps.CapturedArchive `json:"archive,omitempty"`
	// Refusal is the first reason a kept tree stays, Refusals every
	// reason, each with its retry; Next is the command that removes the
	// tree once they are done (custody remove ID).
	Refusal  *machine.Refusal  `json:"refusal,omitempty"`
	Refusals []machine.Refusal `json:"refusals,omitempty"`
	Next     string            `json:"next,omitempty"`
}

// Pending reports whether the tree stays, or a resource of it was
// refused.
func (t RemoveTree) Pending() bool {
	if t.Refusal != nil || !t.Outcome.Settled() {
		return true
	}
	for _, r := range t.Resources {
		if r.Refusal != nil {
			return true
		}
	}
	return false
}

// DoctorResult is what doctor found.
type DoctorResult struct {
	State    string          `json:"state"`
	Problems []store.Problem `json:"problems"`
	// Stuck are the records that can never progress on their own, each
	// with the command that settles it (each is a problem too).
	Stuck []steps.StuckRecord `json:"stuck"`
	// InProgress are the records whose intent another live custody on
	// this host is carrying out now: its work, not a problem.
	InProgress []steps.LiveIntent `json:"in_progress"`
	// Upgraded is the schema upgrade opening the state file ran, if any.
	Upgraded *store.Upgrade `json:"upgraded,omitempty"`
	// Readable counts, for a state file too damaged to open, the entries
	// each bucket still holds.
	Readable map[string]int `json:"readable,omitempty"`
}

// Pending reports whether doctor found a problem (exit 3).
func (r DoctorResult) Pending() bool { return len(r.Problems) > 0 || len(r.Stuck) > 0 }

// HookProtocol is the version of the envelope every hook prints. A change
// of its shape bumps it; agents' hook configurations depend on it.
const HookProtocol = 1

// HookEnvelope is what a hook prints on stdout, whatever happened.
type HookEnvelope struct {
	HookProtocol int    `json:"hook_protocol"`
	OK           bool   `json:"ok"`
	Hook         string `json:"hook"`
	// Outcome is a machine.LeaseOutcome for the lease hooks; "ignored"
	// when there is no tree to act on, "refused" or "error" otherwise.
	Outcome string `json:"outcome"`
	ID      string `json:"id,omitempty"`
	Path    string `json:"path,omitempty"`
	Session string `json:"session,omitempty"`
	// Lease is the tree's lease after the hook (absent when none).
	Lease   *machine.Lease   `json:"lease,omitempty"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
	// Refusals are every reason a retired tree was kept.
	Refusals []machine.Refusal `json:"refusals,omitempty"`
	Error    *ErrorBody        `json:"error,omitempty"`
	// Logged says where a refusal or an error was logged: "journal", or
	// "stderr" when the store could not take it.
	Logged string            `json:"logged,omitempty"`
	Ensure *HookEnsureResult `json:"ensure,omitempty"`
	// Removal is what worktree-remove's apply did.
	Removal *steps.Outcome `json:"removal,omitempty"`
}

// HookEnsureResult is what session-start --ensure ran.
type HookEnsureResult struct {
	Resources []steps.ResourceOutcome `json:"resources"`
	Error     *ErrorBody              `json:"error,omitempty"`
}
