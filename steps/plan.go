package steps

import (
	"cmp"
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps/quarantine"
)

// Plan assesses every record that is not tombstoned and returns a sealed
// plan. It writes nothing. Finished (or lease-expired) trees are observed in
// parallel: registry, status and proof against one fresh advertisement of
// every remote. Tombstoned records are not read (the store's live index),
// except to keep a foreign tree's item id from taking one's id.
func Plan(ctx context.Context, e *Env) (machine.Plan, error) {
	return PlanWith(ctx, e, PlanOptions{})
}

// PlanOptions tune how Plan does its work, never what it decides: every
// setting gives the same plan, byte for byte.
type PlanOptions struct {
	// Workers bounds how many trees are observed at once; zero or less
	// means one per processor (runtime.GOMAXPROCS), at least one.
	Workers int
}

// PlanWith is Plan with opt. The trees are observed on a bounded pool of
// workers while the remotes are asked and the trees' heads proved
// (observeAll). A cancelled ctx starts no further observation and returns
// its error.
func PlanWith(ctx context.Context, e *Env, opt PlanOptions) (machine.Plan, error) {
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return machine.Plan{}, err
	}
	recs, err := e.Store.ListLive()
	if err != nil {
		return machine.Plan{}, err
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return machine.Plan{}, err
	}
	now := e.Now().UTC()
	var live []machine.Record
	var observeIdx []int
	for _, r := range recs {
		if assessable(r, leases[r.ID], now) {
			observeIdx = append(observeIdx, len(live))
		}
		live = append(live, r)
	}
	items := make([]machine.PlanItem, len(live))
	for i, r := range live {
		obs := machine.WorktreeObservation{Path: r.Path, Lease: leases[r.ID]}
		v := machine.Assess(r, obs, e.Policy, now)
		items[i] = PlanItemFor(r, obs, v, e.Policy, false)
	}
	// The remotes are asked while the registry and the store are read:
	// reads that do not depend on each other.
	// The configuration is read once, first: the remotes are read from it,
	// and whether attributes from outside the repository apply
	// (observeAll), without waiting for the remotes to answer.
	var view *proof.RemoteView
	var viewErr error
	var listing []byte
	var listErr error
	listed := make(chan struct{})
	var advertised sync.WaitGroup
	defer advertised.Wait()
	if len(observeIdx) > 0 {
		advertised.Go(func() {
			listing, listErr = e.Git.ConfigList(ctx, e.Repo)
			close(listed)
			view, viewErr = proof.AdvertiseListed(ctx, e.Git, e.Repo, listing, listErr)
		})
	}
	// The registry and the records' branches, from git's files when they
	// are the plain case (decision 0180), else from git.
	var branches []string
	for _, r := range live {
		branches = append(branches, r.Branch)
	}
	inv, err := gitfiles.TakeRegistryInventory(ctx, e.Git, e.Repo, branches...)
	if err != nil {
		return machine.Plan{}, err
	}
	taken, err := takenIDs(e, inv, recs)
	if err != nil {
		return machine.Plan{}, err
	}
	foreign := foreignItems(e, inv, recs, taken)
	if len(observeIdx) > 0 {
		attributesFromOutside := func() bool {
			<-listed
			return observe.AttributesFromOutsideListed(listing, listErr)
		}
		if err := e.observeAll(ctx, opt, live, observeIdx, inv, leases, items, now, attributesFromOutside, func() (*proof.RemoteView, error) {
			advertised.Wait()
			return view, viewErr
		}); err != nil {
			return machine.Plan{}, err
		}
		// The content hash cache of trees git no longer has goes: derived
		// data, not state (decision 0073), pruned only where it can be.
		if e.Unwritable == nil {
			observe.PruneHashCache(e.Repo)
		}
	}
	resItems, err := e.resources().PlanItems(ctx, e)
	if err != nil {
		return machine.Plan{}, err
	}
	foreign = append(foreign, resItems...)
	return machine.Seal(machine.Plan{
		Repository: machine.PlanRepository{ID: repoID, CommonDir: e.Repo.CommonDir},
		CreatedAt:  now,
		Items:      append(items, foreign...),
	}), nil
}

