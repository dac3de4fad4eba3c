package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/failpoint"
)

// MigrateFailpoints are the named points of migrate apply at which a
// failpoint build can be killed; the reused removal and archive steps add
// their own (Failpoints).
func MigrateFailpoints() []string {
	return []string{"migrate/after-act", "migrate/after-adopt", "migrate/after-finish", "migrate/before-outcome"}
}

// MigrateOutcome is what apply did with one candidate.
type MigrateOutcome struct {
	ID          string              `json:"id"`
	Path        string              `json:"path"`
	Disposition machine.Disposition `json:"disposition,omitempty"`
	Outcome     machine.Outcome     `json:"outcome"`
	Refusal     *machine.Refusal    `json:"refusal,omitempty"`
	// Archive is the archive a removal rests on (archive disposition).
	Archive string `json:"archive,omitempty"`
	// Landed is the ref a land disposition pushed.
	Landed string `json:"landed,omitempty"`
	// Moved is where adopt-and-relocate moved the tree.
	Moved string `json:"moved,omitempty"`
	// Proof is the proof a removal, release or land rests on: where the
	// candidate's HEAD is published now.
	Proof *machine.Proof `json:"proof,omitempty"`
	// Branch is the legacy branch a tree removed or released on a remote
	// proof had checked out: custody never deletes it
	// (MigrateStatusResult.LegacyBranches lists it with the command).
	Branch string `json:"branch,omitempty"`
}

// MigrateApplyResult is what migrate apply did.
type MigrateApplyResult struct {
	PlanID string           `json:"plan_id"`
	Items  []MigrateOutcome `json:"items"`
	// Interrupted says apply stopped early (an interrupt).
	Interrupted string `json:"interrupted,omitempty"`
}

// Pending reports whether any candidate ended other than settled.
func (r MigrateApplyResult) Pending() bool {
	if r.Interrupted != "" {
		return true
	}
	for _, it := range r.Items {
		if !machine.MigrateSettled(it.Outcome) {
			return true
		}
	}
	return false
}

// migrateRun is what one apply shares between candidates.
type migrateRun struct {
	// acting holds the candidates an act of which began with no outcome
	// (a run killed midway).
	acting map[string]bool
	plan   machine.MigratePlan
	opts   MigrateOptions
	places map[string]machine.Discovered
	audits *auditRun
}

// MigrateApply carries out every approved disposition of plan (or of the
// candidates opts.Only names), candidate by candidate: a disposition must
// be bound to the plan's digest of the candidate, the candidate is audited
// afresh and must equal that digest (else the fresh audit is journaled as
// a new observation needing a new disposition), the act is journaled
// before it starts and its outcome after it ends. A candidate whose
// outcome is recorded is not acted on again; one custody already removed
// is reported removed, never removed twice.
func MigrateApply(ctx context.Context, e *steps.Env, plan machine.MigratePlan, opts MigrateOptions) (MigrateApplyResult, error) {
	res := MigrateApplyResult{PlanID: plan.PlanID, Items: []MigrateOutcome{}}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return res, err
	}
	if plan.Repository.ID != repoID || plan.Repository.CommonDir != e.Repo.CommonDir {
		return res, machine.MigrateWrongRepositoryRefusal(plan.Repository.ID, plan.Repository.CommonDir, repoID, e.Repo.CommonDir)
	}
	selected := map[string]bool{}
	for _, id := range opts.Only {
		if _, ok := plan.Candidate(id); !ok {
			return res, machine.MigrateNotInPlanRefusal(id)
		}
		selected[id] = true
	}
	evs, err := migrationEvents(e)
	if err != nil {
		return res, err
	}
	ledger := machine.FoldMigrateLedger(evs)
	decided, settled := ledger.Decided, ledger.Settled
	run := &migrateRun{plan: plan, opts: opts, acting: map[string]bool{}}
	for _, st := range machine.FoldMigration(evs) {
		run.acting[st.ID] = st.Interrupted
	}
	for _, c := range plan.Candidates {
		id := c.Audit.ID
		if len(selected) > 0 && !selected[id] {
			continue
		}
		if err := ctx.Err(); err != nil {
			res.Interrupted = "interrupted before " + id + "; the rest of the migrate plan was not applied"
			return res, nil
		}
		key := machine.MigrateKey(id, c.Digest)
		if opts.Acknowledge != "" {
			o, err := run.abandon(ctx, e, c)
			if err != nil {
				return res, err
			}
			res.Items = append(res.Items, o)
			continue
		}
		if ev, ok := settled[key]; ok {
			o := MigrateOutcome{ID: id, Path: c.Audit.Path, Disposition: ev.Disposition, Outcome: machine.OutcomeAlreadyDone}
			if o.Refusal, err = run.revalidate(e, c, ev); err != nil {
				return res, err
			}
			if o.Refusal != nil {
				o.Outcome = machine.OutcomeRefused
			}
			res.Items = append(res.Items, o)
			continue
		}
		d, ok := decided[key]
		if !ok {
			res.Items = append(res.Items, MigrateOutcome{ID: id, Path: c.Audit.Path, Outcome: machine.OutcomeKept,
				Refusal: machine.NotDisposedRefusal(c)})
			continue
		}
		o, err := run.candidate(ctx, e, c, d.Disposition)
		if err != nil && ctx.Err() != nil {
			res.Interrupted = "interrupted at " + id + "; custody migrate apply again settles it"
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("migrate %s: %w", id, err)
		}
		res.Items = append(res.Items, o)
	}
	return res, nil
}

