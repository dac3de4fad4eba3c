package migrate

import (
	"context"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
)

// MigrateDiscovery is what migrate discover found.
type MigrateDiscovery struct {
	Bounds machine.MigrateBounds `json:"bounds"`
	Places []machine.Discovered  `json:"places"`
	// Candidates counts the admitted places.
	Candidates int `json:"candidates"`
}

// Pending reports whether a candidate awaits migration, or a place awaits
// the repair its Retry names (a tree moved without git).
func (d MigrateDiscovery) Pending() bool {
	if d.Candidates > 0 {
		return true
	}
	for _, p := range d.Places {
		if p.Retry != "" {
			return true
		}
	}
	return false
}

// discovery reads and classifies every place, with the inventory it read
// them against. An incomplete collection is a refusal.
func discovery(ctx context.Context, e *steps.Env, limit int) (MigrateDiscovery, gitfiles.Inventory, error) {
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return MigrateDiscovery{}, inv, err
	}
	live := map[string]string{}
	if e.Store == nil {
		// Before init there is no state: no tree is in custody, and
		// nothing is written.
		return classify(ctx, e, inv, live, limit)
	}
	recs, err := e.Store.ListLive()
	if err != nil {
		return MigrateDiscovery{}, inv, err
	}
	evs, err := migrationEvents(e)
	if err != nil {
		return MigrateDiscovery{}, inv, err
	}
	unsettled := map[string]bool{}
	for _, st := range machine.FoldMigration(evs) {
		unsettled[st.ID] = st.State == machine.MigratePending || st.State == machine.MigrateRefused
	}
	for _, r := range recs {
		if r.Kind != machine.KindWorktree {
			continue
		}
		if r.Origin == machine.OriginAdopted && r.AdminKey != "" && unsettled[r.AdminKey] {
			// Adopted by a migration that has not settled it (a run
			// interrupted after adopting): still its candidate, so a fresh
			// plan audits it again rather than finding nothing.
			continue
		}
		live[filepath.Clean(r.Path)] = r.ID
		if r.AdminKey != "" {
			live["key:"+r.AdminKey] = r.ID
		}
	}
	return classify(ctx, e, inv, live, limit)
}

// classify reads every place against inv and live (the live records by
// path and admin key) and classifies it.
func classify(ctx context.Context, e *steps.Env, inv gitfiles.Inventory, live map[string]string, limit int) (MigrateDiscovery, gitfiles.Inventory, error) {
	places, err := observe.DiscoverLegacy(ctx, e.Git, e.Repo, inv, live, limit)
	if err != nil {
		return MigrateDiscovery{}, inv, err
	}
	if !places.Complete {
		return MigrateDiscovery{}, inv, machine.DiscoveryIncompleteRefusal(places.Bounds)
	}
	d := MigrateDiscovery{Bounds: places.Bounds, Places: []machine.Discovered{}}
	for _, f := range places.Facts {
		c := machine.Classify(f)
		if c.Class.Admitted() {
			d.Candidates++
		}
		d.Places = append(d.Places, c)
	}
	return d, inv, nil
}

// MigrateDiscover classifies every place a migration looks at: git's
// registered linked worktrees and the entries of the main checkout's
// parent (at most limit). It writes nothing.
func MigrateDiscover(ctx context.Context, e *steps.Env, limit int) (MigrateDiscovery, error) {
	d, _, err := discovery(ctx, e, limit)
	return d, err
}
