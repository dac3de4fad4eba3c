package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// A chunk of trees is walked, decided, snapshotted, re-checked, journaled
// and deleted together: one process scan, one intent
// transaction and one outcome transaction per chunk. A chunk holds at most
// chunkTrees trees, and trees are added to it only while their walks hold
// fewer than chunkEntries entries of build output (what sweep holds in
// memory is bounded by that, however large each tree's output); no tree is
// re-checked against a process scan older than chunkAge (the rest of the
// chunk goes to the next one, scanned again).
const (
	chunkTrees   = 64
	chunkEntries = 1 << 18
	chunkAge     = time.Second
)

// pendingTree is one tree of a chunk: its snapshots (nil where a
// directory could not be read again) and what became of each directory.
type pendingTree struct {
	t     *Tree
	rec   machine.Record
	root  *os.Root
	snaps []*snapshot
}

// discardAll deletes the build output of trees, a chunk (of at most
// maxTrees) at a time.
func discardAll(ctx context.Context, e *steps.Env, trees []*Tree, scope observe.Scope, maxTrees int) error {
	for len(trees) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := discardChunk(ctx, e, trees[:min(len(trees), maxTrees)], scope)
		if err != nil {
			return err
		}
		trees = trees[n:]
	}
	return nil
}

// discardChunk takes trees from the front of trees (all of them, unless
// re-checking takes longer than chunkAge): it snapshots each tree's directories, then (one process scan for
// the chunk, the records and leases read again) observes each tree again
// and keeps only directories still recognised as the same kind in a tree
// still unleased and unused, journals every intent in one transaction,
// deletes, and journals every outcome in one transaction. It returns how
// many trees it took.
func discardChunk(ctx context.Context, e *steps.Env, trees []*Tree, scope observe.Scope) (int, error) {
	// After the check that found the trees idle (and the plan), before
	// any snapshot: what is written now is in the snapshot but changed
	// after the check, and is left.
	failpoint.Pause("sweep/before-snapshot")
	live, err := liveByID(e)
	if err != nil {
		return 0, err
	}
	var chunk []*pendingTree
	defer func() {
		for _, p := range chunk {
			if p.root != nil {
				p.root.Close()
			}
		}
	}()
	for _, t := range trees {
		p := &pendingTree{t: t}
		chunk = append(chunk, p)
		t.Discarded = make([]Discarded, len(t.Discard))
		for i, d := range t.Discard {
			t.Discarded[i].DiscardedDir = d
		}
		rec, ok := live[t.ID]
		if !ok {
			skipAll(t, "the record changed (another custody acts on it)")
			continue
		}
		p.rec = rec
		if t.walk == nil {
			skipAll(t, "the tree was not walked")
			continue
		}
		root, err := os.OpenRoot(rec.Path)
		if err != nil {
			skipAll(t, "the tree cannot be opened: "+err.Error())
			continue
		}
		p.root = root
		p.snaps = make([]*snapshot, len(t.Discard))
		for i, d := range t.Discard {
			s, err := t.walk.snapshot(d.Path, d.Kind)
			if err != nil {
				t.Discarded[i].Skipped = "it could not be read again: " + err.Error()
				continue
			}
			p.snaps[i] = &s
		}
	}
	// The re-check: every tree as it is now, after every snapshot.
	failpoint.Pause("sweep/before-recheck")
	scanned := time.Now()
	scope.Procs = e.ScanProcesses()
	leases, err := e.Store.Leases()
	if err != nil {
		return 0, err
	}
	if live, err = liveByID(e); err != nil {
		return 0, err
	}
	var intents []store.Event
	for k, p := range chunk {
		if k > 0 && time.Since(scanned) > chunkAge {
			// Re-checking took long enough that the scan no longer
			// speaks for what is now: the rest of the chunk is taken
			// again, snapshot and all, in the next one.
			for _, q := range chunk[k:] {
				if q.root != nil {
					q.root.Close()
				}
			}
			chunk = chunk[:k]
			break
		}
		if p.root == nil {
			continue
		}
		why, err := recheck(ctx, e, p, live, leases[p.rec.ID], scope)
		if err != nil {
			return 0, err
		}
		if why != "" {
			skipAll(p.t, why)
			p.snaps = nil
			continue
		}
		var dirs []machine.DiscardedDir
		for i, s := range p.snaps {
			if s != nil {
				dirs = append(dirs, machine.DiscardedDir{Path: p.t.Discard[i].Path, Kind: p.t.Discard[i].Kind, Bytes: s.bytes})
			}
		}
		if len(dirs) > 0 {
			intents = append(intents, store.Event{Record: p.rec.ID, Kind: machine.KindWorktree, Event: "sweep-discard", At: e.Now().UTC(), Actor: e.Actor,
				Detail: map[string]any{"path": p.rec.Path, "discard": dirs}})
		}
	}
	if len(intents) == 0 {
		return len(chunk), nil
	}
	if err := e.Store.AppendEvents(intents); err != nil {
		return 0, err
	}
	failpoint.At("sweep/after-intent")
	var outcomes []store.Event
	for _, p := range chunk {
		var done []Discarded
		for i, s := range p.snaps {
			if s == nil {
				continue
			}
			d := discardSnapshot(p.root, *s)
			out := &p.t.Discarded[i]
			out.Freed, out.Files, out.Kept = d.freed, d.files, d.kept
			done = append(done, *out)
		}
		if len(done) > 0 {
			outcomes = append(outcomes, store.Event{Record: p.rec.ID, Kind: machine.KindWorktree, Event: "swept", At: e.Now().UTC(), Actor: e.Actor,
				Detail: map[string]any{"path": p.rec.Path, "discarded": done}})
		}
	}
	if err := e.Store.AppendEvents(outcomes); err != nil {
		return 0, err
	}
	return len(chunk), nil
}

