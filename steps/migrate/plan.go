package migrate

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// MigrateOptions are what a person chose for one migrate command.
type MigrateOptions struct {
	// ScanLimit bounds the scan of the main checkout's parent.
	ScanLimit int
	// Only names the candidates to apply; empty means all.
	Only []string
	// AllowExternalRetirement lets apply remove trees outside the managed
	// root (retire and archive dispositions).
	AllowExternalRetirement bool
	// Acknowledge maps a candidate to the commit a person acknowledged as
	// unrecoverable (--acknowledge-unrecoverable).
	Acknowledge string
	// PlanFile is the plan's path as the person named it, for retries
	// (migrate apply); for migrate plan, the absolute path it writes the
	// plan to, journaled with each audit.
	PlanFile string
}

// auditRun is what the audits of one command share.
type auditRun struct {
	inv     gitfiles.Inventory
	view    *proof.RemoteView
	scope   observe.Scope
	stashes []observe.Stash
}

// newAuditRun reads what every audit of one command shares: the remotes'
// advertisement, the process scan and the stash list.
func newAuditRun(ctx context.Context, e *steps.Env, inv gitfiles.Inventory) (*auditRun, error) {
	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return nil, err
	}
	if len(view.Remotes) == 0 {
		return nil, steps.NoRemoteError(e)
	}
	scope, err := e.AssessScope(view)
	if err != nil {
		return nil, err
	}
	stashes, complete, err := observe.Stashes(ctx, e.Git, e.Repo)
	if err != nil {
		return nil, err
	}
	if !complete {
		return nil, machine.StashesIncompleteRefusal(filepath.Join(e.Repo.CommonDir, "logs", "refs", "stash"), observe.StashLimit)
	}
	return &auditRun{inv: inv, view: view, scope: scope, stashes: stashes}, nil
}

// legacyRecord is the record a candidate would be as an adopted,
// finished tree: what the ordinary assessment is asked about.
func legacyRecord(d machine.Discovered, ent gitfiles.WorktreeEntry) machine.Record {
	return machine.Record{ID: d.AdminKey, Kind: machine.KindWorktree, Origin: machine.OriginAdopted, State: machine.StateFinished,
		Path: d.Path, Branch: strings.TrimPrefix(ent.Branch, "refs/heads/"), BaseCommit: ent.Head, AdminKey: d.AdminKey}
}

// audit observes one admitted candidate fresh into its immutable audit.
func (run *auditRun) audit(ctx context.Context, e *steps.Env, d machine.Discovered) (machine.MigrateAudit, error) {
	ent, _ := run.inv.Entry(d.Path)
	rec := legacyRecord(d, ent)
	obs := observe.Worktree(ctx, e.Git, e.Repo, run.inv, rec, run.scope)
	// Custody's own marker is no fact of the candidate: an adopted
	// candidate audits as it did before adoption.
	// The ordinary assessment without archive coverage: an archive the
	// migration makes is its act, not a fact of the candidate.
	obs.Marker = rec.ID
	v := machine.Assess(rec, obs, e.Policy, e.Now())
	obs.Marker = ""
	a := machine.MigrateAudit{ID: rec.ID, Class: d.Class, Path: d.Path, AdminKey: d.AdminKey, Branch: rec.Branch,
		Head: ent.Head, Detached: ent.Detached, Locked: ent.Locked, PathState: obs.PathState, Dev: obs.Dev, Ino: obs.Ino,
		Observation: machine.Fingerprint(obs), Status: obs.Status, Hidden: obs.Hidden, InUse: obs.InUse,
		Proof: v.Proof, Removable: v.Action == machine.ActionRemove, Refusals: v.Refusals}
	if a.Proof == nil {
		a.Proof = obs.Proof
	}
	for i, r := range a.Refusals {
		if r.Code == machine.CodeWorktreeMissing && a.PathState == machine.PathAbsent {
			a.Refusals[i] = machine.MigrateGoneRefusal(a.Path)
		}
	}
	if a.Proof == nil && a.PathState == machine.PathAbsent && machine.IsFullCommit(a.Head) {
		// The tree is gone, so the ordinary observation proves nothing of
		// it; its HEAD is asked about as any head is: a remote custody
		// reads that holds it settles the candidate without a push.
		p, err := proof.Prove(ctx, e.Git, e.Repo, a.Head, run.view)
		if err != nil && ctx.Err() != nil {
			return a, err
		}
		a.Proof = p
	}
	for _, s := range run.stashes {
		if (s.Parent == a.Head && a.Head != "") || (rec.Branch != "" && (strings.HasPrefix(s.Subject, "WIP on "+rec.Branch+":") || strings.HasPrefix(s.Subject, "On "+rec.Branch+":"))) {
			a.Stashes = append(a.Stashes, s.Commit)
		}
	}
	if a.Proof == nil && machine.IsFullCommit(a.Head) {
		tips := make([]string, 0, len(run.view.Tips))
		for _, t := range run.view.Tips {
			tips = append(tips, t.Commit)
		}
		n, err := observe.Unpushed(ctx, e.Git, e.Repo, a.Head, tips, machine.UnpushedBound)
		if err != nil {
			return a, err
		}
		a.Unpushed = n
	}
	return a, nil
}

