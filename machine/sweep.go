package machine

import (
	"fmt"
	"time"
)

// SweepFacts is what custody sweep observed of one worktree record before
// deciding what to do with it: its lease, the newest change of any entry
// in the tree, the processes found in it, the build output the plan's
// classifier recognised there, and what plan said of the tree.
type SweepFacts struct {
	Record Record
	// Lease is the record's lease, live or expired, nil when it has none.
	Lease *Lease
	// PathState is what lstat found at the record's path.
	PathState PathState
	// Newest is the latest modification or change time of any entry of
	// the tree (the tree's root included), and NewestPath that entry,
	// relative to the tree. WalkErr says why the walk could not read the
	// whole tree ("" when it did).
	Newest     time.Time
	NewestPath string
	WalkErr    string
	// Observed says the tree was observed (status, processes, build
	// output); ObserveErr why that failed when it did.
	Observed   bool
	ObserveErr string
	InUse      []Process
	Build      []DiscardedDir
	// WorkBytes is the size of the tree's changed, untracked and ignored
	// files, its build output left out: what an archive of it must hold
	// beside its commits.
	WorkBytes int64
	// Plan is what plan decided for the tree, when plan ran and the
	// record is among its items; PlanErr says why plan could not decide.
	Plan    *PlanItem
	PlanErr string
}

// SweepTree is what custody sweep does with one tree: nothing (Busy or
// Skipped with a reason), or discard its build output and capture an
// archive of its unpublished work. It never removes a tree.
type SweepTree struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	// State is the record's state; sweep leaves it as it is.
	State State `json:"state"`
	// Idle says the tree is idle: no live lease, no process in it, no
	// entry changed within the idle period. Why says why it is not, or
	// why it is left alone.
	Idle bool   `json:"idle"`
	Why  string `json:"why,omitempty"`
	// Discard lists the build output sweep discards (or would, with
	// --dry-run), recognised by structure as plan recognises it.
	Discard []DiscardedDir `json:"discard"`
	// Archive says sweep captures an archive of the tree's unpublished
	// work (a finished tree, or one whose lease expired, that plan keeps
	// only for reasons an archive answers); ArchiveWhy says why it does
	// not, when the tree is idle and has work no remote holds.
	Archive    bool   `json:"archive"`
	ArchiveWhy string `json:"archive_why,omitempty"`
}

// DecideSweep decides what custody sweep does with the tree of f at now,
// for trees idle longer than idle. A tree is idle when it has no live
// lease, no process stands in it and no entry of it changed within idle;
// a tree that is not (or that custody cannot observe fully: unknown is
// never idle) is left alone with the reason. An idle tree's recognised
// build output is discarded; an idle tree that is finished, or whose lease
// expired, is archived when plan keeps it only for reasons an archive
// answers (CaptureCovers) and its work fits in maxArchive bytes (0: no
// bound). Records that are not worktrees, or not active or finished, or
// that carry an intent, are skipped.
func DecideSweep(f SweepFacts, now time.Time, idle time.Duration, maxArchive int64) SweepTree {
	r := f.Record
	t := SweepTree{ID: r.ID, Path: r.Path, State: r.State, Discard: []DiscardedDir{}}
	leave := func(format string, args ...any) SweepTree {
		t.Why = fmt.Sprintf(format, args...)
		return t
	}
	switch {
	case r.Kind != "" && r.Kind != KindWorktree:
		return leave("not a worktree")
	case r.State != StateActive && r.State != StateFinished:
		return leave("%s, not active or finished", r.State)
	case r.Intent != nil:
		return leave("an operation is in flight (%s); custody resume settles it", r.Intent.Kind)
	case f.PathState != PathPresent:
		return leave("its path is %s", f.PathState)
	case f.Lease.Live(now):
		return leave("leased by %s until %s", f.Lease.Holder, f.Lease.Expires.UTC().Format(time.RFC3339))
	case f.WalkErr != "":
		return leave("its files could not all be read, so when it last changed is unknown: %s", f.WalkErr)
	case now.Sub(f.Newest) < idle:
		what := f.NewestPath
		if what == "" || what == "." {
			what = "the tree"
		}
		return leave("%s changed %s ago (idle means nothing changed for %s)", what, roundAge(now.Sub(f.Newest)), idle)
	case f.ObserveErr != "":
		return leave("it could not be observed: %s", f.ObserveErr)
	case !f.Observed:
		return leave("it was not observed")
	case len(f.InUse) > 0:
		p := f.InUse[0]
		return leave("process %d (%s) uses it via its %s", p.PID, p.Command, p.Via)
	}
	t.Idle = true
	t.Discard = append(t.Discard, f.Build...)
	expired := f.Lease != nil && !f.Lease.Live(now)
	if r.State != StateFinished && !expired {
		return t
	}
	switch {
	case f.PlanErr != "":
		t.ArchiveWhy = "plan could not decide whether its work is published: " + f.PlanErr
	case f.Plan == nil:
		t.ArchiveWhy = "plan did not assess it"
	case f.Plan.Action != ActionKeep:
		// Proven (or settled): its work is elsewhere, nothing to archive.
	case len(f.Plan.Refusals) == 0:
	case CaptureCovers(f.Plan.Refusals) && maxArchive > 0 && f.WorkBytes > maxArchive:
		t.ArchiveWhy = fmt.Sprintf("its unpublished files hold %d bytes, more than --max-archive-size %d; custody finish --archive %s captures it by hand", f.WorkBytes, maxArchive, QuoteArg(r.ID))
	case CaptureCovers(f.Plan.Refusals):
		t.Archive = true
	case archiveAnswers(f.Plan.Refusals):
		r := f.Plan.Refusals[0]
		t.ArchiveWhy = fmt.Sprintf("plan keeps it for a reason an archive does not answer: [%s] %s", r.Code, r.Message)
	}
	return t
}

// archiveAnswers reports whether any of rs is a reason an archive answers:
// the tree has work no remote holds.
func archiveAnswers(rs []Refusal) bool {
	for _, r := range rs {
		if archiveCovers[r.Code] {
			return true
		}
	}
	return false
}

// roundAge is d rounded for a person: seconds under a minute, minutes
// under an hour, else hours.
func roundAge(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return d.Round(time.Second)
	case d < time.Hour:
		return d.Round(time.Minute)
	}
	return d.Round(time.Hour)
}