// candidate carries out disposition d of c.
func (run *migrateRun) candidate(ctx context.Context, e *steps.Env, c machine.MigrateCandidate, d machine.Disposition) (MigrateOutcome, error) {
	id := c.Audit.ID
	out := MigrateOutcome{ID: id, Path: c.Audit.Path, Disposition: d}
	rec, haveRec, err := run.candidateRecord(e, c)
	if err != nil {
		return out, err
	}
	gone := haveRec && rec.State == machine.StateTombstoned
	if haveRec && d == machine.DispositionAdoptRelocate && relocated(rec, c) {
		// Moved by a run killed before its outcome was journaled.
		out.Outcome, out.Moved = machine.OutcomeRelocated, rec.Path
		return out, run.record(e, c, out)
	}
	if haveRec && rec.Intent != nil || gone {
		// A run killed after acting: what the record says is the outcome;
		// nothing is done twice.
		return run.finish(e, c, out, rec)
	}
	fresh, err := run.reaudit(ctx, e, c)
	if err != nil {
		return out, err
	}
	if fresh == nil || fresh.Digest() != c.Digest {
		return run.changed(e, c, out, fresh, run.acting[id])
	}
	if err := journalMigrate(e, machine.MigrateEvent{Event: machine.EventMigrateAct, Candidate: id, Path: c.Audit.Path, Digest: c.Digest, Disposition: d}); err != nil {
		return out, err
	}
	failpoint.At("migrate/after-act")
	switch d {
	case machine.DispositionReject:
		out.Outcome = machine.OutcomeRejected
	case machine.DispositionLand:
		out.Landed, out.Proof, out.Refusal, err = land(ctx, e, run, c)
		out.Outcome = machine.OutcomeLanded
	case machine.DispositionRelease:
		// The audit just made equals the approved one: its proof was found
		// fresh, now. Nothing is pushed, moved or removed.
		out.Outcome, out.Proof, out.Branch = machine.OutcomeReleased, c.Audit.Proof, c.Audit.Branch
	case machine.DispositionAdoptRelocate:
		out, err = run.adoptRelocate(ctx, e, c, out)
	case machine.DispositionRetire, machine.DispositionArchive:
		if r := steps.ExternalRefusal(e, machine.Record{ID: id, Origin: machine.OriginAdopted, Path: c.Audit.Path}, ""); r != nil && !run.opts.AllowExternalRetirement {
			// Refused before anything is adopted: the tree stays as it was.
			out.Refusal = machine.MigrateExternalTreeRefusal(id, c.Audit.Path, e.Root, d, run.opts.PlanFile)
			break
		}
		out, err = run.remove(ctx, e, c, out)
	default:
		err = fmt.Errorf("unknown disposition %q", d)
	}
	if err != nil {
		return out, err
	}
	if out.Refusal != nil {
		out.Outcome = machine.ForRefusal(out.Refusal)
	}
	failpoint.At("migrate/before-outcome")
	return out, run.record(e, c, out)
}

// record journals the outcome of c.
func (run *migrateRun) record(e *steps.Env, c machine.MigrateCandidate, out MigrateOutcome) error {
	ev := machine.MigrateEvent{Event: machine.EventMigrateOutcome, Candidate: c.Audit.ID, Path: c.Audit.Path, Digest: c.Digest,
		Disposition: out.Disposition, Outcome: out.Outcome}
	if out.Refusal != nil {
		ev.Code, ev.Reason = out.Refusal.Code, out.Refusal.Message
	}
	if out.Proof != nil && out.Refusal == nil {
		ev.Proof, ev.Head = machine.ProofWhere(*out.Proof), out.Proof.Head
		if out.Proof.Kind != machine.ProofArchive {
			// A branch whose tip only an archive holds is not listed for
			// deletion: only a remote's proof speaks for it.
			ev.Branch = out.Branch
		}
	}
	return journalMigrate(e, ev)
}

