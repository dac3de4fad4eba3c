package steps

import (
	"context"
	"sync"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// ListRow is one record as custody list shows it: the record, its lease,
// its glance (nil for a tombstoned record, which is not looked at) and the
// one word list says of it.
type ListRow struct {
	Record  machine.Record
	Lease   *machine.Lease
	Glance  *machine.Glance
	Verdict machine.GlanceVerdict
}

// ListOptions say which records List reads and how it reports them.
type ListOptions struct {
	// All includes tombstoned records (read, never looked at).
	All bool
	// Workers bounds how many trees are looked at once (zero: one per
	// processor).
	Workers int
	// Start, when set, receives the rows as soon as the records are read,
	// before any tree is looked at (no Glance yet, Verdict from the record
	// alone): what a table needs to size its columns.
	Start func(rows []ListRow)
	// Row, when set, receives each row as soon as it and every row before
	// it are complete, in the records' order, one call at a time.
	Row func(i int, r ListRow)
}

// List reads every record (tombstoned ones only with All) and glances at
// each live record's tree (observe.GlanceFiles, then Glancing.Finish) on a
// bounded pool of workers: from git's files alone where they show the
// tree clean, else with one git process for the tree, plus at most two for
// the repository, each asked once for every tree that needs it (the trees
// of HEADs whose commits are packed; the commits no remote-tracking ref
// holds, for the branches without an upstream). It writes nothing. The
// rows keep the store's order.
func List(ctx context.Context, e *Env, opt ListOptions) ([]ListRow, error) {
	list := e.Store.ListLive // tombstoned records are not read unless asked for
	if opt.All {
		list = e.Store.List
	}
	recs, err := list()
	if err != nil {
		return nil, err
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return nil, err
	}
	now := e.Now().UTC()
	rows := make([]ListRow, 0, len(recs))
	var look []int
	for _, r := range recs {
		if r.State == machine.StateTombstoned && !opt.All {
			continue
		}
		row := ListRow{Record: r, Lease: leases[r.ID]}
		if r.State == machine.StateTombstoned {
			row.Verdict = machine.JudgeGlance(r, machine.Glance{}, nil, now)
		} else {
			look = append(look, len(rows))
		}
		rows = append(rows, row)
	}
	if opt.Start != nil {
		opt.Start(rows)
	}
	emit := inOrder(len(rows), func(i int) {
		if opt.Row != nil {
			opt.Row(i, rows[i])
		}
	})
	for i := range rows {
		if rows[i].Record.State == machine.StateTombstoned {
			emit(i)
		}
	}
	if len(look) == 0 {
		return rows, nil
	}
	var branches []string
	for _, i := range look {
		branches = append(branches, rows[i].Record.Branch)
	}
	inv, err := gitfiles.TakeRegistryInventory(ctx, e.Git, e.Repo, branches...)
	if err != nil {
		return nil, err
	}
	scope, err := observe.ReadGlanceScope(ctx, e.Git, e.Repo)
	if err != nil {
		return nil, err
	}
	workers := planWorkers(opt.Workers)
	glancing := make([]*observe.Glancing, len(rows))
	if err := eachBounded(ctx, workers, look, func(i int) {
		glancing[i] = observe.GlanceFiles(e.Repo, inv, rows[i].Record, scope)
	}); err != nil {
		return nil, err
	}
	var heads []string
	seen := map[string]bool{}
	for _, i := range look {
		if h := glancing[i].NeedsTree(); h != "" && !seen[h] {
			seen[h] = true
			heads = append(heads, h)
		}
	}
	// One question for the repository: the trees of the HEADs git's files
	// showed clean but whose commits are packed. Each of those trees then
	// needs no process of its own; unanswered, each asks git status.
	trees := map[string]string{}
	var asked sync.WaitGroup
	if len(heads) > 0 {
		asked.Go(func() {
			if t, err := gitfiles.CommitTrees(ctx, e.Git, e.Repo, heads); err == nil {
				trees = t
			}
		})
	}
	// And one for the commits of the trees without an upstream that no
	// remote-tracking ref holds, counted for all of them at once.
	var counts []string
	for _, i := range look {
		counts = append(counts, glancing[i].NeedsCount())
	}
	scope.CountUnpushed(ctx, e.Git, e.Repo, counts)
	asked.Wait()
	if err := eachBounded(ctx, workers, look, func(i int) {
		g := glancing[i].Finish(ctx, e.Git, e.Repo, scope, trees)
		rows[i].Glance = &g
		rows[i].Verdict = machine.JudgeGlance(rows[i].Record, g, rows[i].Lease, now)
		emit(i)
	}); err != nil {
		return nil, err
	}
	return rows, nil
}

// inOrder returns a function to call as each of n items completes, in any
// order and from any goroutine: it calls f for every item that is complete
// and follows only complete items, in order, one call at a time.
func inOrder(n int, f func(i int)) func(i int) {
	var mu sync.Mutex
	done := make([]bool, n)
	next := 0
	return func(i int) {
		mu.Lock()
		defer mu.Unlock()
		done[i] = true
		for next < n && done[next] {
			f(next)
			next++
		}
	}
}
