package steps

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/custody-sh/custody/machine"
)

// Resources is what the worktree lifecycle asks of the resource feature
// (package steps/resource), which custody.Register registers in Env.Resources:
// the core never imports it. new provisions a tree's declared resources
// and rolls them back; apply and remove tear them down before the tree
// goes; plan lists the orphaned ledger entries and apply destroys them;
// doctor reports them.
type Resources interface {
	// Provision creates every declared resource of rec that has no live
	// ledger entry yet and returns the outcomes and, when a required one
	// failed, a refusal: the caller rolls back.
	Provision(ctx context.Context, e *Env, rec machine.Record) ([]ResourceOutcome, *machine.Refusal, error)
	// Teardown destroys worktree id's live resources in reverse creation
	// order, each under its own intent.
	Teardown(ctx context.Context, e *Env, id string) ([]ResourceOutcome, error)
	// PlanItems lists the orphaned ledger entries as plan items (action
	// destroy, or keep with the reason).
	PlanItems(ctx context.Context, e *Env) ([]machine.PlanItem, error)
	// Reclaim re-reads the ledger entry id, re-decides, and destroys it
	// when its fingerprint still equals the plan's.
	Reclaim(ctx context.Context, e *Env, id, fingerprint string) (machine.Outcome, *machine.Refusal, error)
	// Orphans returns every live ledger entry with its GC verdict.
	Orphans(ctx context.Context, e *Env) ([]machine.Resource, []machine.GCVerdict, error)
}

// resources is e.Resources, or, when none is registered, one that refuses
// whatever would need it: a command built without the resource feature
// never provisions, keeps or forgets a resource silently.
func (e *Env) resources() Resources {
	if e.Resources != nil {
		return e.Resources
	}
	return noResources{}
}

// errNoResources is the error of a command that meets resources with no
// resource feature registered.
var errNoResources = errors.New("internal: resources are declared or kept in the ledger, and no resource feature is registered (Env.Resources)")

// noResources is Env.resources without a registered feature: nothing to
// do is done; anything else is errNoResources.
type noResources struct{}

// Provision refuses when custody.toml declares a resource.
func (noResources) Provision(_ context.Context, e *Env, _ machine.Record) ([]ResourceOutcome, *machine.Refusal, error) {
	if len(e.Config.Resources) > 0 {
		return nil, nil, errNoResources
	}
	return nil, nil, nil
}

// Teardown refuses when the tree has a live ledger entry.
func (noResources) Teardown(_ context.Context, e *Env, id string) ([]ResourceOutcome, error) {
	rs, err := e.LiveResources(id)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return nil, errNoResources
}

// PlanItems refuses when the ledger holds an entry.
func (noResources) PlanItems(_ context.Context, e *Env) ([]machine.PlanItem, error) {
	return nil, noLedger(e)
}

// Reclaim always refuses: only a resource feature plans a destroy.
func (noResources) Reclaim(context.Context, *Env, string, string) (machine.Outcome, *machine.Refusal, error) {
	return "", nil, errNoResources
}

// Orphans refuses when the ledger holds an entry.
func (noResources) Orphans(_ context.Context, e *Env) ([]machine.Resource, []machine.GCVerdict, error) {
	return nil, nil, noLedger(e)
}

// noLedger is nil when the ledger holds no entry, errNoResources when it
// holds one.
func noLedger(e *Env) error {
	all, err := e.Store.Resources()
	if err != nil || len(all) == 0 {
		return err
	}
	return errNoResources
}

// ResourceOutcome is what happened to one resource.
type ResourceOutcome struct {
	ID       string           `json:"id"`
	Handle   string           `json:"handle"`
	Outcome  machine.Outcome  `json:"outcome"`
	ExitCode int              `json:"exit_code"`
	Refusal  *machine.Refusal `json:"refusal,omitempty"`
}

// portFor picks the worktree's deterministic port: base + hash(id) mod
// span, moved up past ports live worktrees already hold.
func (e *Env) portFor(id string) (int, error) {
	recs, err := e.Store.List()
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, r := range recs {
		if r.State != machine.StateTombstoned && r.Port != 0 {
			used[r.Port] = true
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	span := max(e.Config.PortSpan, 1)
	off := int(h.Sum32() % uint32(span))
	for i := 0; i < span; i++ {
		p := e.Config.PortBase + (off+i)%span
		if !used[p] {
			return p, nil
		}
	}
	return 0, fmt.Errorf("every port in %d..%d is held by a live worktree", e.Config.PortBase, e.Config.PortBase+span-1)
}

// LiveResources returns worktree id's ledger entries that are not
// tombstoned, in creation (config) order.
func (e *Env) LiveResources(id string) ([]machine.Resource, error) {
	all, err := e.Store.ResourcesOf(id)
	if err != nil {
		return nil, err
	}
	var out []machine.Resource
	for _, r := range all {
		if r.State != machine.StateTombstoned {
			out = append(out, r)
		}
	}
	order := map[string]int{}
	for i, s := range e.Config.Resources {
		order[s.Name] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return order[out[i].Name] < order[out[j].Name]
	})
	return out, nil
}

// envLines returns, for every worktree with ledger entries, the exact .env
// lines custody owns there: observation drops a .env holding only these.
func (e *Env) envLines() (map[string]map[string]bool, error) {
	all, err := e.Store.Resources()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	byTree := map[string][]machine.Resource{}
	for _, r := range all {
		byTree[r.Worktree] = append(byTree[r.Worktree], r)
	}
	recs, err := e.Store.List()
	if err != nil {
		return nil, err
	}
	port := map[string]int{}
	for _, r := range recs {
		port[r.ID] = r.Port
	}
	out := map[string]map[string]bool{}
	for id, rs := range byTree {
		set := map[string]bool{}
		for _, l := range machine.DotenvLines(machine.Record{ID: id, Port: port[id]}, rs) {
			set[l] = true
		}
		out[id] = set
	}
	return out, nil
}
