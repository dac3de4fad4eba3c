package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
)

// DefaultIdle is how long nothing in a tree must have changed before
// sweep calls it idle, unless --idle says otherwise.
const DefaultIdle = 24 * time.Hour

// Options are what a person chose for one sweep.
type Options struct {
	// Idle is how long a tree must have been untouched; zero means
	// DefaultIdle.
	Idle time.Duration
	// DryRun decides and reports, and changes nothing.
	DryRun bool
	// MaxArchiveSize bounds the unpublished files an archive is captured
	// of, in bytes; zero means no bound.
	MaxArchiveSize int64
	// chunkTrees and chunkEntries bound a chunk (zero: the constants of
	// the same names); tests make them small.
	chunkTrees, chunkEntries int
}

// Result is what one sweep did, or would do with DryRun.
type Result struct {
	DryRun bool   `json:"dry_run"`
	Idle   string `json:"idle"`
	Trees  []Tree `json:"trees"`
	// Bytes is what the discarded build output held (with DryRun: what
	// it holds and would free).
	Bytes int64 `json:"bytes"`
	// Archived counts the archives captured (with DryRun: to capture).
	Archived int `json:"archived"`
}

// Tree is one tree's part of a sweep: the decision, what was discarded
// and the archive captured.
type Tree struct {
	machine.SweepTree
	// Discarded is what each build directory's deletion did (empty with
	// DryRun).
	Discarded []Discarded `json:"discarded,omitempty"`
	// ArchiveID is the archive captured; ArchiveRefusal why a capture
	// sweep tried was refused.
	ArchiveID      string           `json:"archive_id,omitempty"`
	ArchiveRefusal *machine.Refusal `json:"archive_refusal,omitempty"`
	// walk is the check's walk of the tree: what the deletion goes by.
	walk *treeWalk
}

// Discarded is one build directory sweep deleted: what it was recognised
// as, the bytes its deleted files held, and what it left (entries written
// after the check, and the directories holding them). Skipped says why
// the directory was not deleted at all, when the re-check before deletion
// no longer recognised it.
type Discarded struct {
	machine.DiscardedDir
	Freed   int64    `json:"freed"`
	Files   int      `json:"files"`
	Kept    []string `json:"kept,omitempty"`
	Skipped string   `json:"skipped,omitempty"`
}

// Sweep decides, for every live worktree record, whether its tree is idle
// (machine.DecideSweep over a fresh observation), discards the recognised
// build output of each idle tree and captures an archive of each idle
// finished or lease-expired tree whose work no remote holds. With
// opts.DryRun it only decides. Before each tree's deletions the tree is
// observed again and each directory must still be the build output it was
// recognised as, with no lease and no process in the tree; the deletion
// is journaled (an intent entry before, the outcome after) and goes entry
// by entry against a snapshot taken before that re-check, so nothing
// written after the snapshot is deleted, and nothing in the snapshot that
// changed after the check found the tree idle.
func Sweep(ctx context.Context, e *steps.Env, opts Options) (Result, error) {
	idle := opts.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	res := Result{DryRun: opts.DryRun, Idle: idle.String(), Trees: []Tree{}}
	recs, err := e.Store.ListLive()
	if err != nil {
		return res, err
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return res, err
	}
	scope, err := e.AssessScope(nil)
	if err != nil {
		return res, err
	}
	scope.Proof, scope.Hidden = false, false
	now := e.Now()
	listing, listErr := e.Git.ConfigList(ctx, e.Repo)
	g := gatherer{e: e, scope: scope, now: now, idle: idle, listing: listing, listErr: listErr}
	// The plan, asked once, and only when an idle tree may be archived:
	// it decides whether the tree's work is published.
	var plan *machine.Plan
	var planErr error
	// Trees are taken a chunk at a time, decided and their output
	// discarded before the next chunk is walked: what the walks hold (the
	// identity of every entry of every build directory) never grows with
	// the fleet.
	maxTrees, maxEntries := cmp.Or(opts.chunkTrees, chunkTrees), cmp.Or(opts.chunkEntries, chunkEntries)
	for len(recs) > 0 {
		first := len(res.Trees)
		held := 0 // entries of build output the chunk's walks hold
		for ; len(recs) > 0 && len(res.Trees)-first < maxTrees && held < maxEntries; recs = recs[1:] {
			rec := recs[0]
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if rec.Kind != "" && rec.Kind != machine.KindWorktree {
				continue
			}
			f, w := g.gather(ctx, rec, leases[rec.ID])
			if t := machine.DecideSweep(f, now, idle, 0); t.Idle && (rec.State == machine.StateFinished || f.Lease != nil) {
				if plan == nil && planErr == nil {
					p, err := steps.Plan(ctx, e)
					plan, planErr = &p, err
				}
				if planErr != nil {
					f.PlanErr = planErr.Error()
				} else if it, ok := plan.Item(rec.ID); ok {
					f.Plan = &it
				}
			}
			t := Tree{SweepTree: machine.DecideSweep(f, now, idle, opts.MaxArchiveSize)}
			if w != nil && t.Idle && len(t.Discard) > 0 && !opts.DryRun {
				w.keepOnly(t.Discard)
				t.walk = w
				held += len(w.ents)
			}
			for _, d := range t.Discard {
				res.Bytes += d.Bytes
			}
			if t.Archive {
				res.Archived++
			}
			res.Trees = append(res.Trees, t)
		}
		if opts.DryRun {
			continue
		}
		var work []*Tree
		for i := first; i < len(res.Trees); i++ {
			if t := &res.Trees[i]; t.Idle && len(t.Discard) > 0 {
				work = append(work, t)
			}
		}
		err := discardAll(ctx, e, work, scope, maxTrees)
		for i := first; i < len(res.Trees); i++ {
			res.Trees[i].walk = nil
		}
		if err != nil {
			return res, err
		}
	}
	if opts.DryRun {
		return res, nil
	}
	for i := range res.Trees {
		t := &res.Trees[i]
		if !t.Idle || !t.Archive {
			continue
		}
		a, err := e.Archives.Capture(ctx, e, t.ID)
		var r *machine.Refusal
		switch {
		case errors.As(err, &r):
			t.ArchiveRefusal = r
			res.Archived--
		case err != nil:
			return res, fmt.Errorf("sweep %s: archive: %w", t.ID, err)
		default:
			t.ArchiveID = a.ID
		}
	}
	if !opts.DryRun {
		res.Bytes = 0
		for _, t := range res.Trees {
			for _, d := range t.Discarded {
				res.Bytes += d.Freed
			}
		}
	}
	return res, nil
}