// finish reports (and journals) what a record a previous run acted on
// ended as, driving an intent it left through resume first.
func (run *migrateRun) finish(e *steps.Env, c machine.MigrateCandidate, out MigrateOutcome, rec machine.Record) (MigrateOutcome, error) {
	switch {
	case rec.State == machine.StateTombstoned && rec.Evidence.Outcome == string(machine.OutcomeRemoved):
		out.Outcome = machine.OutcomeRemoved
		if out.Disposition == machine.DispositionRetire && c.Audit.Proof != nil {
			out.Proof, out.Branch = c.Audit.Proof, c.Audit.Branch
		}
	case rec.State == machine.StateTombstoned:
		out.Outcome = machine.Outcome(rec.Evidence.Outcome)
		if out.Outcome == "" {
			out.Outcome = machine.OutcomeAbandoned
		}
	default:
		out.Outcome = machine.OutcomeRefused
		out.Refusal = machine.MigrateIntentPendingRefusal(rec)
		return out, nil
	}
	return out, run.record(e, c, out)
}

// changed journals a fresh audit that differs from the approved one as a
// new observation: it needs a new disposition.
func (run *migrateRun) changed(e *steps.Env, c machine.MigrateCandidate, out MigrateOutcome, fresh *machine.MigrateAudit, acted bool) (MigrateOutcome, error) {
	out.Outcome = machine.OutcomeStale
	if fresh == nil {
		out.Refusal = machine.MigrateNoLongerCandidateRefusal(c.Audit.Path, run.opts.PlanFile)
		if acted {
			return out, run.record(e, c, out)
		}
		return out, nil
	}
	p := machine.Propose(*fresh)
	dg := fresh.Digest()
	out.Refusal = machine.MigrateChangedRefusal(c, dg, run.opts.PlanFile)
	if acted {
		// An act of the approved audit began in an earlier, interrupted
		// run: it ends here, stale, so the candidate is not left pending
		// an outcome it can never have; the fresh audit is re-proposed.
		if err := run.record(e, c, out); err != nil {
			return out, err
		}
	}
	if err := journalMigrate(e, machine.MigrateEvent{Event: machine.EventMigrateObservation, Candidate: c.Audit.ID, Path: c.Audit.Path, Digest: dg, PlanID: run.plan.PlanID, Proposal: &p}); err != nil {
		return out, err
	}
	return out, nil
}