// liveByID is every live record, by id: one read of the state file for a
// whole chunk.
func liveByID(e *steps.Env) (map[string]machine.Record, error) {
	recs, err := e.Store.ListLive()
	if err != nil {
		return nil, err
	}
	m := make(map[string]machine.Record, len(recs))
	for _, r := range recs {
		m[r.ID] = r
	}
	return m, nil
}

// recheck says why the tree of p may not lose its build output now ("" when
// it may): its record (in live, the records as they are now) changed or is
// gone, a lease came, a process stands in it, or it cannot be observed;
// directories no longer recognised as the kind they were (classified again
// as plan classifies them, against the index as it is now: their shape and
// everything below them, classifyAgain) are marked skipped and dropped
// from p. What a directory must not hold (a .git, a special file, a link
// leading out) is looked for again here: an entry added since the check
// would itself be left by the deletion, but not the unchanged files beside
// it (decision 0265).
func recheck(ctx context.Context, e *steps.Env, p *pendingTree, live map[string]machine.Record, lease *machine.Lease, scope observe.Scope) (string, error) {
	rec, ok := live[p.rec.ID]
	if !ok || rec.Intent != nil || (rec.State != machine.StateActive && rec.State != machine.StateFinished) || rec.Path != p.rec.Path {
		return "the record changed (another custody acts on it)", nil
	}
	if lease.Live(e.Now()) {
		return "leased by " + lease.Holder + " since it was checked", nil
	}
	key := gitfiles.AdminKeyOf(e.Repo, rec.Path)
	if key == "" {
		return "it could not be observed again: " + filepath.Join(rec.Path, ".git") + " no longer leads to the tree's admin entry", nil
	}
	ents, err := observe.ReadIndex(ctx, e.Git, e.Repo, rec.Path, key)
	if err != nil {
		return "it could not be observed again: " + err.Error(), nil
	}
	tracked := trackedSet(ents)
	if scope.Procs != nil {
		ps, err := scope.Procs.Inside(rec.Path)
		if err != nil {
			return "it could not be observed again: " + err.Error(), nil
		}
		if len(ps) > 0 {
			return fmt.Sprintf("process %d (%s) uses it since it was checked", ps[0].PID, ps[0].Command), nil
		}
	}
	for i, d := range p.t.Discard {
		if p.snaps[i] == nil {
			continue
		}
		if kind := classifyAgain(p.root, rec.Path, d, *p.snaps[i], p.t.walk, tracked, scope.Disposable); kind != d.Kind {
			p.t.Discarded[i].Skipped = "it is no longer recognised as " + string(d.Kind) + " build output"
			p.snaps[i] = nil
		}
	}
	return "", nil
}

// skipAll marks every directory of t skipped for why.
func skipAll(t *Tree, why string) {
	for i := range t.Discarded {
		t.Discarded[i].Skipped = why
	}
}