// MigratePlan discovers, audits every admitted candidate in parallel and
// proposes a disposition for each. It writes the plan's observations to
// the journal (one per candidate, with its digest and proposal) and
// returns the sealed plan; it changes nothing else.
func MigratePlan(ctx context.Context, e *steps.Env, opts MigrateOptions) (machine.MigratePlan, error) {
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return machine.MigratePlan{}, err
	}
	d, inv, err := discovery(ctx, e, opts.ScanLimit)
	if err != nil {
		return machine.MigratePlan{}, err
	}
	var admitted []machine.Discovered
	for _, p := range d.Places {
		if p.Class.Admitted() {
			admitted = append(admitted, p)
		}
	}
	cands := make([]machine.MigrateCandidate, len(admitted))
	if len(admitted) > 0 {
		run, err := newAuditRun(ctx, e, inv)
		if err != nil {
			return machine.MigratePlan{}, err
		}
		var heads []string
		for _, p := range admitted {
			if ent, ok := inv.Entry(p.Path); ok {
				heads = append(heads, ent.Head)
			}
		}
		run.scope.Ancestors = steps.KnownAncestors(ctx, e, run.view, heads)
		errs := make([]error, len(admitted))
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(len(admitted), max(4, 2*runtime.GOMAXPROCS(0))) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					a, err := run.audit(ctx, e, admitted[i])
					errs[i] = err
					cands[i] = machine.MigrateCandidate{Audit: a, Digest: a.Digest(), Proposal: machine.Propose(a)}
				}
			}()
		}
		for i := range admitted {
			if admitted[i].AdminKey == "" {
				return machine.MigratePlan{}, machine.AmbiguousAdminEntryRefusal(admitted[i].Path)
			}
		}
		for i := range admitted {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return machine.MigratePlan{}, err
		}
		for i, err := range errs {
			if err != nil {
				return machine.MigratePlan{}, fmt.Errorf("audit %s: %w", admitted[i].Path, err)
			}
		}
	}
	evs, err := migrationEvents(e)
	if err != nil {
		return machine.MigratePlan{}, err
	}
	settled := machine.FoldMigrateLedger(evs).Settled
	for i, c := range cands {
		if ev, ok := settled[machine.MigrateKey(c.Audit.ID, c.Digest)]; ok {
			cands[i].Settled = ev.Outcome
		}
	}
	p := machine.SealMigratePlan(machine.MigratePlan{
		Repository: machine.PlanRepository{ID: repoID, CommonDir: e.Repo.CommonDir},
		CreatedAt:  e.Now().UTC(), Bounds: d.Bounds, Discovered: d.Places, Candidates: cands,
	})
	if err := journalPlan(e, p, opts.PlanFile); err != nil {
		return machine.MigratePlan{}, err
	}
	return p, nil
}

// journalPlan writes one discovery event naming every place and its class,
// then one observation per candidate, naming planFile, the file the plan
// is written to, so a disposition's next step applies that file.
func journalPlan(e *steps.Env, p machine.MigratePlan, planFile string) error {
	type place struct {
		Path  string               `json:"path"`
		Class machine.MigrateClass `json:"class"`
	}
	places := make([]place, 0, len(p.Discovered))
	for _, d := range p.Discovered {
		places = append(places, place{d.Path, d.Class})
	}
	at := e.Now().UTC()
	evs := []store.Event{{Kind: machine.KindWorktree, Event: machine.EventMigrateDiscovery, At: at, Actor: e.Actor,
		Detail: map[string]any{"plan_id": p.PlanID, "bounds": p.Bounds, "places": places}}}
	for _, c := range p.Candidates {
		prop := c.Proposal
		evs = append(evs, store.Event{Record: c.Audit.ID, Kind: machine.KindWorktree, Event: machine.EventMigrateObservation, At: at, Actor: e.Actor,
			Detail: machine.MigrateEvent{Event: machine.EventMigrateObservation, Candidate: c.Audit.ID, Path: c.Audit.Path, Digest: c.Digest, PlanID: p.PlanID, Proposal: &prop, PlanFile: planFile}})
	}
	// One transaction: the plan's observations are journaled together.
	return e.Store.AppendEvents(evs)
}