// gatherer is what gathering every tree's facts shares: the command's
// environment and scope, the time and idle threshold, and git's
// configuration as one listing (or the error reading it).
type gatherer struct {
	e       *steps.Env
	scope   observe.Scope
	now     time.Time
	idle    time.Duration
	listing []byte
	listErr error
}

// gather observes what DecideSweep needs of rec, reading no more than the
// decision needs: a leased tree is not walked, and a tree changed within
// idle is not observed further. An idle tree that may only lose its build
// output (active, with no lease that expired) is decided from its index
// and the walk, without git, whenever git's report of its untracked files
// would not change the answer (observe.BuildOutputUnreported); any other
// is observed as plan observes it. The walk is returned with the facts:
// it is the snapshot the deletion goes by.
func (g gatherer) gather(ctx context.Context, rec machine.Record, lease *machine.Lease) (machine.SweepFacts, *treeWalk) {
	e := g.e
	f := machine.SweepFacts{Record: rec, Lease: lease}
	f.PathState = hostio.Lstat(rec.Path).State
	if f.PathState != machine.PathPresent || lease.Live(g.now) || rec.Intent != nil {
		return f, nil
	}
	key := gitfiles.AdminKeyOf(e.Repo, rec.Path)
	var tracked *machine.TrackedSet
	if key != "" {
		if ents, err := gitfiles.ReadIndexFile(filepath.Join(e.Repo.AdminDir(key), "index")); err == nil {
			t := trackedSet(ents)
			tracked = &t
		}
	}
	w := walkTree(rec.Path, tracked)
	f.Newest, f.NewestPath, f.WalkErr = w.newest, w.newestPath, w.err
	if f.WalkErr != "" || g.now.Sub(f.Newest) < g.idle {
		return f, nil
	}
	expired := lease != nil && !lease.Live(g.now)
	if tracked != nil && rec.State == machine.StateActive && !expired &&
		observe.UntrackedByWalk(e.Repo, rec.Path, e.Repo.AdminDir(key), g.listing, g.listErr) {
		src := &walkedBuild{dir: rec.Path, w: &w, tracked: *tracked}
		if build, ok := observe.BuildOutputUnreported(src, w.untracked, *tracked, g.scope.Disposable); ok {
			f.Observed, f.Build = true, build
			if g.scope.Procs != nil {
				ps, err := g.scope.Procs.Inside(rec.Path)
				if err != nil {
					f.Observed, f.ObserveErr = false, err.Error()
				}
				f.InUse = ps
			}
			return f, &w
		}
	}
	obs, _, err := e.ObserveRecord(ctx, rec, g.scope)
	switch {
	case err != nil:
		f.ObserveErr = err.Error()
		return f, nil
	case obs.StatusErr != "":
		f.ObserveErr = obs.StatusErr
		return f, nil
	case len(obs.TimedOut) > 0:
		f.ObserveErr = obs.TimedOut[0].Command + " did not answer within " + obs.TimedOut[0].Deadline
		return f, nil
	}
	for _, h := range obs.Hidden {
		if h.Code == machine.CodeInUse {
			// The processes could not all be looked at: whether one
			// stands in the tree is unknown.
			f.ObserveErr = h.Detail
			return f, nil
		}
	}
	f.Observed, f.InUse, f.Build = true, obs.InUse, obs.Discarded
	f.WorkBytes = workBytes(rec.Path, obs.Status, obs.Discarded)
	return f, &w
}

// trackedSet is the tracked set of the index entries ents.
func trackedSet(ents []gitfiles.IndexEntry) machine.TrackedSet {
	tracked := make([]machine.TrackedEntry, 0, len(ents))
	for _, e := range ents {
		tracked = append(tracked, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	return machine.NewTrackedSet(tracked)
}

// workBytes is the size of the regular files an archive of the tree at dir
// would hold as its files: those status names changed, untracked or
// ignored, walked where it names a directory, leaving out build output.
func workBytes(dir string, st machine.Status, build []machine.DiscardedDir) int64 {
	var n int64
	under := func(rel string) bool {
		for _, b := range build {
			if rel == b.Path || strings.HasPrefix(rel, strings.TrimSuffix(b.Path, "/")+"/") {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, list := range [][]string{st.Changed, st.Untracked, st.Ignored, st.StagedDiffers} {
		for _, rel := range list {
			rel = strings.TrimSuffix(rel, "/")
			if seen[rel] || under(rel) {
				continue
			}
			seen[rel] = true
			_ = filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				r, _ := filepath.Rel(dir, p)
				if under(filepath.ToSlash(r)) {
					return fs.SkipDir
				}
				if d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						n += fi.Size()
					}
				}
				return nil
			})
		}
	}
	return n
}