// reaudit discovers and audits c afresh; nil when discovery no longer
// admits it.
func (run *migrateRun) reaudit(ctx context.Context, e *steps.Env, c machine.MigrateCandidate) (*machine.MigrateAudit, error) {
	d, inv, err := discovery(ctx, e, run.opts.ScanLimit)
	if err != nil {
		return nil, err
	}
	run.places = map[string]machine.Discovered{}
	for _, p := range d.Places {
		run.places[p.Path] = p
	}
	p, ok := run.places[c.Audit.Path]
	if rec, have, err := run.candidateRecord(e, c); err == nil && have && ok && p.Class == machine.ClassInCustody {
		// Adopted by an earlier, interrupted run of this migration: audit it
		// as the candidate it was.
		p.Class, p.AdminKey = c.Audit.Class, rec.AdminKey
		ok = p.AdminKey == c.Audit.AdminKey
	}
	if !ok || !p.Class.Admitted() || p.AdminKey != c.Audit.AdminKey {
		return nil, nil
	}
	if run.audits == nil {
		if run.audits, err = newAuditRun(ctx, e, inv); err != nil {
			return nil, err
		}
	}
	run.audits.inv = inv
	a, err := run.audits.audit(ctx, e, p)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// remove adopts c (unless an earlier run did), finishes it, archives it
// for the archive disposition, and removes it through the ordinary
// removal: intent, final observation, non-forced removal, verified absence.
func (run *migrateRun) remove(ctx context.Context, e *steps.Env, c machine.MigrateCandidate, out MigrateOutcome) (MigrateOutcome, error) {
	rec, have, err := run.candidateRecord(e, c)
	if err != nil {
		return out, err
	}
	if !have {
		if _, err := steps.Adopt(ctx, e, c.Audit.Path, false); err != nil {
			var r *machine.Refusal
			if errors.As(err, &r) {
				out.Refusal = r
				return out, nil
			}
			return out, err
		}
		failpoint.At("migrate/after-adopt")
		if rec, have, err = run.candidateRecord(e, c); err != nil || !have {
			return out, fmt.Errorf("the record adopt made of %s cannot be found: %w", c.Audit.Path, err)
		}
	}
	id := rec.ID
	if rec.State == machine.StateActive {
		os, err := steps.Finish(ctx, e, []string{id})
		if err != nil {
			return out, err
		}
		if len(os) == 1 && os[0].Refusal != nil {
			out.Refusal = os[0].Refusal
			return out, nil
		}
		failpoint.At("migrate/after-finish")
		if rec, err = e.Store.Get(id); err != nil {
			return out, err
		}
	}
	if out.Disposition == machine.DispositionArchive {
		a, ok, err := archive.CoveringArchive(e, id, c.Audit.Head)
		if err != nil {
			return out, err
		}
		if ok {
			// An archive an interrupted run sealed counts only while the
			// tree is still what it holds (a tree edited since needs a
			// new one).
			p, _, err := archive.ArchiveProof(ctx, e, rec, c.Audit.Head, run.audits.view)
			if err != nil {
				return out, err
			}
			ok = p != nil
		}
		if !ok {
			made, err := archive.CaptureArchive(ctx, e, id)
			var r *machine.Refusal
			if errors.As(err, &r) {
				out.Refusal = r
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out.Archive = made.ID
		} else {
			out.Archive = a.ID
		}
	}
	view := run.audits.view
	scope, err := e.AssessScope(view)
	if err != nil {
		return out, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return out, err
	}
	v := e.Assess(ctx, rec, obs, view, e.Now())
	it := steps.PlanItemFor(rec, obs, v, e.Policy, true)
	if it.Action != machine.ActionRemove {
		out.Refusal = v.Primary()
		if out.Refusal == nil {
			out.Refusal = machine.MigrateNotRemovableRefusal(rec)
		}
		return out, nil
	}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return out, err
	}
	plan := machine.Seal(machine.Plan{Repository: machine.PlanRepository{ID: repoID, CommonDir: e.Repo.CommonDir}, CreatedAt: e.Now().UTC(), Items: []machine.PlanItem{it}})
	ar, err := steps.ApplyWith(ctx, e, plan, steps.ApplyOptions{Only: []string{id}, AllowExternalRetirement: run.opts.AllowExternalRetirement, PlanFile: run.opts.PlanFile})
	if err != nil {
		return out, err
	}
	if ar.Interrupted != "" {
		return out, fmt.Errorf("%s: %w", ar.Interrupted, context.Canceled)
	}
	if len(ar.Items) != 1 {
		return out, fmt.Errorf("removal of %s reported %d outcomes", id, len(ar.Items))
	}
	o := ar.Items[0]
	out.Outcome, out.Refusal = o.Outcome, o.Refusal
	if out.Outcome == machine.OutcomeRemoved {
		out.Proof, out.Branch = it.Proof, rec.Branch
	}
	if r := out.Refusal; r != nil && r.Code == machine.CodeExternalTree {
		r.Retry = machine.MigrateApplyExternalRetry(id, run.opts.PlanFile)
	}
	return out, nil
}

// land pushes c's HEAD, non-forced, to <prefix>review/<id> only where
// the view's push target says a remote custody reads and proves from will
// advertise it (never a remote custody refused, such as this repository
// itself, and never a pushurl no remote custody reads is read from), then
// asks that remote, as custody asks it, and returns the proof it now
// gives: the ref at exactly HEAD. Without that proof it is a refusal,
// never "landed".
func land(ctx context.Context, e *steps.Env, run *migrateRun, c machine.MigrateCandidate) (string, *machine.Proof, *machine.Refusal, error) {
	view := run.audits.view
	ref := "refs/heads/" + e.Policy.BranchPrefix + "review/" + c.Audit.ID
	fail := func(r *machine.Refusal) (string, *machine.Proof, *machine.Refusal, error) {
		return ref, nil, r, nil
	}
	t := view.Push
	switch {
	case t == nil || (t.Remote == "" && t.URL == ""):
		why := "no remote is configured that custody can prove from"
		if t != nil && t.Why != "" {
			why = t.Why
		}
		return fail(machine.LandNoPushRefusal(c, why, run.opts.PlanFile))
	case t.AddAs != "":
		return fail(machine.LandForkRefusal(c, *t, run.opts.PlanFile))
	}
	dest := t.Remote
	if dest == "" {
		dest = t.URL
	}
	for _, f := range view.Failures {
		if f.Remote == t.Proves {
			return fail(machine.LandNoPushRefusal(c, "remote "+f.Remote+" proves nothing: "+f.Error, run.opts.PlanFile))
		}
	}
	if _, err := e.Git.Mutate(ctx, e.Repo.MainCheckout, "push", "--quiet", "--", dest, c.Audit.Head+":"+ref); err != nil {
		if ctx.Err() != nil {
			return ref, nil, nil, ctx.Err()
		}
		return fail(machine.LandPushFailedRefusal(c, dest, ref, err))
	}
	args, ok := view.AskArgs(t.Proves, []string{"ls-remote", "--refs"}, ref)
	if !ok {
		return fail(machine.LandProverMissingRefusal(c, dest, ref, t.Proves))
	}
	b, err := e.Git.Observe(ctx, e.Repo.MainCheckout, args...)
	if err != nil {
		return fail(machine.LandProverSilentRefusal(c, dest, ref, t.Proves, err))
	}
	adv, err := proof.ParseLsRemote(b)
	if err != nil {
		return fail(machine.LandUnparsedRefusal(c, dest, ref, t.Proves, err))
	}
	for _, r := range adv {
		if r.Name == ref && r.Commit == c.Audit.Head {
			return ref, &machine.Proof{Kind: machine.ProofAncestry, Remote: t.Proves, Ref: ref, Tip: r.Commit, Head: c.Audit.Head}, nil, nil
		}
	}
	return fail(machine.LandNotAdvertisedRefusal(c, dest, ref, t.Proves))
}

// abandon ends the record of c, whose tree is gone and whose last commit a
// person acknowledged as unrecoverable, through abandon's one transition:
// checked against git, never trusted.
func (run *migrateRun) abandon(ctx context.Context, e *steps.Env, c machine.MigrateCandidate) (MigrateOutcome, error) {
	out := MigrateOutcome{ID: c.Audit.ID, Path: c.Audit.Path}
	if err := journalMigrate(e, machine.MigrateEvent{Event: machine.EventMigrateAct, Candidate: c.Audit.ID, Path: c.Audit.Path, Digest: c.Digest,
		Reason: "acknowledge-unrecoverable " + run.opts.Acknowledge}); err != nil {
		return out, err
	}
	id := c.Audit.ID
	if rec, have, err := run.candidateRecord(e, c); err != nil {
		return out, err
	} else if have {
		id = rec.ID
	}
	o, err := steps.Abandon(ctx, e, id, run.opts.Acknowledge)
	if err != nil {
		return out, err
	}
	out.Outcome, out.Refusal = o.Outcome, o.Refusal
	if out.Outcome == machine.OutcomeAlreadyDone {
		out.Outcome = machine.OutcomeAbandoned
	}
	return out, run.record(e, c, out)
}

// revalidate checks a completed step against the store: a removal the
// journal records must be a tombstoned record that says removed.
func (run *migrateRun) revalidate(e *steps.Env, c machine.MigrateCandidate, ev machine.MigrateEvent) (*machine.Refusal, error) {
	if ev.Outcome != machine.OutcomeRemoved {
		return nil, nil
	}
	rec, have, err := run.candidateRecord(e, c)
	if err != nil {
		return nil, err
	}
	if have && rec.State == machine.StateTombstoned && rec.Evidence.Outcome == string(machine.OutcomeRemoved) {
		return nil, nil
	}
	return machine.MigrateRemovalUnrecordedRefusal(c), nil
}

// candidateRecord returns the record this migration made of c: adopted
// under c's admin key no earlier than the plan was made (an older record
// holding the key is an earlier tree's), the live one when there is one,
// else the newest. Its id is the admin key unless an earlier tree's
// record held that id (Adopt).
func (run *migrateRun) candidateRecord(e *steps.Env, c machine.MigrateCandidate) (machine.Record, bool, error) {
	recs, err := e.Store.List()
	if err != nil {
		return machine.Record{}, false, err
	}
	var best machine.Record
	found := false
	for _, r := range recs {
		// A live record under the key is this tree's, whenever it was
		// adopted (an interrupted run of an earlier plan adopted it).
		if r.Kind != machine.KindWorktree || r.Origin != machine.OriginAdopted || r.AdminKey != c.Audit.AdminKey ||
			(r.CreatedAt.Before(run.plan.CreatedAt) && r.State == machine.StateTombstoned) {
			continue
		}
		switch {
		case !found,
			best.State == machine.StateTombstoned && r.State != machine.StateTombstoned,
			(best.State == machine.StateTombstoned) == (r.State == machine.StateTombstoned) && r.CreatedAt.After(best.CreatedAt):
			best, found = r, true
		}
	}
	return best, found, nil
}