// observeAll fills in the items of the records at observeIdx of live, in
// two halves that do not wait for each other: the remote half (the
// advertisement, which view waits for, then the heads known to be
// ancestors of its first tip and one batch of proofs for the others,
// observe.ProveAll) runs in the background, while the local half observes
// every tree on a bounded pool of workers: registry, admin entry, status
// or the status-free path (decision 0185), content and hidden state. Each
// observation then gets its proof (observe.AttachProof) and its verdict.
// Every worker writes only its own tree's observation, so the items keep
// the order of the store's records whatever order the observations end
// in; what the trees share (the inventory, the scope, the Git) is only
// read, and progress is reported under a lock.
func (e *Env) observeAll(ctx context.Context, opt PlanOptions, live []machine.Record, observeIdx []int, inv gitfiles.Inventory,
	leases map[string]*machine.Lease, items []machine.PlanItem, now time.Time, attributesFromOutside func() bool, view func() (*proof.RemoteView, error)) error {
	heads := make([]string, 0, len(observeIdx))
	for _, i := range observeIdx {
		if en, ok := inv.Entry(live[i].Path); ok {
			heads = append(heads, en.Head)
		} else {
			// Gone already: its last known commit, and the tip of its
			// branch, which may carry its work on (machine.VanishedHead).
			heads = append(heads, live[i].EffectiveHead())
			if tip := inv.Branches[live[i].Branch]; tip != "" && tip != live[i].EffectiveHead() {
				heads = append(heads, tip)
			}
		}
	}
	var remote sync.WaitGroup
	var v *proof.RemoteView
	var viewErr error
	var known map[string]bool
	var proofs *proof.ProofSet
	remote.Go(func() {
		v, viewErr = view()
		if viewErr != nil || len(v.Remotes) == 0 {
			return
		}
		known = KnownAncestors(ctx, e, v, heads)
		var unproved []string
		for _, h := range heads {
			if !known[h] {
				unproved = append(unproved, h)
			}
		}
		proofs = proof.StartProofs(ctx, e.Git, e.Repo, unproved, v)
		proofs.Wait()
	})
	defer remote.Wait()
	remoteErr := func() error {
		remote.Wait()
		switch {
		case viewErr != nil:
			return viewErr
		case len(v.Remotes) == 0:
			return NoRemoteError(e)
		}
		return nil
	}
	scope, err := e.AssessScope(nil)
	if err != nil {
		return cmp.Or(remoteErr(), err)
	}
	// What tree each head is: a tree whose index and files are exactly
	// its HEAD is observed without git status, unless attributes from
	// outside the repository could make git see its bytes otherwise.
	if !attributesFromOutside() {
		scope.HeadTrees = quarantine.CommitTrees(ctx, e.quarantineEnv(), heads)
	}
	local := scope
	local.Proof = false
	obs := make([]machine.WorktreeObservation, len(live))
	var mu sync.Mutex
	done := 0
	err = eachBounded(ctx, planWorkers(opt.Workers), observeIdx, func(i int) {
		r := live[i]
		obs[i] = observe.Worktree(ctx, e.Git, e.Repo, inv, r, local)
		obs[i].Lease = leases[r.ID]
		mu.Lock()
		defer mu.Unlock()
		done++
		e.progress(done, len(observeIdx), r.ID)
	})
	if err != nil {
		return err
	}
	if err := remoteErr(); err != nil {
		return err
	}
	scope.View, scope.Ancestors, scope.Proofs = v, known, proofs
	archived := e.archives().Archived(e)
	for _, i := range observeIdx {
		r := live[i]
		observe.AttachProof(ctx, e.Git, e.Repo, r, &obs[i], scope)
		items[i] = PlanItemFor(r, obs[i], e.assessKnowing(ctx, archived, r, obs[i], v, now), e.Policy, true)
	}
	return nil
}

// NoRemoteError is the error of assessing trees in a repository without any
// remote: nothing could ever prove their work published.
func NoRemoteError(e *Env) error {
	return machine.NoRemoteRefusal(e.Repo.MainCheckout)
}

// assessable reports whether plan observes and assesses rec: a record
// without an intent that is finished (or active under an expired lease),
// or active with no live lease and nothing at its path, which may have
// vanished (machine.Vanished: deleted outside custody and pruned). Other
// records are assessed unobserved, as active work.
func assessable(rec machine.Record, lease *machine.Lease, now time.Time) bool {
	if rec.Intent != nil {
		return false
	}
	if machine.Removable(rec, lease, now) {
		return true
	}
	return rec.State == machine.StateActive && !lease.Live(now) && hostio.Lstat(rec.Path).State == machine.PathAbsent
}

// PlanItemFor is the plan item of record r over its observation obs and
// verdict v under pol; observed says obs was taken (a tree assessed
// without observing it carries no fingerprint). A removal says when its
// branch stays (machine.BranchKeptReason).
func PlanItemFor(r machine.Record, obs machine.WorktreeObservation, v machine.Verdict, pol machine.Policy, observed bool) machine.PlanItem {
	it := machine.PlanItem{ID: r.ID, Kind: r.Kind, State: r.State, Action: v.Action, Path: r.Path, Branch: r.Branch,
		Head: obs.Head, Proof: v.Proof, Refusal: v.Primary(), Refusals: v.Refusals, Settlement: v.Settlement}
	if v.Action == machine.ActionRemove {
		it.Discarded = obs.Discarded
		it.BranchKept = machine.BranchKeptReason(r, pol)
	}
	if v.Settlement != nil {
		it.Head = v.Settlement.Head
	}
	if it.Head == "" {
		it.Head = r.EffectiveHead()
	}
	if observed {
		it.Fingerprint = machine.Fingerprint(obs)
	}
	return it
}

// KnownAncestors asks once, for all heads, which are ancestors of the
// view's first tip (observe.Ancestors). It only saves work: when git cannot
// answer for the batch, each tree's proof asks for itself.
func KnownAncestors(ctx context.Context, e *Env, view *proof.RemoteView, heads []string) map[string]bool {
	if view == nil || len(view.Tips) == 0 || len(heads) == 0 {
		return nil
	}
	known, err := observe.Ancestors(ctx, e.Git, e.Repo, view.Tips[0].Commit, heads)
	if err != nil {
		return nil
	}
	return known
}

// takenIDs is every record id a foreign tree's item id must not take: the
// live records' ids, and of the ids foreignItems may try for the
// registry's trees (a tree's admin key or directory name, then each with
// "foreign-" before it) those a tombstoned record holds, asked of the
// store in one read per prefix instead of reading every tombstone.
func takenIDs(e *Env, inv gitfiles.Inventory, live []machine.Record) (map[string]bool, error) {
	taken := map[string]bool{}
	for _, r := range live {
		taken[r.ID] = true
	}
	var cands []string
	for i, ent := range inv.Entries {
		if i == 0 || ent.Bare {
			continue
		}
		if key := gitfiles.AdminKeyOf(e.Repo, ent.Path); key != "" {
			cands = append(cands, key)
		}
		cands = append(cands, filepath.Base(ent.Path))
	}
	for len(cands) > 0 {
		found, err := e.Store.Existing(cands)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, id := range cands {
			if found[id] || taken[id] {
				taken[id] = taken[id] || found[id]
				next = append(next, "foreign-"+id)
			}
		}
		cands = next
	}
	return taken, nil
}
